//===- LowerWindowCollectivesPass.cpp - Compiled collectives' kernels -----===//
//
// Writes out the protocol of kiln.window_collective (KilnOps.td) for one
// workgroup, on the host (one thread) and on GPUs (a workgroup of threads),
// from one description; only the ids, the wait and the failure differ:
//
// - host: workgroup ids are kernel arguments; the wait yields its thread
//   (sched_yield) and reads the clock (time); a timeout is the kernel's i32
//   status;
// - GPU: gpu.block_id / gpu.thread_id; threads share the copy, the signals,
//   the polling and the reduction, with workgroup barriers between the
//   phases; the clock is llvm.readsteadycounter (globaltimer on NVIDIA,
//   s_memrealtime / REALTIME on AMD); a timeout traps.
//
// Flags are LLVM atomics at system scope (the default syncscope): release
// stores and acquire loads. On GPUs a workgroup barrier precedes the
// signals and follows the wait. On NVIDIA that is all the ordering the
// protocol needs (PTX's model: bar.sync orders every thread's copy before
// the signalling threads' release stores, which are cumulative, so a peer
// that acquires the flag sees the whole workgroup's writes; the polling
// threads' acquire loads come before the barrier that orders them before
// every thread's reads of the peers' data). Fences in every thread around
// the barriers cost 25-45% of a call on an H200 and are gone there. On AMD
// every thread still fences at system scope (release before the first
// barrier, acquire after the second): gfx942's workgroup barrier does not
// wait for the other waves' stores, and whether the signalling wave's L2
// writeback then covers them rests on the backend's reading of the memory
// model, which no AMD hardware here can check.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "kiln/Dialect/Kiln/KilnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_HOSTLOWERWINDOWCOLLECTIVESPASS
#define GEN_PASS_DEF_GPULOWERWINDOWCOLLECTIVESPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

// Host status codes (documented in host_abi.h).
constexpr int32_t kStatusNotInPeerTable = 2;
constexpr int32_t kStatusPeerTimeout = 3;
constexpr int32_t kStatusAborted = 4;
// How a poll ended without the flag (negative poll counts).
constexpr int64_t kTimedOut = -1;
constexpr int64_t kAborted = -2;
// A peer that has not signalled after this long failed or runs another
// program: the wait gives up.
constexpr int64_t kWaitTimeoutSeconds = 120;
// Host: polls between sched_yield calls, and between clock reads. GPU: polls
// between clock reads. Powers of two.
constexpr int64_t kPollsPerYield = 64;
constexpr int64_t kPollsPerClockRead = 4096;
constexpr int64_t kGPUPollsPerClockRead = 1024;
// Threads of a GPU workgroup.
constexpr int64_t kGPUWorkgroupSize = 256;

enum class Flavor { Host, ROCDL, NVVM };

class WindowCollectiveLowering {
public:
  WindowCollectiveLowering(WindowCollectiveOp op, OpBuilder &b, Flavor flavor)
      : op(op), b(b), loc(op.getLoc()), flavor(flavor), ranks(op.getRanks()),
        count(op.getCount()), parts(op.getParts()),
        partCount(op.getPartCount()),
        element(cast<MemRefType>(op.getSend().getType()).getElementType()) {}

