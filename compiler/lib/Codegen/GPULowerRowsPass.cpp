//===- GPULowerRowsPass.cpp - Row-fused workgroups with rows in registers -===//
//
// A row-fused workgroup (softmax, layernorm, RMSnorm) whose rows fit the
// threads' registers is lowered as a whole: each thread loads its chunks
// of the row once and every op reads them from registers (see "Rows in
// registers" below). Workgroups that do not fit are left to
// kiln-gpu-lower-workgroup-reductions and kiln-gpu-distribute-to-threads.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "CodegenUtils.h"
#include "GPUThreadUtils.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "llvm/ADT/StringSwitch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_GPULOWERROWSPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

//===----------------------------------------------------------------------===//
// Rows in registers
//===----------------------------------------------------------------------===//
//
// A row-fused kernel (softmax, layernorm, RMSnorm: row reductions, the
// elementwise ops between and after them, and per-row scalar ops) reads the
// same row once per op when each op is distributed on its own. When every op
// of the workgroup works on the workgroup's rows (one per workgroup, or one
// per subgroup under "subgroup") and the row fits the thread's registers,
// the ops are lowered together instead: each thread loads its chunks of the
// row once (all chunks up front, 128-bit loads), every op reads them from
// registers, and the rows' scalars (max, sum, mean) are SSA values that
// every thread of the row holds. Cross-thread traffic is left to the
// reductions (lanes by gpu.subgroup_reduce, subgroups through a few shared
// slots and one barrier each), so no barrier separates the ops, and stores
// to the workgroup's temporaries disappear.

enum class RowOpKind { Reduction, Elementwise, Scalar };

// A buffer as the row ops see it: per-row scalars are keyed by their map
// over the rows' loops alone, so that a scalar op's (d0) -> (d0) and a row
// op's (d0, d1) -> (d0) name the same values.
using RowKey = std::pair<Value, AffineMap>;

struct RowPlan {
  SmallVector<int64_t> rowSizes; // the parallel loops shared by every op
  int64_t extent = 0;            // the row's length
  int64_t span = 0;              // threads per row
  int64_t width = 1;             // consecutive elements per chunk
  int64_t chunks = 0;            // chunks per thread
  bool subgroupRows = false;
  SmallVector<RowOpKind> kinds;
  // Rows that several ops use (read from memory by several, or written by
  // one and read by a later one): held in registers from one op to the next.
  DenseSet<RowKey> heldRows;
  // Held rows loaded from memory that live in shared memory instead (see
  // "Rows staged in shared memory"), and the workgroups per processor that
  // the kernel is then budgeted for (0: no budget).
  DenseSet<RowKey> stagedRows;
  int64_t minWorkgroupsPerProcessor = 0;
};

//===----------------------------------------------------------------------===//
// Rows staged in shared memory
//===----------------------------------------------------------------------===//
//
// A thread holding its part of a long row in registers from one op to the
// next keeps it through the reductions' barriers. softmax over rows of
// 32768 f16 on 512 threads holds 64 values a thread (the exponentials, as
// f32: LLVM merges the sum's exp(x - max) with the output's), ptxas gives
// it 128 registers, and one workgroup per SM runs each row's load, reduce,
// exponentiate and store in sequence while the memory idles in between.
// Held in shared memory instead (64 KiB a row), three workgroups share an
// SM of an H100/H200 at 40 registers a thread and their phases overlap:
// 0.054 -> 0.043 ms on an H200 (docs/performance.md). The first op that
// loads such a row stores each chunk into the workgroup buffer at the
// thread's own slot; later ops read their chunks back from there (only the
// thread that wrote a slot reads it, so no barrier is needed).

struct StagingLimits {
  enum class Mode { Auto, Always, Never } mode = Mode::Auto;
  int64_t processorRegisters = 0;
  int64_t processorThreads = 0;
  int64_t processorSharedMemoryBytes = 0;
  int64_t maxSharedMemoryBytes = 0;
};

