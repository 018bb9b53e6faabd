//===- HostLowerWindowCollectivesPass.cpp - Compiled collectives on the host //
//
// Writes out the protocol of kiln.window_collective (KilnOps.td) for one
// host workgroup: scalar loops that LLVM vectorizes, LLVM atomics with
// release/acquire ordering at system scope for the flags, and a bounded,
// yielding wait.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "kiln/Dialect/Kiln/KilnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_HOSTLOWERWINDOWCOLLECTIVESPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

// Status codes the kernel returns (documented in host_abi.h).
constexpr int32_t kStatusNotInPeerTable = 2;
constexpr int32_t kStatusPeerTimeout = 3;
// A peer that has not signalled after this long failed or runs another
// program: the wait gives up with kStatusPeerTimeout.
constexpr int64_t kWaitTimeoutSeconds = 120;
// Polls between sched_yield calls, and between clock reads (powers of two).
constexpr int64_t kPollsPerYield = 64;
constexpr int64_t kPollsPerClockRead = 4096;

class HostWindowCollectiveLowering {
public:
  HostWindowCollectiveLowering(WindowCollectiveOp op, OpBuilder &b)
      : op(op), b(b), loc(op.getLoc()), ranks(op.getRanks()),
        count(op.getCount()),
        element(cast<MemRefType>(op.getSend().getType()).getElementType()) {}

  // Emits the protocol for workgroup `workgroup` before `op`; returns the
  // i32 status.
  Value build(Value workgroup);

private:
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value i64(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  }
  Value i32(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }
  Value toI64(Value indexValue) {
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), indexValue);
  }
  // The address of a memref binding, as an i64 and as a pointer.
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
  // Rank r's data (r < ranks) or signals (ranks <= r) address from the
  // peer table.
  Value peerEntry(Value entry) {
    return memref::LoadOp::create(b, loc, op.getPeers(), entry);
  }
  func::FuncOp declareLibc(StringRef name, FunctionType type);

  Value findRank(Value signalsAddress);
  void waitForPeers(Value flags, Value epoch, Value start, Value workgroup,
                    Value status, Value result);
  Value combine(Value acc, Value next);

  WindowCollectiveOp op;
  OpBuilder &b;
  Location loc;
  int64_t ranks, count;
  Type element;
};

func::FuncOp HostWindowCollectiveLowering::declareLibc(StringRef name,
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
Value HostWindowCollectiveLowering::findRank(Value signalsAddress) {
  auto loop = scf::ForOp::create(b, loc, index(0), index(ranks), index(1),
                                 ValueRange{index(ranks)});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value peer = loop.getInductionVar();
  Value entry = peerEntry(arith::AddIOp::create(b, loc, peer, index(ranks)));
  Value mine = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, entry,
                                     signalsAddress);
  scf::YieldOp::create(b, loc,
                       ValueRange{arith::SelectOp::create(
                           b, loc, mine, peer, loop.getRegionIterArg(0))});
  return loop.getResult(0);
}

Value HostWindowCollectiveLowering::combine(Value acc, Value next) {
  Type type = acc.getType();
  bool isFloat = isa<FloatType>(type);
  switch (op.getReduction()) {
  case ReductionKind::Sum:
  case ReductionKind::Avg:
    if (isFloat)
      return arith::AddFOp::create(b, loc, acc, next);
    if (type.isInteger(1))
      return arith::OrIOp::create(b, loc, acc, next);
    return arith::AddIOp::create(b, loc, acc, next);
  case ReductionKind::Prod:
    if (isFloat)
      return arith::MulFOp::create(b, loc, acc, next);
    if (type.isInteger(1))
      return arith::AndIOp::create(b, loc, acc, next);
    return arith::MulIOp::create(b, loc, acc, next);
  case ReductionKind::Min:
    if (isFloat)
      return arith::MinimumFOp::create(b, loc, acc, next);
    if (type.isInteger(1))
      return arith::AndIOp::create(b, loc, acc, next);
    return arith::MinSIOp::create(b, loc, acc, next);
  case ReductionKind::Max:
    if (isFloat)
      return arith::MaximumFOp::create(b, loc, acc, next);
    if (type.isInteger(1))
      return arith::OrIOp::create(b, loc, acc, next);
    return arith::MaxSIOp::create(b, loc, acc, next);
  case ReductionKind::None:
    break;
  }
  llvm_unreachable("all_reduce has a reduction (verified)");
}