  // Emits the protocol before `op` for workgroup `workgroup` and, on GPUs,
  // thread `thread` of kGPUWorkgroupSize; returns the i32 status on the host
  // (null on GPUs, which trap instead).
  Value build(Value workgroup, Value thread);

private:
  bool isHost() const { return flavor == Flavor::Host; }
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value i64(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  }
  Value i32(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value toI64(Value indexValue) {
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), indexValue);
  }
  // The address of a memref binding, as an i64.
  Value addressOf(Value memref) {
    return toI64(
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref));
  }
  Value pointer(Value address) {
    return LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext()), address);
  }
  // &base[position] for elements of `type`.
  Value elementPointer(Value base, Type type, Value position) {
    return LLVM::GEPOp::create(b, loc, base.getType(), type, base,
                               ArrayRef<LLVM::GEPArg>{toI64(position)});
  }
  // Peer-table entry `entry`: rank r's data (r < ranks) or signals (ranks +
  // r) address.
  Value peerEntry(Value entry) { return load64(op.getPeers(), entry); }
  // 64-bit slots of the signals and the peer table, 8-byte aligned (the
  // driver allocates them so): one load or store each.
  Value load64(Value memref, Value position) {
    return memref::LoadOp::create(b, loc, memref, position,
                                  /*nontemporal=*/false, llvm::Align(8));
  }
  void store64(Value value, Value memref, Value position) {
    memref::StoreOp::create(b, loc, value, memref, position,
                            /*nontemporal=*/false, llvm::Align(8));
  }
  // A loop over [begin, end) shared by the workgroup's threads, each
  // taking `width` consecutive elements per step.
  scf::ForOp sharedLoop(Value begin, Value end, Value thread, int64_t threads,
                        int64_t width = 1) {
    return scf::ForOp::create(b, loc, add(begin, mul(thread, index(width))),
                              end, index(threads * width));
  }
  // `width` elements of memref `buffer` at `position` (one element when
  // `width` is 1, else a vector of them, at the alignment of its size).
  Value loadElements(Value buffer, Value position, int64_t width) {
    if (width == 1)
      return memref::LoadOp::create(b, loc, buffer, position);
    return vector::LoadOp::create(b, loc, VectorType::get({width}, element),
                                  buffer, position, /*nontemporal=*/false,
                                  llvm::Align(width * elementBytes()));
  }
  void storeElements(Value value, Value buffer, Value position,
                     int64_t width) {
    if (width == 1) {
      memref::StoreOp::create(b, loc, value, buffer, position);
      return;
    }
    vector::StoreOp::create(b, loc, value, buffer, position,
                            /*nontemporal=*/false,
                            llvm::Align(width * elementBytes()));
  }
  int64_t elementBytes() const { return element.getIntOrFloatBitWidth() / 8; }
  int64_t vectorWidth();
  Value cmp(arith::CmpIPredicate predicate, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, predicate, x, y);
  }
  void barrier() {
    if (!isHost())
      gpu::BarrierOp::create(b, loc);
  }
  // A system-scope fence in every thread, on AMD only (see the file
  // comment).
  void fenceOnAMD(LLVM::AtomicOrdering ordering) {
    if (flavor == Flavor::ROCDL)
      LLVM::FenceOp::create(b, loc, ordering, StringRef());
  }
  func::FuncOp declareLibc(StringRef name, FunctionType type);

  Value findRank(Value signalsAddress);
  // Polls `flag` until it reaches `epoch`; returns the poll count, negative
  // when the wait ended without it: kTimedOut or kAborted.
  Value poll(Value flag, Value epoch, Value start, Value abortWord);
  Value combine(Value acc, Value next);
  Value now();
  // Runs `body(i)` for the workgroup's chunk [begin, end) of a part, shared
  // by the threads, `width` elements a step.
  void forChunk(Value begin, Value end, function_ref<void(Value)> body);
  // Runs `body()` where element `i` of part `part` exists (the last parts
  // of a two-shot all_reduce are shorter or empty).
  void ifInPart(int64_t part, Value i, function_ref<void()> body);
  // Every rank's window data pointer (read before a loop: stores in the
  // loop could alias the peer table for all LLVM knows).
  SmallVector<Value> peerData();
  // `width` elements at `position` of a rank's window data.
  Value loadPeer(Value data, Value position);
  // Reduces every rank's window data at `source + i` in rank order 0..N-1
  // (f16/bf16 in f32, rounded once) into `dest[target + i]`, over the
  // chunk [begin, end).
  void reducePeers(Value source, Value end, Value dest, Value target);
  // Gathers rank r's window data at `source(r) + i` into
  // `recv[target(r) + i]` over the chunk, for every r (`r`'s part only when
  // `inParts`).
  void gatherPeers(function_ref<Value(int64_t)> source,
                   function_ref<Value(int64_t)> target, bool inParts);
  // Signals this rank's epoch into flag `phase` of every peer, waits for
  // every peer's, and runs `then` when all arrived; returns the host status
  // (`then`'s, or the failed wait's), null on GPUs (they trap on failure).
  Value exchange(int64_t phase, function_ref<Value()> then);

  WindowCollectiveOp op;
  OpBuilder &b;
  Location loc;
  Flavor flavor;
  int64_t ranks, count, parts, partCount, width = 1, threads = 1;
  Type element;
  func::FuncOp timeFn, yieldFn;
  // Set by build: the workgroup and thread, this rank's index, the epoch,
  // the workgroup's chunk of a part and the own signals' address.
  Value workgroup, thread, rank, epoch, begin, end, signalsAddress;
};