// Registers a thread needs besides the held row values (addresses, the
// op's chunk in flight, accumulators), and the fewest a budget may leave it
// (below that, ptxas spills: 32 spilled 900 bytes of the softmax above).
constexpr int64_t kWorkingRegisters = 32;
constexpr int64_t kMinRegisters = 40;
// Shared memory a row-fused workgroup uses besides the staged rows: the
// reductions' slots, 64-byte aligned.
constexpr int64_t kSlotBytesPerReduction = 256;

// Chooses the held rows to stage (and the workgroups per processor to
// budget for) by `limits`; leaves `plan` as it is when staging does not pay.
static void planStaging(RowPlan &plan, const DenseSet<RowKey> &loadedRows,
                        int64_t workgroupSize, const StagingLimits &limits) {
  using Mode = StagingLimits::Mode;
  if (limits.mode == Mode::Never || limits.processorThreads <= 0 ||
      limits.processorRegisters <= 0)
    return;
  int64_t heldValues = 0, stagedBytes = 0;
  SmallVector<RowKey> staged;
  for (const RowKey &key : plan.heldRows) {
    int64_t values = plan.chunks * plan.width;
    heldValues += values;
    int64_t bits =
        getElementTypeOrSelf(key.first.getType()).getIntOrFloatBitWidth();
    if (!loadedRows.contains(key) || plan.width == 1 || bits % 8 != 0)
      continue;
    staged.push_back(key);
    stagedBytes += values * (bits / 8) * workgroupSize;
  }
  if (staged.empty())
    return;
  int64_t reductions = llvm::count(plan.kinds, RowOpKind::Reduction);
  int64_t sharedBytes = stagedBytes + reductions * kSlotBytesPerReduction;
  if (sharedBytes > limits.maxSharedMemoryBytes)
    return;
  // NVIDIA reserves 1 KiB of an SM's shared memory per resident block.
  sharedBytes += 1024;
  int64_t byThreads = limits.processorThreads / workgroupSize;
  // Held values count as 32-bit registers each (16-bit rows are computed
  // on as f32).
  int64_t inRegisters = std::min(
      byThreads, limits.processorRegisters /
                     (workgroupSize * (heldValues + kWorkingRegisters)));
  int64_t inShared =
      std::min({byThreads, limits.processorSharedMemoryBytes / sharedBytes,
                limits.processorRegisters / (workgroupSize * kMinRegisters)});
  if (limits.mode == Mode::Auto && (inRegisters >= 2 || inShared < 2))
    return;
  plan.stagedRows.insert(staged.begin(), staged.end());
  if (inShared >= 2)
    plan.minWorkgroupsPerProcessor = inShared;
}