Value HostWindowCollectiveLowering::build(Value workgroup) {
  MLIRContext *context = b.getContext();
  Type i64Type = b.getI64Type();
  Type i32Type = b.getI32Type();
  int64_t workgroups = op.getWorkgroups();
  int64_t chunk = op.getChunk();

  Value signalsAddress = addressOf(op.getSignals());
  Value rank = findRank(signalsAddress);
  Value found = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, rank,
                                      index(ranks));
  auto ifFound = scf::IfOp::create(b, loc, TypeRange{i32Type}, found,
                                   /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifFound.getElseRegion().front());
    scf::YieldOp::create(b, loc, ValueRange{i32(kStatusNotInPeerTable)});
  }
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifFound.getThenRegion().front());

  // This call's epoch: the workgroup's counter, plus one.
  Value counterSlot =
      arith::AddIOp::create(b, loc, index(workgroups * ranks), workgroup);
  Value epoch = arith::AddIOp::create(
      b, loc, memref::LoadOp::create(b, loc, op.getSignals(), counterSlot),
      i64(1));
  memref::StoreOp::create(b, loc, epoch, op.getSignals(), counterSlot);
  Value half = arith::MulIOp::create(
      b, loc,
      arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                 arith::AndIOp::create(b, loc, epoch, i64(1))),
      index(count));

  // The workgroup's chunk [begin, end) into this half of the own window.
  Value begin = arith::MulIOp::create(b, loc, workgroup, index(chunk));
  Value end = arith::MinSIOp::create(
      b, loc, arith::AddIOp::create(b, loc, begin, index(chunk)), index(count));
  {
    auto copy = scf::ForOp::create(b, loc, begin, end, index(1));
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(copy.getBody());
    Value i = copy.getInductionVar();
    Value value = memref::LoadOp::create(b, loc, op.getSend(), i);
    memref::StoreOp::create(b, loc, value, op.getData(),
                            ValueRange{arith::AddIOp::create(b, loc, half, i)});
  }

  // Release: the copy above is visible to any rank that acquires the flag.
  Value ownSlot = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, workgroup, index(ranks)), rank);
  {
    auto signal = scf::ForOp::create(b, loc, index(0), index(ranks), index(1));
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(signal.getBody());
    Value peerSignals = pointer(peerEntry(
        arith::AddIOp::create(b, loc, signal.getInductionVar(), index(ranks))));
    LLVM::StoreOp::create(b, loc, epoch,
                          elementPointer(peerSignals, i64Type, ownSlot),
                          /*alignment=*/8, /*isVolatile=*/false,
                          /*isNonTemporal=*/false, /*isInvariantGroup=*/false,
                          LLVM::AtomicOrdering::release);
  }

  // Acquire: wait for every peer's epoch in the own flags.
  auto timeType = FunctionType::get(
      context, {LLVM::LLVMPointerType::get(context)}, {i64Type});
  func::FuncOp timeFn = declareLibc("time", timeType);
  func::FuncOp yieldFn =
      declareLibc("sched_yield", FunctionType::get(context, {}, {i32Type}));
  Value null =
      LLVM::ZeroOp::create(b, loc, LLVM::LLVMPointerType::get(context));
  Value start =
      func::CallOp::create(b, loc, timeFn, ValueRange{null}).getResult(0);
  Value flags = pointer(signalsAddress);
  auto wait = scf::ForOp::create(b, loc, index(0), index(ranks), index(1),
                                 ValueRange{i32(0)});
  {
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(wait.getBody());
    Value flag = elementPointer(
        flags, i64Type,
        arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, workgroup, index(ranks)),
            wait.getInductionVar()));
    // Polls while the flag is behind the epoch; the poll count turns
    // negative once the clock says the wait timed out.
    auto poll =
        scf::WhileOp::create(b, loc, TypeRange{i64Type}, ValueRange{i64(0)});
    Block *before = b.createBlock(&poll.getBefore(), {}, {i64Type}, {loc});
    Value polls = before->getArgument(0);
    Value seen = LLVM::LoadOp::create(
        b, loc, i64Type, flag, /*alignment=*/8, /*isVolatile=*/false,
        /*isNonTemporal=*/false, /*isInvariant=*/false,
        /*isInvariantGroup=*/false, LLVM::AtomicOrdering::acquire);
    Value behind = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::slt,
        arith::SubIOp::create(b, loc, seen, epoch), i64(0));
    Value live =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, polls, i64(0));
    scf::ConditionOp::create(
        b, loc, arith::AndIOp::create(b, loc, behind, live), ValueRange{polls});
    Block *after = b.createBlock(&poll.getAfter(), {}, {i64Type}, {loc});
    Value next = arith::AddIOp::create(b, loc, after->getArgument(0), i64(1));
    auto every = [&](int64_t period) {
      return arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::eq,
          arith::AndIOp::create(b, loc, next, i64(period - 1)), i64(0));
    };
    auto yieldNow = scf::IfOp::create(b, loc, every(kPollsPerYield));
    {
      OpBuilder::InsertionGuard ifGuard(b);
      b.setInsertionPointToStart(&yieldNow.getThenRegion().front());
      func::CallOp::create(b, loc, yieldFn, ValueRange{});
    }
    auto readClock =
        scf::IfOp::create(b, loc, TypeRange{i64Type}, every(kPollsPerClockRead),
                          /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard ifGuard(b);
      b.setInsertionPointToStart(&readClock.getThenRegion().front());
      Value now =
          func::CallOp::create(b, loc, timeFn, ValueRange{null}).getResult(0);
      Value expired = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::sgt,
          arith::SubIOp::create(b, loc, now, start), i64(kWaitTimeoutSeconds));
      scf::YieldOp::create(
          b, loc,
          ValueRange{arith::SelectOp::create(b, loc, expired, i64(-1), next)});
      b.setInsertionPointToStart(&readClock.getElseRegion().front());
      scf::YieldOp::create(b, loc, ValueRange{next});
    }
    scf::YieldOp::create(b, loc, readClock.getResults());
    b.setInsertionPointAfter(poll);
    Value timedOut = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                           poll.getResult(0), i64(0));
    scf::YieldOp::create(b, loc,
                         ValueRange{arith::SelectOp::create(
                             b, loc, timedOut, i32(kStatusPeerTimeout),
                             wait.getRegionIterArg(0))});
  }
  Value status = wait.getResult(0);

  // Every rank's chunk, read from its window data.
  Value complete =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, status, i32(0));
  auto ifComplete = scf::IfOp::create(b, loc, complete);
  {
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPointToStart(&ifComplete.getThenRegion().front());
    SmallVector<Value> peerData;
    for (int64_t r = 0; r < ranks; ++r)
      peerData.push_back(pointer(peerEntry(index(r))));
    auto loadFrom = [&](int64_t r, Value i) -> Value {
      return LLVM::LoadOp::create(
          b, loc, element,
          elementPointer(peerData[r], element,
                         arith::AddIOp::create(b, loc, half, i)));
    };
    auto loop = scf::ForOp::create(b, loc, begin, end, index(1));
    b.setInsertionPointToStart(loop.getBody());
    Value i = loop.getInductionVar();
    if (op.getKind() == CollectiveKind::AllGather) {
      for (int64_t r = 0; r < ranks; ++r)
        memref::StoreOp::create(
            b, loc, loadFrom(r, i), op.getRecv(),
            ValueRange{arith::AddIOp::create(b, loc, i, index(r * count))});
    } else {
      // f16/bf16 accumulate in f32, rounding once; ranks in order 0..N-1.
      auto floatType = dyn_cast<FloatType>(element);
      bool widen = floatType && floatType.getWidth() < 32;
      auto load = [&](int64_t r) -> Value {
        Value v = loadFrom(r, i);
        return widen ? arith::ExtFOp::create(b, loc, b.getF32Type(), v)
                           .getResult()
                     : v;
      };
      Value acc = load(0);
      for (int64_t r = 1; r < ranks; ++r)
        acc = combine(acc, load(r));
      if (op.getReduction() == ReductionKind::Avg)
        acc = arith::DivFOp::create(
            b, loc, acc,
            arith::ConstantOp::create(
                b, loc, b.getFloatAttr(acc.getType(), double(ranks))));
      if (widen)
        acc = arith::TruncFOp::create(b, loc, element, acc);
      memref::StoreOp::create(b, loc, acc, op.getRecv(), i);
    }
  }
  scf::YieldOp::create(b, loc, ValueRange{status});
  return ifFound.getResult(0);
}