// GPU threads move 16 bytes per access where every range a thread touches
// splits into such vectors: element sizes of whole bytes (not i1), the
// count, the parts and the workgroups' chunk multiples of the vector.
// Bindings and window memory are 16-byte aligned (host_abi.h, the drivers). The
// host form stays scalar: one thread per workgroup walks its chunk
// contiguously, which LLVM vectorizes itself.
int64_t WindowCollectiveLowering::vectorWidth() {
  if (isHost() || !element.isIntOrFloat() ||
      element.getIntOrFloatBitWidth() % 8 != 0 || elementBytes() > 16)
    return 1;
  int64_t width = 16 / elementBytes();
  if (count % width != 0 || partCount % width != 0 ||
      op.getChunk() % width != 0)
    return 1;
  return width;
}

func::FuncOp WindowCollectiveLowering::declareLibc(StringRef name,
                                                   FunctionType type) {
  auto module = op->getParentOfType<ModuleOp>();
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto decl = func::FuncOp::create(b, loc, name, type);
  decl.setPrivate();
  return decl;
}

// The index of the peer-table entry that holds this rank's own signals
// address, or `ranks` when there is none.
Value WindowCollectiveLowering::findRank(Value signalsAddress) {
  auto loop = scf::ForOp::create(b, loc, index(0), index(ranks), index(1),
                                 ValueRange{index(ranks)});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value peer = loop.getInductionVar();
  Value entry = peerEntry(add(peer, index(ranks)));
  Value mine = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, entry,
                                     signalsAddress);
  scf::YieldOp::create(b, loc,
                       ValueRange{arith::SelectOp::create(
                           b, loc, mine, peer, loop.getRegionIterArg(0))});
  return loop.getResult(0);
}

Value WindowCollectiveLowering::poll(Value flag, Value epoch, Value start,
                                     Value abortWord) {
  Type i64Type = b.getI64Type();
  // The poll count turns negative once the clock says the wait timed out.
  auto loop =
      scf::WhileOp::create(b, loc, TypeRange{i64Type}, ValueRange{i64(0)});
  OpBuilder::InsertionGuard guard(b);
  Block *before = b.createBlock(&loop.getBefore(), {}, {i64Type}, {loc});
  Value polls = before->getArgument(0);
  Value seen = LLVM::LoadOp::create(
      b, loc, i64Type, flag, /*alignment=*/8, /*isVolatile=*/false,
      /*isNonTemporal=*/false, /*isInvariant=*/false,
      /*isInvariantGroup=*/false, LLVM::AtomicOrdering::acquire);
  Value behind =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                            arith::SubIOp::create(b, loc, seen, epoch), i64(0));
  Value live =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, polls, i64(0));
  scf::ConditionOp::create(b, loc, arith::AndIOp::create(b, loc, behind, live),
                           ValueRange{polls});
  Block *after = b.createBlock(&loop.getAfter(), {}, {i64Type}, {loc});
  Value next = add(after->getArgument(0), i64(1));
  auto every = [&](int64_t period) {
    return arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::AndIOp::create(b, loc, next, i64(period - 1)), i64(0));
  };
  if (isHost()) {
    auto yieldNow = scf::IfOp::create(b, loc, every(kPollsPerYield));
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPointToStart(&yieldNow.getThenRegion().front());
    func::CallOp::create(b, loc, yieldFn, ValueRange{});
  }
  auto readClock = scf::IfOp::create(
      b, loc, TypeRange{i64Type},
      every(isHost() ? kPollsPerClockRead : kGPUPollsPerClockRead),
      /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPointToStart(&readClock.getThenRegion().front());
    // The host clock counts seconds, globaltimer nanoseconds, and AMD's
    // realtime counter runs at 100 MHz.
    int64_t limit =
        kWaitTimeoutSeconds * (isHost()                 ? 1
                               : flavor == Flavor::NVVM ? 1000000000
                                                        : 100000000);
    Value clock = now();
    Value expired = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::sgt,
        arith::SubIOp::create(b, loc, clock, start), i64(limit));
    // A rank that released its window sets the group's abort word.
    Value abortValue = LLVM::LoadOp::create(
        b, loc, i64Type, abortWord, /*alignment=*/8, /*isVolatile=*/false,
        /*isNonTemporal=*/false, /*isInvariant=*/false,
        /*isInvariantGroup=*/false, LLVM::AtomicOrdering::acquire);
    Value aborted = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                          abortValue, i64(0));
    Value ended =
        arith::SelectOp::create(b, loc, expired, i64(kTimedOut), next);
    scf::YieldOp::create(b, loc,
                         ValueRange{arith::SelectOp::create(
                             b, loc, aborted, i64(kAborted), ended)});
    b.setInsertionPointToStart(&readClock.getElseRegion().front());
    scf::YieldOp::create(b, loc, ValueRange{next});
  }
  scf::YieldOp::create(b, loc, readClock.getResults());
  b.setInsertionPointAfter(loop);
  return loop.getResult(0);
}