// The buffer that `value` is a view of.
static Value stripViews(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

// Whether `map` over the row loops (the rows' loops, then the row) reads
// along the row.
static bool readsAlongRow(AffineMap map, unsigned rowDim) {
  return llvm::any_of(map.getResults(),
                      [&](AffineExpr e) { return e.isFunctionOfDim(rowDim); });
}

static RowKey rowKey(linalg::LinalgOp op, OpOperand &operand,
                     unsigned numRowLoops) {
  AffineMap map = op.getMatchingIndexingMap(&operand);
  if (map.getNumDims() > numRowLoops && !readsAlongRow(map, numRowLoops))
    map = AffineMap::get(numRowLoops, 0, map.getResults(), op.getContext());
  return {operand.get(), map};
}

// Whether `op`'s body reads the current value of `init`.
static bool readsInit(linalg::LinalgOp op, OpOperand &init) {
  return !op.getMatchingBlockArgument(&init).use_empty();
}

static std::optional<RowPlan>
planRowsInRegisters(ArrayRef<linalg::LinalgOp> ops, int64_t workgroupSize,
                    int64_t subgroupSize, bool subgroupRows,
                    const StagingLimits &limits) {
  if (ops.empty() || subgroupSize <= 0 || workgroupSize % subgroupSize != 0)
    return std::nullopt;
  // Every memory access of the kernel is one of the ops.
  Block *block = ops.front()->getBlock();
  llvm::SmallPtrSet<Operation *, 8> known;
  for (linalg::LinalgOp op : ops) {
    if (op->getBlock() != block)
      return std::nullopt;
    known.insert(op);
  }
  for (Operation &op : block->without_terminator())
    if (!known.contains(&op) && !isMemoryEffectFree(&op) &&
        !isa<memref::AllocOp, memref::DeallocOp>(op))
      return std::nullopt;

  RowPlan plan;
  plan.subgroupRows = subgroupRows;
  auto first = llvm::find_if(ops, [](linalg::LinalgOp op) {
    return getInnermostReductionCombiner(op) && op.getNumReductionLoops() == 1;
  });
  if (first == ops.end())
    return std::nullopt;
  SmallVector<int64_t> ranges = linalg::LinalgOp(*first).getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  plan.rowSizes.assign(ranges.begin(), ranges.end() - 1);
  plan.extent = ranges.back();
  int64_t rows = 1;
  for (int64_t s : plan.rowSizes)
    rows *= s;
  if (rows != (subgroupRows ? workgroupSize / subgroupSize : 1))
    return std::nullopt;
  plan.span = subgroupRows ? subgroupSize : workgroupSize;
  const unsigned numRowLoops = plan.rowSizes.size();

  SmallVector<int64_t> rowLoops(plan.rowSizes);
  rowLoops.push_back(plan.extent);
  int64_t bits = 0;
  for (linalg::LinalgOp op : ops) {
    SmallVector<int64_t> loops = op.getStaticLoopRanges();
    bool allParallel = op.getNumReductionLoops() == 0;
    if (loops == ArrayRef(rowLoops) && !allParallel) {
      Operation *combiner = getInnermostReductionCombiner(op);
      if (!combiner || op.getNumReductionLoops() != 1 ||
          !getSubgroupReduceKind(
              combiner,
              getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType())))
        return std::nullopt;
      plan.kinds.push_back(RowOpKind::Reduction);
    } else if (loops == ArrayRef(rowLoops)) {
      // Every thread writes its own elements of the row.
      if (llvm::any_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
            return !op.getMatchingIndexingMap(&init).isPermutation();
          }))
        return std::nullopt;
      plan.kinds.push_back(RowOpKind::Elementwise);
    } else if (loops == ArrayRef(plan.rowSizes) && allParallel) {
      plan.kinds.push_back(RowOpKind::Scalar);
    } else {
      return std::nullopt;
    }
    if (plan.kinds.back() == RowOpKind::Scalar)
      continue;
    for (OpOperand &operand : op->getOpOperands())
      if (classifyChunkRead(op, operand, numRowLoops) == ChunkRead::Vector)
        bits = std::max<int64_t>(bits,
                                 getElementTypeOrSelf(operand.get().getType())
                                     .getIntOrFloatBitWidth());
  }
  if (bits > 0 && bits <= 64)
    plan.width = std::max<int64_t>(1, 128 / bits);
  if (plan.extent % (plan.span * plan.width) != 0)
    return std::nullopt;
  plan.chunks = plan.extent / (plan.span * plan.width);

  // What is written is read back from registers only: a buffer written by
  // one of the ops is read later with the same key, never from memory
  // (other threads' writes are not ordered before the read by any barrier).
  DenseSet<Value> writtenBuffers;
  for (linalg::LinalgOp op : ops)
    for (Value init : op.getDpsInits())
      writtenBuffers.insert(stripViews(init));
  DenseSet<RowKey> written;
  // Row values read or written, with the number of ops that do.
  DenseMap<RowKey, int64_t> rowUses;
  for (linalg::LinalgOp op : ops) {
    DenseSet<RowKey> readHere;
    auto check = [&](OpOperand &operand) {
      if (!isa<MemRefType>(operand.get().getType()))
        return true;
      RowKey key = rowKey(op, operand, numRowLoops);
      if (writtenBuffers.contains(stripViews(operand.get())) &&
          !written.contains(key))
        return false;
      if (key.second.getNumDims() > numRowLoops && readHere.insert(key).second)
        ++rowUses[key];
      return true;
    };
    for (OpOperand *input : op.getDpsInputOperands())
      if (!check(*input))
        return std::nullopt;
    for (OpOperand &init : op.getDpsInitsMutable()) {
      // A reduction starts from its init's value.
      if ((readsInit(op, init) || op.getNumReductionLoops() > 0) &&
          !check(init))
        return std::nullopt;
      RowKey key = rowKey(op, init, numRowLoops);
      written.insert(key);
      if (key.second.getNumDims() > numRowLoops && readHere.insert(key).second)
        ++rowUses[key];
    }
  }
  // The registers held from one op to a later one (what a single op reads
  // lives only while it runs).
  int64_t registers = 0;
  for (auto [key, users] : rowUses) {
    if (users < 2)
      continue;
    plan.heldRows.insert(key);
    int64_t elementBits =
        getElementTypeOrSelf(key.first.getType()).getIntOrFloatBitWidth();
    registers += llvm::divideCeil(
        plan.chunks * plan.width * std::max<int64_t>(elementBits, 8), 32);
  }
  if (registers > kGPURowRegisterBudget)
    return std::nullopt;
  DenseSet<RowKey> loadedRows;
  for (const RowKey &key : plan.heldRows)
    if (!written.contains(key))
      loadedRows.insert(key);
  planStaging(plan, loadedRows, workgroupSize, limits);
  return plan;
}