struct HostLowerWindowCollectivesPass
    : public kiln::impl::HostLowerWindowCollectivesPassBase<
          HostLowerWindowCollectivesPass> {
  void runOnOperation() override {
    // A module pass: the kernels call libc functions declared in the module.
    for (auto func : llvm::to_vector(getOperation().getOps<func::FuncOp>()))
      if (failed(lowerKernel(func)))
        return signalPassFailure();
  }

  LogicalResult lowerKernel(func::FuncOp func) {
    SmallVector<WindowCollectiveOp> ops;
    func.walk([&](WindowCollectiveOp op) { ops.push_back(op); });
    if (ops.empty())
      return success();
    if (ops.size() != 1 || !func.getBody().hasOneBlock() ||
        func.getNumResults() != 0)
      return func.emitError() << "a compiled collective's kernel holds one "
                                 "kiln.window_collective and returns nothing";
    WindowCollectiveOp op = ops.front();
    MLIRContext *ctx = &getContext();

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
    func->setAttr(kWorkgroupCountAttrName,
                  DenseI64ArrayAttr::get(ctx, {op.getWorkgroups(), 1, 1}));

    OpBuilder b(op);
    Value status =
        HostWindowCollectiveLowering(op, b).build(func.getArgument(firstId));
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    ret->setOperands(ValueRange{status});
    op.erase();
    return success();
  }
};

} // namespace