Value WindowCollectiveLowering::combine(Value acc, Value next) {
  Type type = getElementTypeOrSelf(acc.getType());
  bool isFloat = isa<FloatType>(type);
  bool isBool = type.isInteger(1);
  switch (op.getReduction()) {
  case ReductionKind::Sum:
  case ReductionKind::Avg:
    if (isFloat)
      return arith::AddFOp::create(b, loc, acc, next);
    if (isBool)
      return arith::OrIOp::create(b, loc, acc, next);
    return arith::AddIOp::create(b, loc, acc, next);
  case ReductionKind::Prod:
    if (isFloat)
      return arith::MulFOp::create(b, loc, acc, next);
    if (isBool)
      return arith::AndIOp::create(b, loc, acc, next);
    return arith::MulIOp::create(b, loc, acc, next);
  case ReductionKind::Min:
    if (isFloat)
      return arith::MinimumFOp::create(b, loc, acc, next);
    if (isBool)
      return arith::AndIOp::create(b, loc, acc, next);
    return arith::MinSIOp::create(b, loc, acc, next);
  case ReductionKind::Max:
    if (isFloat)
      return arith::MaximumFOp::create(b, loc, acc, next);
    if (isBool)
      return arith::OrIOp::create(b, loc, acc, next);
    return arith::MaxSIOp::create(b, loc, acc, next);
  case ReductionKind::And:
    return arith::AndIOp::create(b, loc, acc, next);
  case ReductionKind::Or:
    return arith::OrIOp::create(b, loc, acc, next);
  case ReductionKind::Xor:
    return arith::XOrIOp::create(b, loc, acc, next);
  case ReductionKind::None:
    break;
  }
  llvm_unreachable("reducing collectives have a reduction (verified)");
}

Value WindowCollectiveLowering::now() {
  if (isHost())
    return func::CallOp::create(
               b, loc, timeFn,
               ValueRange{LLVM::ZeroOp::create(
                   b, loc, LLVM::LLVMPointerType::get(b.getContext()))})
        .getResult(0);
  return LLVM::CallIntrinsicOp::create(
             b, loc, b.getI64Type(), b.getStringAttr("llvm.readsteadycounter"),
             ValueRange{})
      .getResult(0);
}

void WindowCollectiveLowering::forChunk(Value from, Value to,
                                        function_ref<void(Value)> body) {
  auto loop = sharedLoop(from, to, thread, threads, width);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  body(loop.getInductionVar());
}

void WindowCollectiveLowering::ifInPart(int64_t part, Value i,
                                        function_ref<void()> body) {
  // Vectors never straddle the end: count and parts split into them.
  if ((part + 1) * partCount <= count)
    return body();
  auto inside =
      scf::IfOp::create(b, loc,
                        cmp(arith::CmpIPredicate::slt,
                            add(index(part * partCount), i), index(count)));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&inside.getThenRegion().front());
  body();
}

SmallVector<Value> WindowCollectiveLowering::peerData() {
  SmallVector<Value> data;
  for (int64_t r = 0; r < ranks; ++r)
    data.push_back(pointer(peerEntry(index(r))));
  return data;
}

Value WindowCollectiveLowering::loadPeer(Value data, Value position) {
  Type type = width == 1 ? element : VectorType::get({width}, element);
  return LLVM::LoadOp::create(b, loc, type,
                              elementPointer(data, element, position),
                              /*alignment=*/unsigned(width * elementBytes()));
}