// Lowers `ops` by `plan` (see above) and erases them.
static void emitRowsInRegisters(RewriterBase &rewriter,
                                ArrayRef<linalg::LinalgOp> ops,
                                const RowPlan &plan, int64_t workgroupSize,
                                int64_t subgroupSize) {
  OpBuilder &b = rewriter;
  Location loc = ops.front()->getLoc();
  MLIRContext *ctx = b.getContext();
  b.setInsertionPoint(ops.front());
  const unsigned numRowLoops = plan.rowSizes.size();
  auto index = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  Value zero = index(0);
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value sgSize = index(subgroupSize);
  Value lane = arith::RemUIOp::create(b, loc, tid, sgSize);
  Value subgroup = arith::DivUIOp::create(b, loc, tid, sgSize);
  // The thread's index among its row's threads, and its row's loop indices.
  Value self = plan.subgroupRows ? lane : tid;
  SmallVector<Value> rowSizes;
  for (int64_t s : plan.rowSizes)
    rowSizes.push_back(index(s));
  SmallVector<Value> rowIvs = plan.subgroupRows
                                  ? delinearize(b, loc, subgroup, rowSizes)
                                  : SmallVector<Value>(numRowLoops, zero);
  Value leader =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, self, zero);
  // Chunk u of the thread: elements self * width + u * span * width + e,
  // e < width, of the row.
  SmallVector<Value> chunkStart;
  Value selfStart = arith::MulIOp::create(b, loc, self, index(plan.width));
  for (int64_t u = 0; u < plan.chunks; ++u)
    chunkStart.push_back(
        u == 0 ? selfStart
               : arith::AddIOp::create(b, loc, selfStart,
                                       index(u * plan.span * plan.width))
                     .getResult());
  auto position = [&](int64_t u, int64_t e) {
    return e == 0 ? chunkStart[u]
                  : arith::AddIOp::create(b, loc, chunkStart[u], index(e))
                        .getResult();
  };
  auto rowPoint = [&](Value position) {
    SmallVector<Value> ivs(rowIvs);
    ivs.push_back(position);
    return ivs;
  };

  // Row values per chunk and element; per-row scalars.
  DenseMap<RowKey, SmallVector<SmallVector<Value>>> rowValues;
  DenseMap<RowKey, Value> rowScalars;
  // The workgroup buffers of staged rows: chunk c of thread t at elements
  // (c * workgroupSize + t) * width, so that a subgroup's 128-bit accesses
  // cover consecutive bytes.
  DenseMap<RowKey, Value> stagedBuffers;
  auto stagedSlot = [&](int64_t c) {
    return arith::MulIOp::create(
               b, loc,
               arith::AddIOp::create(b, loc, tid, index(c * workgroupSize)),
               index(plan.width))
        .getResult();
  };
  auto isTemporary = [](Value buffer) {
    return isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(
        stripViews(buffer).getDefiningOp());
  };
  // The thread's elements of `operand` along the row in chunk `u`. Rows that
  // several ops read are loaded whole (every chunk, before any is used) on
  // first use; a row that one op reads, chunk by chunk as that op uses it.
  auto readRow = [&](linalg::LinalgOp op, OpOperand &operand,
                     int64_t u) -> ArrayRef<Value> {
    RowKey key = rowKey(op, operand, numRowLoops);
    auto &chunks = rowValues[key];
    if (chunks.empty())
      chunks.resize(plan.chunks);
    if (!chunks[u].empty())
      return chunks[u];
    AffineMap map = op.getMatchingIndexingMap(&operand);
    Type element = getElementTypeOrSelf(operand.get().getType());
    bool vector =
        plan.width > 1 &&
        classifyChunkRead(op, operand, numRowLoops) == ChunkRead::Vector;
    bool whole = plan.heldRows.contains(key);
    auto chunkType = VectorType::get({plan.width}, element);
    // A staged row: stored by its first reader, read back by the others.
    Value staged;
    bool stage = false;
    if (vector && plan.stagedRows.contains(key)) {
      staged = stagedBuffers.lookup(key);
      if (!staged) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(ops.front());
        staged = stagedBuffers[key] = memref::AllocOp::create(
            b, loc,
            MemRefType::get(
                {plan.chunks * workgroupSize * plan.width}, element,
                MemRefLayoutAttrInterface(),
                gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup)));
        stage = true;
      }
    }
    for (int64_t c = whole ? 0 : u; c < (whole ? plan.chunks : u + 1); ++c) {
      if (vector) {
        Value chunk;
        if (staged && !stage) {
          chunk =
              vector::LoadOp::create(b, loc, chunkType, staged, stagedSlot(c));
        } else {
          chunk = vector::LoadOp::create(
              b, loc, chunkType, operand.get(),
              applyIndexingMap(b, loc, map, rowPoint(chunkStart[c])));
          if (stage)
            vector::StoreOp::create(b, loc, chunk, staged, stagedSlot(c));
        }
        for (int64_t e = 0; e < plan.width; ++e)
          chunks[c].push_back(
              vector::ExtractOp::create(b, loc, chunk, ArrayRef<int64_t>{e}));
        continue;
      }
      for (int64_t e = 0; e < plan.width; ++e)
        chunks[c].push_back(memref::LoadOp::create(
            b, loc, operand.get(),
            applyIndexingMap(b, loc, map, rowPoint(position(c, e)))));
    }
    return chunks[u];
  };
  // The row's value of a per-row `operand` (or a scalar operand).
  auto readScalar = [&](linalg::LinalgOp op, OpOperand &operand) -> Value {
    if (!isa<MemRefType>(operand.get().getType()))
      return operand.get();
    RowKey key = rowKey(op, operand, numRowLoops);
    if (Value known = rowScalars.lookup(key))
      return known;
    return rowScalars[key] = memref::LoadOp::create(
               b, loc, operand.get(),
               applyIndexingMap(b, loc, key.second, rowIvs));
  };
  // Stores a per-row scalar (by the row's leader) unless only registers
  // read it.
  auto writeScalar = [&](linalg::LinalgOp op, OpOperand &init, Value value) {
    RowKey key = rowKey(op, init, numRowLoops);
    rowScalars[key] = value;
    if (isTemporary(init.get()))
      return;
    scf::IfOp::create(b, loc, leader, [&](OpBuilder &ib, Location loc) {
      memref::StoreOp::create(ib, loc, value, init.get(),
                              applyIndexingMap(ib, loc, key.second, rowIvs));
      scf::YieldOp::create(ib, loc);
    });
  };
  // The body of `op` at loop point `ivs` with its block arguments bound to
  // `args` (null: unused); returns what it yields.
  auto evaluate = [&](linalg::LinalgOp op, ArrayRef<Value> args,
                      ArrayRef<Value> ivs) {
    Block *body = op.getBlock();
    IRMapping mapping;
    for (auto [arg, value] : llvm::zip(body->getArguments(), args))
      if (value)
        mapping.map(arg, value);
    for (Operation &inner : body->without_terminator()) {
      if (auto indexOp = dyn_cast<linalg::IndexOp>(inner)) {
        mapping.map(indexOp.getResult(), ivs[indexOp.getDim()]);
        continue;
      }
      b.clone(inner, mapping);
    }
    SmallVector<Value> results;
    for (Value yielded : body->getTerminator()->getOperands())
      results.push_back(mapping.lookupOrDefault(yielded));
    return results;
  };
  // Combines `values` pairwise (log2 depth, a fixed order on every thread).
  auto combineTree = [&](Operation *combiner, SmallVector<Value> values) {
    while (values.size() > 1) {
      SmallVector<Value> next;
      for (size_t i = 0; i + 1 < values.size(); i += 2)
        next.push_back(combine(b, combiner, values[i], values[i + 1]));
      if (values.size() % 2)
        next.push_back(values.back());
      values = std::move(next);
    }
    return values.front();
  };
  // The value of input `operand` of row op `op` at element e of chunk u.
  auto rowInput = [&](linalg::LinalgOp op, OpOperand &operand, int64_t u,
                      int64_t e) -> Value {
    if (!isa<MemRefType>(operand.get().getType()) ||
        !readsAlongRow(op.getMatchingIndexingMap(&operand), numRowLoops))
      return readScalar(op, operand);
    return readRow(op, operand, u)[e];
  };

  for (auto [opNumber, kind] : llvm::enumerate(plan.kinds)) {
    linalg::LinalgOp op = ops[opNumber];
    b.setInsertionPoint(op);
    loc = op.getLoc();
    // Each op reads staged rows anew from the workgroup buffer.
    for (const RowKey &key : plan.stagedRows)
      rowValues.erase(key);
    switch (kind) {
    case RowOpKind::Scalar: {
      SmallVector<Value> args;
      for (OpOperand *input : op.getDpsInputOperands())
        args.push_back(readScalar(op, *input));
      for (OpOperand &init : op.getDpsInitsMutable())
        args.push_back(readsInit(op, init) ? readScalar(op, init) : Value());
      SmallVector<Value> results = evaluate(op, args, rowIvs);
      for (auto [init, result] : llvm::zip(op.getDpsInitsMutable(), results))
        writeScalar(op, init, result);
      break;
    }
    case RowOpKind::Reduction: {
      Operation *combiner = getInnermostReductionCombiner(op);
      OpOperand *init = op.getDpsInitOperand(0);
      Type accType = getElementTypeOrSelf(init->get().getType());
      Value neutral = arith::ConstantOp::create(
          b, loc, *arith::getNeutralElement(combiner));
      // One accumulator per element of a chunk: `width` independent chains,
      // combined pairwise.
      SmallVector<Value> acc(plan.width, neutral);
      for (int64_t u = 0; u < plan.chunks; ++u) {
        for (int64_t e = 0; e < plan.width; ++e) {
          SmallVector<Value> args;
          for (OpOperand *input : op.getDpsInputOperands())
            args.push_back(rowInput(op, *input, u, e));
          args.push_back(acc[e]);
          acc[e] = evaluate(op, args, rowPoint(position(u, e))).front();
        }
      }
      Value total = gpu::SubgroupReduceOp::create(
          b, loc, combineTree(combiner, acc),
          *getSubgroupReduceKind(combiner, accType), /*uniform=*/true,
          /*cluster_size=*/IntegerAttr(), /*cluster_stride=*/1);
      if (plan.span > subgroupSize) {
        // Subgroups' totals through shared slots (one set per reduction:
        // no barrier guards their reuse); every thread combines them.
        int64_t slots = workgroupSize / subgroupSize;
        Value shared = memref::AllocOp::create(
            b, loc,
            MemRefType::get(
                {slots}, accType, MemRefLayoutAttrInterface(),
                gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup)));
        publishSubgroupTotal(b, loc, total, lane, shared, subgroup);
        SmallVector<Value> totals;
        for (int64_t s = 0; s < slots; ++s)
          totals.push_back(memref::LoadOp::create(b, loc, shared, index(s)));
        total = combineTree(combiner, totals);
      }
      writeScalar(op, *init,
                  combine(b, combiner, readScalar(op, *init), total));
      break;
    }
    case RowOpKind::Elementwise: {
      SmallVector<SmallVector<SmallVector<Value>>> results(
          op.getNumDpsInits(), SmallVector<SmallVector<Value>>(plan.chunks));
      for (int64_t u = 0; u < plan.chunks; ++u) {
        for (int64_t e = 0; e < plan.width; ++e) {
          SmallVector<Value> args;
          for (OpOperand *input : op.getDpsInputOperands())
            args.push_back(rowInput(op, *input, u, e));
          for (OpOperand &init : op.getDpsInitsMutable())
            args.push_back(readsInit(op, init) ? rowInput(op, init, u, e)
                                               : Value());
          for (auto [i, result] :
               llvm::enumerate(evaluate(op, args, rowPoint(position(u, e)))))
            results[i][u].push_back(result);
        }
      }
      for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable())) {
        if (!isTemporary(init.get())) {
          AffineMap map = op.getMatchingIndexingMap(&init);
          bool vector =
              plan.width > 1 &&
              classifyChunkRead(op, init, numRowLoops) == ChunkRead::Vector;
          for (int64_t u = 0; u < plan.chunks; ++u) {
            if (vector) {
              Value chunk = vector::FromElementsOp::create(
                  b, loc,
                  VectorType::get({plan.width},
                                  getElementTypeOrSelf(init.get().getType())),
                  results[i][u]);
              vector::StoreOp::create(
                  b, loc, chunk, init.get(),
                  applyIndexingMap(b, loc, map, rowPoint(chunkStart[u])));
              continue;
            }
            for (int64_t e = 0; e < plan.width; ++e)
              memref::StoreOp::create(
                  b, loc, results[i][u][e], init.get(),
                  applyIndexingMap(b, loc, map, rowPoint(position(u, e))));
          }
        }
        rowValues[rowKey(op, init, numRowLoops)] = std::move(results[i]);
      }
      break;
    }
    }
  }
  if (plan.minWorkgroupsPerProcessor > 0)
    ops.front()->getParentOfType<func::FuncOp>()->setAttr(
        kMinWorkgroupsPerProcessorAttrName,
        b.getI64IntegerAttr(plan.minWorkgroupsPerProcessor));
  for (linalg::LinalgOp op : llvm::reverse(ops))
    rewriter.eraseOp(op);
}

struct GPULowerRowsPass
    : public kiln::impl::GPULowerRowsPassBase<GPULowerRowsPass> {
  using GPULowerRowsPassBase::GPULowerRowsPassBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    std::optional<StagingLimits::Mode> mode =
        llvm::StringSwitch<std::optional<StagingLimits::Mode>>(stageRows)
            .Case("auto", StagingLimits::Mode::Auto)
            .Case("always", StagingLimits::Mode::Always)
            .Case("never", StagingLimits::Mode::Never)
            .Default(std::nullopt);
    if (!mode) {
      func.emitError() << "kiln-gpu-lower-rows: stage-rows must be auto, "
                          "always or never, not '"
                       << stageRows << "'";
      return signalPassFailure();
    }
    if (func.isExternal())
      return;
    FailureOr<GPUStrategyAttr> strategy = readGPUStrategy(func);
    if (failed(strategy))
      return signalPassFailure();
    if (!strategy->reducesRowsTogether() || strategy->getIntrinsic())
      return;
    FailureOr<SmallVector<linalg::LinalgOp>> ops = getBufferizedOps(func);
    if (failed(ops))
      return signalPassFailure();
    StagingLimits limits;
    limits.mode = *mode;
    limits.processorRegisters = processorRegisters;
    limits.processorThreads = processorThreads;
    limits.processorSharedMemoryBytes = processorSharedMemoryBytes;
    limits.maxSharedMemoryBytes = maxSharedMemoryBytes;
    std::optional<RowPlan> plan = planRowsInRegisters(
        *ops, strategy->getWorkgroupSize(), strategy->getSubgroupSize(),
        strategy->getReduction() == GPUReduction::Subgroup, limits);
    if (!plan)
      return;
    IRRewriter rewriter(&getContext());
    emitRowsInRegisters(rewriter, *ops, *plan, strategy->getWorkgroupSize(),
                        strategy->getSubgroupSize());
  }
};
} // namespace