void WindowCollectiveLowering::reducePeers(Value source, Value to, Value dest,
                                           Value target) {
  auto floatType = dyn_cast<FloatType>(element);
  bool widen = floatType && floatType.getWidth() < 32;
  auto typeOf = [&](Type scalar) -> Type {
    return width == 1 ? scalar : VectorType::get({width}, scalar);
  };
  SmallVector<Value> data = peerData();
  forChunk(begin, to, [&](Value i) {
    Value at = add(source, i);
    auto load = [&](int64_t r) -> Value {
      Value v = loadPeer(data[r], at);
      return widen ? arith::ExtFOp::create(b, loc, typeOf(b.getF32Type()), v)
                         .getResult()
                   : v;
    };
    Value acc = load(0);
    for (int64_t r = 1; r < ranks; ++r)
      acc = combine(acc, load(r));
    if (op.getReduction() == ReductionKind::Avg) {
      Type accElement = getElementTypeOrSelf(acc.getType());
      TypedAttr divisor = b.getFloatAttr(accElement, double(ranks));
      if (auto vectorType = dyn_cast<VectorType>(acc.getType()))
        divisor = DenseElementsAttr::get(vectorType, divisor);
      acc = arith::DivFOp::create(b, loc, acc,
                                  arith::ConstantOp::create(b, loc, divisor));
    }
    if (widen)
      acc = arith::TruncFOp::create(b, loc, typeOf(element), acc);
    storeElements(acc, dest, add(target, i), width);
  });
}

void WindowCollectiveLowering::gatherPeers(function_ref<Value(int64_t)> source,
                                           function_ref<Value(int64_t)> target,
                                           bool inParts) {
  SmallVector<Value> data = peerData();
  forChunk(begin, end, [&](Value i) {
    for (int64_t r = 0; r < ranks; ++r) {
      auto move = [&] {
        storeElements(loadPeer(data[r], add(source(r), i)), op.getRecv(),
                      add(i, target(r)), width);
      };
      if (inParts)
        ifInPart(r, i, move);
      else
        move();
    }
  });
}

Value WindowCollectiveLowering::exchange(int64_t phase,
                                         function_ref<Value()> then) {
  Type i64Type = b.getI64Type();
  int64_t workgroups = op.getWorkgroups();
  // Release: the barrier orders the workgroup's writes before the signalling
  // threads' release stores, which are cumulative: a rank that acquires the
  // flag sees every thread's writes.
  fenceOnAMD(LLVM::AtomicOrdering::release);
  barrier();
  Value flagBase =
      add(index(phase * workgroups * ranks), mul(workgroup, index(ranks)));
  Value ownSlot = add(flagBase, rank);
  {
    auto signal = sharedLoop(index(0), index(ranks), thread, threads);
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(signal.getBody());
    Value peerSignals =
        pointer(peerEntry(add(signal.getInductionVar(), index(ranks))));
    LLVM::StoreOp::create(b, loc, epoch,
                          elementPointer(peerSignals, i64Type, ownSlot),
                          /*alignment=*/8, /*isVolatile=*/false,
                          /*isNonTemporal=*/false, /*isInvariantGroup=*/false,
                          LLVM::AtomicOrdering::release);
  }
  // Acquire: wait for every peer's epoch in the own flags.
  Value start = now();
  Value flags = pointer(signalsAddress);
  Value abortWord = pointer(peerEntry(index(2 * ranks)));
  // The wait's outcome: 0, or how the first poll that ended without its
  // flag ended (kTimedOut, kAborted); later polls end at once the same way.
  auto wait = scf::ForOp::create(b, loc, thread, index(ranks), index(threads),
                                 ValueRange{i64(0)});
  {
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(wait.getBody());
    Value flag =
        elementPointer(flags, i64Type, add(flagBase, wait.getInductionVar()));
    Value polls = poll(flag, epoch, start, abortWord);
    Value outcome = wait.getRegionIterArg(0);
    Value endedNow = cmp(arith::CmpIPredicate::slt, polls, i64(0));
    Value first = cmp(arith::CmpIPredicate::eq, outcome, i64(0));
    scf::YieldOp::create(
        b, loc,
        ValueRange{arith::SelectOp::create(
            b, loc, arith::AndIOp::create(b, loc, endedNow, first), polls,
            outcome)});
  }
  Value outcome = wait.getResult(0);
  Value failed = cmp(arith::CmpIPredicate::ne, outcome, i64(0));
  if (isHost()) {
    Value aborted = cmp(arith::CmpIPredicate::eq, outcome, i64(kAborted));
    Value status = arith::SelectOp::create(
        b, loc, failed,
        arith::SelectOp::create(b, loc, aborted, i32(kStatusAborted),
                                i32(kStatusPeerTimeout)),
        i32(0));
    auto ifComplete =
        scf::IfOp::create(b, loc, TypeRange{b.getI32Type()},
                          cmp(arith::CmpIPredicate::eq, outcome, i64(0)),
                          /*withElseRegion=*/true);
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPointToStart(&ifComplete.getThenRegion().front());
    scf::YieldOp::create(b, loc, ValueRange{then()});
    b.setInsertionPointToStart(&ifComplete.getElseRegion().front());
    scf::YieldOp::create(b, loc, ValueRange{status});
    return ifComplete.getResult(0);
  }
  // A peer that never signals ends the kernel with an error on the device.
  {
    auto ifFailed = scf::IfOp::create(b, loc, failed);
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPointToStart(&ifFailed.getThenRegion().front());
    LLVM::Trap::create(b, loc);
  }
  // Acquire: the polling threads' acquire loads saw the peers' flags; the
  // barrier orders them before every thread's reads of the peers' data.
  barrier();
  fenceOnAMD(LLVM::AtomicOrdering::acquire);
  return then();
}

Value WindowCollectiveLowering::build(Value workgroupId, Value threadId) {
  MLIRContext *context = b.getContext();
  Type i64Type = b.getI64Type();
  Type i32Type = b.getI32Type();
  int64_t workgroups = op.getWorkgroups();
  int64_t chunk = op.getChunk();
  workgroup = workgroupId;
  width = vectorWidth();
  if (isHost()) {
    thread = index(0);
    threads = 1;
    timeFn = declareLibc(
        "time", FunctionType::get(
                    context, {LLVM::LLVMPointerType::get(context)}, {i64Type}));
    yieldFn =
        declareLibc("sched_yield", FunctionType::get(context, {}, {i32Type}));
  } else {
    thread = threadId;
    threads = kGPUWorkgroupSize;
  }

  signalsAddress = addressOf(op.getSignals());
  rank = findRank(signalsAddress);
  Value found = cmp(arith::CmpIPredicate::ult, rank, index(ranks));
  auto ifFound =
      isHost() ? scf::IfOp::create(b, loc, TypeRange{i32Type}, found,
                                   /*withElseRegion=*/true)
               : scf::IfOp::create(b, loc, found, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifFound.getElseRegion().front());
  if (isHost())
    scf::YieldOp::create(b, loc, ValueRange{i32(kStatusNotInPeerTable)});
  else
    LLVM::Trap::create(b, loc);
  b.setInsertionPointToStart(&ifFound.getThenRegion().front());

  // This call's epoch: the workgroup's counter, plus one (every thread reads
  // it before one writes it back).
  Value counterSlot =
      add(index(op.getPhases() * workgroups * ranks), workgroup);
  epoch = add(load64(op.getSignals(), counterSlot), i64(1));
  barrier();
  {
    auto bump = scf::IfOp::create(
        b, loc, cmp(arith::CmpIPredicate::eq, thread, index(0)));
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPointToStart(&bump.getThenRegion().front());
    store64(epoch, op.getSignals(), counterSlot);
  }
  // One-shot: this call's half of the window data, by the epoch's parity.
  // Two-shot: the first half holds the send, the second the reduced parts.
  Value half = op.getTwoShot()
                   ? index(0)
                   : mul(arith::IndexCastOp::create(
                             b, loc, b.getIndexType(),
                             arith::AndIOp::create(b, loc, epoch, i64(1))),
                         index(count));

  // The workgroup's chunk [begin, end) of every part, into the window.
  begin = mul(workgroup, index(chunk));
  end = arith::MinSIOp::create(b, loc, add(begin, index(chunk)),
                               index(partCount));
  forChunk(begin, end, [&](Value i) {
    for (int64_t p = 0; p < parts; ++p)
      ifInPart(p, i, [&] {
        Value at = add(index(p * partCount), i);
        storeElements(loadElements(op.getSend(), at, width), op.getData(),
                      add(half, at), width);
      });
  });

  auto ok = [&]() -> Value { return isHost() ? i32(0) : Value(); };
  Value ownPart = mul(rank, index(partCount));
  Value status = exchange(0, [&]() -> Value {
    switch (op.getKind()) {
    case CollectiveKind::AllGather:
      gatherPeers([&](int64_t) { return half; },
                  [&](int64_t r) { return index(r * count); },
                  /*inParts=*/false);
      return ok();
    case CollectiveKind::ReduceScatter:
      reducePeers(add(half, ownPart), end, op.getRecv(), index(0));
      return ok();
    default:
      break;
    }
    if (!op.getTwoShot()) {
      reducePeers(half, end, op.getRecv(), index(0));
      return ok();
    }
    // Phase 1: the own part, reduced into the second half; phase 2: every
    // rank's reduced part from there.
    Value partEnd = arith::MinSIOp::create(
        b, loc, end, arith::SubIOp::create(b, loc, index(count), ownPart));
    reducePeers(ownPart, partEnd, op.getData(), add(index(count), ownPart));
    return exchange(1, [&]() -> Value {
      gatherPeers([&](int64_t r) { return index(count + r * partCount); },
                  [&](int64_t r) { return index(r * partCount); },
                  /*inParts=*/true);
      return ok();
    });
  });
  if (isHost()) {
    scf::YieldOp::create(b, loc, ValueRange{status});
    return ifFound.getResult(0);
  }
  return {};
}

// The kernel `func` holding `op`, for one workgroup of the flavor's form.
LogicalResult lowerKernel(func::FuncOp func, Flavor flavor) {
  SmallVector<WindowCollectiveOp> ops;
  func.walk([&](WindowCollectiveOp op) { ops.push_back(op); });
  if (ops.empty())
    return success();
  if (ops.size() != 1 || !func.getBody().hasOneBlock() ||
      func.getNumResults() != 0)
    return func.emitError() << "a compiled collective's kernel holds one "
                               "kiln.window_collective and returns nothing";
  WindowCollectiveOp op = ops.front();
  MLIRContext *ctx = func.getContext();
  func->setAttr(
      kWorkgroupCountAttrName,
      DenseI64ArrayAttr::get(ctx, {int64_t(op.getWorkgroups()), 1, 1}));
  OpBuilder b(op);
  if (flavor == Flavor::Host) {
    // Workgroup ids x, y, z after the bindings, as every distributed host
    // kernel has them; the status is the kernel's result.
    unsigned firstId = func.getNumArguments();
    SmallVector<unsigned> positions(3, firstId);
    SmallVector<Type> types(3, IndexType::get(ctx));
    SmallVector<DictionaryAttr> attrs(3, DictionaryAttr::get(ctx));
    SmallVector<Location> locs(3, func.getLoc());
    if (failed(func.insertArguments(positions, types, attrs, locs)))
      return failure();
    func.setType(FunctionType::get(ctx, func.getArgumentTypes(),
                                   {IntegerType::get(ctx, 32)}));
    Value status = WindowCollectiveLowering(op, b, flavor)
                       .build(func.getArgument(firstId), Value());
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    ret->setOperands(ValueRange{status});
  } else {
    func->setAttr(kWorkgroupSizeAttrName,
                  DenseI64ArrayAttr::get(ctx, {kGPUWorkgroupSize, 1, 1}));
    Value workgroup = gpu::BlockIdOp::create(b, op.getLoc(), gpu::Dimension::x);
    Value thread = gpu::ThreadIdOp::create(b, op.getLoc(), gpu::Dimension::x);
    WindowCollectiveLowering(op, b, flavor).build(workgroup, thread);
  }
  op.erase();
  return success();
}

struct HostLowerWindowCollectivesPass
    : public kiln::impl::HostLowerWindowCollectivesPassBase<
          HostLowerWindowCollectivesPass> {
  void runOnOperation() override {
    // A module pass: the kernels call libc functions declared in the module.
    for (auto func : llvm::to_vector(getOperation().getOps<func::FuncOp>()))
      if (failed(lowerKernel(func, Flavor::Host)))
        return signalPassFailure();
  }
};

struct GPULowerWindowCollectivesPass
    : public kiln::impl::GPULowerWindowCollectivesPassBase<
          GPULowerWindowCollectivesPass> {
  using Base::Base;
  void runOnOperation() override {
    if (backend != "rocdl" && backend != "nvvm") {
      getOperation().emitError()
          << "unknown GPU backend '" << backend << "' (rocdl or nvvm)";
      return signalPassFailure();
    }
    Flavor flavor = backend == "nvvm" ? Flavor::NVVM : Flavor::ROCDL;
    for (auto func : llvm::to_vector(getOperation().getOps<func::FuncOp>()))
      if (failed(lowerKernel(func, flavor)))
        return signalPassFailure();
  }
};

} // namespace
