//===- GPUDistributeToThreadsPass.cpp - Workgroup ops over threads --------===//
//
// After bufferization, a workgroup runs a sequence of linalg ops on buffers.
// This pass gives each op to all the workgroup's threads: a thread-mapped
// scf.forall over its parallel loops, or, for innermost reductions under the
// "workgroup" strategy, a cooperative reduction through shared memory. A
// row-fused workgroup whose rows fit the threads' registers is lowered as a
// whole instead (see "Rows in registers").
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "CodegenUtils.h"

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
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_GPUDISTRIBUTETOTHREADSPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

constexpr unsigned kMaxLinearDims = 10;

static Attribute threadMapping(MLIRContext *ctx, unsigned linearDim) {
  return gpu::GPUThreadMappingAttr::get(
      ctx, static_cast<gpu::MappingId>(
               static_cast<unsigned>(gpu::MappingId::LinearDim0) + linearDim));
}

// Product of the static extents of the trailing reduction loops.
static std::optional<int64_t> staticReductionSize(linalg::LinalgOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t size = 1;
  for (int64_t r : ArrayRef(ranges).drop_front(op.getNumParallelLoops())) {
    if (ShapedType::isDynamic(r))
      return std::nullopt;
    size *= r;
  }
  return size;
}

static Value loadOperand(OpBuilder &b, Location loc, linalg::LinalgOp op,
                         OpOperand &operand, ValueRange ivs) {
  Value source = operand.get();
  if (!isa<MemRefType>(source.getType()))
    return source;
  return memref::LoadOp::create(
      b, loc, source,
      applyIndexingMap(b, loc, op.getMatchingIndexingMap(&operand), ivs));
}

// The indices of the point at linear position `index` of a row-major space
// of `sizes` (one dimension: `index` itself).
static SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value index,
                                      ArrayRef<Value> sizes) {
  if (sizes.size() == 1)
    return {index};
  auto delin = affine::AffineDelinearizeIndexOp::create(
      b, loc, index, getAsOpFoldResult(sizes));
  return SmallVector<Value>(delin.getResults());
}

// Combines two partial results with a clone of the reduction's combiner.
static Value combine(OpBuilder &b, Operation *combiner, Value lhs, Value rhs) {
  IRMapping mapping;
  mapping.map(combiner->getOperand(0), lhs);
  mapping.map(combiner->getOperand(1), rhs);
  return b.clone(*combiner, mapping)->getResult(0);
}

// The gpu.subgroup_reduce operation of a reduction combiner over 32-bit
// scalars (what the shuffle and DPP lowerings take in one step), if any.
static std::optional<gpu::AllReduceOperation>
getSubgroupReduceKind(Operation *combiner, Type type) {
  if (!type.isIntOrFloat() || type.getIntOrFloatBitWidth() != 32)
    return std::nullopt;
  using K = gpu::AllReduceOperation;
  return llvm::TypeSwitch<Operation *, std::optional<K>>(combiner)
      .Case<arith::AddFOp, arith::AddIOp>([](auto) { return K::ADD; })
      .Case<arith::MulFOp, arith::MulIOp>([](auto) { return K::MUL; })
      .Case<arith::MaxNumFOp>([](auto) { return K::MAXNUMF; })
      .Case<arith::MinNumFOp>([](auto) { return K::MINNUMF; })
      .Case<arith::MaximumFOp>([](auto) { return K::MAXIMUMF; })
      .Case<arith::MinimumFOp>([](auto) { return K::MINIMUMF; })
      .Case<arith::MaxSIOp>([](auto) { return K::MAXSI; })
      .Case<arith::MinSIOp>([](auto) { return K::MINSI; })
      .Case<arith::MaxUIOp>([](auto) { return K::MAXUI; })
      .Case<arith::MinUIOp>([](auto) { return K::MINUI; })
      .Case<arith::AndIOp>([](auto) { return K::AND; })
      .Case<arith::OrIOp>([](auto) { return K::OR; })
      .Case<arith::XOrIOp>([](auto) { return K::XOR; })
      .Default([](Operation *) { return std::nullopt; });
}

// For each output element of `op`: thread t folds elements t, t + W, ...
// of the (linearized) reduction space into a partial starting at the
// combiner's neutral element. With `subgroupSize` dividing W and a combiner
// that gpu.subgroup_reduce has (sums, products, min/max, bitwise, over
// 32-bit scalars), each subgroup reduces its partials across lanes
// (shuffles on NVIDIA, DPP on AMD: kiln-gpu-lower-subgroup-reduce), lane 0
// of each stores its total to shared memory, and after one barrier thread 0
// combines the W / subgroupSize totals. Otherwise the W partials are stored
// to shared memory and combined pairwise in log2(W) steps, a barrier after
// each. Thread 0 folds the total into the output.
// Returns the last op of the emitted code.
// How `operand` of a reduction over one innermost loop `reducedDim` is read
// when a thread takes `width` consecutive elements of that loop per step.
enum class ChunkRead { Vector, Scalar, Elementwise };

static ChunkRead classifyChunkRead(linalg::LinalgOp op, OpOperand &operand,
                                   unsigned reducedDim) {
  auto type = dyn_cast<MemRefType>(operand.get().getType());
  if (!type)
    return ChunkRead::Scalar; // a scalar operand
  AffineMap map = op.getMatchingIndexingMap(&operand);
  bool uses = llvm::any_of(map.getResults(), [&](AffineExpr e) {
    return e.isFunctionOfDim(reducedDim);
  });
  if (!uses)
    return ChunkRead::Scalar; // the same value for the whole chunk
  SmallVector<int64_t> strides;
  int64_t offset;
  bool innermostContiguous =
      succeeded(type.getStridesAndOffset(strides, offset)) &&
      !strides.empty() && strides.back() == 1;
  Type element = type.getElementType();
  bool vectorType = element.isIntOrFloat() &&
                    element.getIntOrFloatBitWidth() >= 8;
  bool lastOnly = map.getNumResults() > 0 &&
                  map.getResults().back() ==
                      getAffineDimExpr(reducedDim, op.getContext()) &&
                  llvm::none_of(map.getResults().drop_back(),
                                [&](AffineExpr e) {
                                  return e.isFunctionOfDim(reducedDim);
                                });
  return innermostContiguous && vectorType && lastOnly ? ChunkRead::Vector
                                                       : ChunkRead::Elementwise;
}

static Operation *emitWorkgroupReduction(RewriterBase &rewriter,
                                         linalg::LinalgOp op,
                                         Operation *combiner,
                                         int64_t workgroupSize,
                                         int64_t subgroupSize,
                                         int64_t vectorWidth,
                                         bool subgroupRows) {
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  OpBuilder &b = rewriter;
  b.setInsertionPoint(op);
  unsigned numParallel = op.getNumParallelLoops();
  SmallVector<Range> domain =
      cast<TilingInterface>(op.getOperation()).getIterationDomain(b);
  SmallVector<Value> parallelSizes, reducedSizes;
  for (auto [i, range] : llvm::enumerate(domain)) {
    Value size = getValueOrCreateConstantIndexOp(b, loc, range.size);
    (i < numParallel ? parallelSizes : reducedSizes).push_back(size);
  }
  Value reducedTotal = arith::ConstantIndexOp::create(b, loc, 1);
  for (Value size : reducedSizes)
    reducedTotal = arith::MulIOp::create(b, loc, reducedTotal, size);
  OpOperand *init = op.getDpsInitOperand(0);
  Type accType = getElementTypeOrSelf(init->get().getType());
  std::optional<gpu::AllReduceOperation> subgroupKind;
  if (subgroupSize > 1 && workgroupSize % subgroupSize == 0)
    subgroupKind = getSubgroupReduceKind(combiner, accType);
  // "subgroup" rows: each subgroup reduces one row of the workgroup's tile
  // on its own (lanes only, no shared memory, no barrier), when the tile has
  // one row per subgroup and the combiner has a subgroup reduction.
  int64_t tileRows = 1;
  for (Value size : parallelSizes) {
    std::optional<int64_t> rows = getConstantIntValue(size);
    tileRows = rows ? tileRows * *rows : -1;
    if (tileRows < 0)
      break;
  }
  const bool perSubgroup = subgroupRows && subgroupKind &&
                           tileRows == workgroupSize / subgroupSize;
  // Threads that reduce one row together.
  const int64_t span = perSubgroup ? subgroupSize : workgroupSize;
  // Chunks of `width` consecutive elements per thread (128 bits of the
  // widest contiguous input), `unroll` chunks per step: one innermost reduced
  // loop whose extent splits evenly into them. The chunks of a step are
  // loaded before any is reduced, so that several loads are in flight.
  int64_t width = 1, unroll = 1;
  std::optional<int64_t> extent =
      reducedSizes.size() == 1 ? getConstantIntValue(reducedSizes[0])
                               : std::nullopt;
  if (vectorWidth > 1 && extent) {
    int64_t bits = 0;
    for (OpOperand *input : op.getDpsInputOperands())
      if (classifyChunkRead(op, *input, numParallel) == ChunkRead::Vector)
        bits = std::max<int64_t>(
            bits, getElementTypeOrSelf(input->get().getType())
                      .getIntOrFloatBitWidth());
    for (int64_t w : {bits ? 128 / bits : 1, vectorWidth}) {
      if (bits && w > 1 && *extent % (span * w) == 0) {
        width = w;
        break;
      }
    }
    if (width > 1)
      for (int64_t u : {4, 2})
        if (*extent % (span * width * u) == 0) {
          unroll = u;
          break;
        }
  }

  const int64_t slots =
      subgroupKind ? workgroupSize / subgroupSize : workgroupSize;
  auto sharedType = MemRefType::get(
      {slots}, accType, MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
  // Subgroup rows need no shared memory.
  Value shared =
      perSubgroup ? Value() : memref::AllocOp::create(b, loc, sharedType);
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value threads = arith::ConstantIndexOp::create(b, loc, span);
  Value neutral = arith::ConstantOp::create(
      b, loc, *arith::getNeutralElement(combiner));
  // The thread's index among the `span` that share its row.
  Value self = tid;
  if (perSubgroup)
    self = arith::RemUIOp::create(
        b, loc, tid, arith::ConstantIndexOp::create(b, loc, subgroupSize));

  auto reduceRow = [&](OpBuilder &nb, Location loc, ValueRange parallelIvs) {
    // On the thread for which `isWriter` holds: the output element of the
    // row at `parallelIvs` becomes combine(output, total()).
    auto foldIntoOutput = [&](Value isWriter,
                              function_ref<Value(OpBuilder &, Location)> total) {
      scf::IfOp::create(nb, loc, isWriter, [&](OpBuilder &ib, Location loc) {
        SmallVector<Value> ivs(parallelIvs);
        ivs.append(reducedSizes.size(), zero);
        SmallVector<Value> outIndices =
            applyIndexingMap(ib, loc, op.getMatchingIndexingMap(init), ivs);
        Value old = memref::LoadOp::create(ib, loc, init->get(), outIndices);
        memref::StoreOp::create(ib, loc,
                                combine(ib, combiner, old, total(ib, loc)),
                                init->get(), outIndices);
        scf::YieldOp::create(ib, loc);
      });
    };
        // 1. Strided partial per thread, running the op's own body: thread
        //    t takes elements t*width .. t*width + width - 1 of each chunk
        //    of W*width, `unroll` chunks per step, reading contiguous
        //    inputs with one vector load per chunk.
        Value start = self, stride = threads;
        if (width > 1) {
          Value chunk = arith::ConstantIndexOp::create(nb, loc, width);
          start = arith::MulIOp::create(nb, loc, self, chunk);
          stride = arith::ConstantIndexOp::create(nb, loc,
                                                  span * width * unroll);
        }
        auto partialLoop = scf::ForOp::create(
            nb, loc, start, reducedTotal, stride, ValueRange{neutral},
            [&](OpBuilder &lb, Location loc, Value k, ValueRange iterArgs) {
              auto pointAt = [&](Value index) {
                SmallVector<Value> ivs(parallelIvs);
                llvm::append_range(ivs,
                                   delinearize(lb, loc, index, reducedSizes));
                return ivs;
              };
              auto offset = [&](Value base, int64_t by) {
                return by == 0 ? base
                               : arith::AddIOp::create(
                                     lb, loc, base,
                                     arith::ConstantIndexOp::create(lb, loc,
                                                                    by))
                                     .getResult();
              };
              Block *body = op.getBlock();
              // Per chunk and input: a vector, or one scalar for the chunk.
              SmallVector<DenseMap<OpOperand *, Value>> chunkValues(unroll);
              if (width > 1) {
                for (int64_t u = 0; u < unroll; ++u) {
                  SmallVector<Value> base =
                      pointAt(offset(k, u * span * width));
                  for (OpOperand *input : op.getDpsInputOperands()) {
                    switch (classifyChunkRead(op, *input, numParallel)) {
                    case ChunkRead::Vector: {
                      auto vectorType = VectorType::get(
                          {width},
                          getElementTypeOrSelf(input->get().getType()));
                      chunkValues[u][input] = vector::LoadOp::create(
                          lb, loc, vectorType, input->get(),
                          applyIndexingMap(
                              lb, loc, op.getMatchingIndexingMap(input), base));
                      break;
                    }
                    case ChunkRead::Scalar:
                      // The same for every chunk of the row: loaded once.
                      chunkValues[u][input] =
                          u == 0 ? loadOperand(lb, loc, op, *input, base)
                                 : chunkValues[0][input];
                      break;
                    case ChunkRead::Elementwise:
                      break;
                    }
                  }
                }
              }
              Value acc = iterArgs.front();
              for (int64_t u = 0; u < unroll; ++u) {
                Value chunkStart = offset(k, u * span * width);
                for (int64_t e = 0; e < width; ++e) {
                  SmallVector<Value> ivs = pointAt(offset(chunkStart, e));
                  IRMapping mapping;
                  for (OpOperand *input : op.getDpsInputOperands()) {
                    Value value = chunkValues[u].lookup(input);
                    if (value && isa<VectorType>(value.getType()))
                      value = vector::ExtractOp::create(
                          lb, loc, value, ArrayRef<int64_t>{e});
                    if (!value)
                      value = loadOperand(lb, loc, op, *input, ivs);
                    mapping.map(body->getArgument(input->getOperandNumber()),
                                value);
                  }
                  mapping.map(body->getArgument(init->getOperandNumber()),
                              acc);
                  for (Operation &inner : body->without_terminator()) {
                    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
                      mapping.map(index.getResult(), ivs[index.getDim()]);
                      continue;
                    }
                    lb.clone(inner, mapping);
                  }
                  acc = mapping.lookup(body->getTerminator()->getOperand(0));
                }
              }
              scf::YieldOp::create(lb, loc, acc);
            });
        Value partial = partialLoop.getResult(0);
        if (perSubgroup) {
          // 2. Across the lanes of the row's subgroup; lane 0 folds the
          //    total into the output.
          Value total = gpu::SubgroupReduceOp::create(
              nb, loc, partial, *subgroupKind, /*uniform=*/true,
              /*cluster_size=*/IntegerAttr(), /*cluster_stride=*/1);
          Value leader = arith::CmpIOp::create(
              nb, loc, arith::CmpIPredicate::eq, self, zero);
          foldIntoOutput(leader, [&](OpBuilder &, Location) { return total; });
          return;
        }
        if (subgroupKind) {
          // 2. Across the lanes of each subgroup, then the subgroups'
          //    totals through shared memory.
          Value subgroupTotal = gpu::SubgroupReduceOp::create(
              nb, loc, partial, *subgroupKind, /*uniform=*/true,
              /*cluster_size=*/IntegerAttr(), /*cluster_stride=*/1);
          Value sgSize = arith::ConstantIndexOp::create(nb, loc, subgroupSize);
          Value lane = arith::RemUIOp::create(nb, loc, tid, sgSize);
          Value subgroup = arith::DivUIOp::create(nb, loc, tid, sgSize);
          Value leader = arith::CmpIOp::create(
              nb, loc, arith::CmpIPredicate::eq, lane, zero);
          scf::IfOp::create(nb, loc, leader, [&](OpBuilder &ib, Location loc) {
            memref::StoreOp::create(ib, loc, subgroupTotal, shared, subgroup);
            scf::YieldOp::create(ib, loc);
          });
          gpu::BarrierOp::create(nb, loc);
          Value first = arith::CmpIOp::create(
              nb, loc, arith::CmpIPredicate::eq, tid, zero);
          foldIntoOutput(first, [&](OpBuilder &ib, Location loc) {
            Value total = memref::LoadOp::create(ib, loc, shared, zero);
            for (int64_t s = 1; s < slots; ++s) {
              Value slot = arith::ConstantIndexOp::create(ib, loc, s);
              total = combine(ib, combiner, total,
                              memref::LoadOp::create(ib, loc, shared, slot));
            }
            return total;
          });
          // The shared slots are written again for the next output element.
          if (llvm::any_of(parallelSizes, [](Value size) {
                return getConstantIntValue(size) != 1;
              }))
            gpu::BarrierOp::create(nb, loc);
          return;
        }
        memref::StoreOp::create(nb, loc, partial, shared, tid);
        gpu::BarrierOp::create(nb, loc);

        // 2. Tree over the partials in shared memory.
        for (int64_t stride = llvm::PowerOf2Ceil(workgroupSize) / 2;
             stride >= 1; stride /= 2) {
          Value strideV = arith::ConstantIndexOp::create(nb, loc, stride);
          Value other = arith::AddIOp::create(nb, loc, tid, strideV);
          Value active = arith::AndIOp::create(
              nb, loc,
              arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ult, tid,
                                    strideV),
              arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ult, other,
                                    threads));
          scf::IfOp::create(nb, loc, active, [&](OpBuilder &ib, Location loc) {
            Value mine = memref::LoadOp::create(ib, loc, shared, tid);
            Value theirs = memref::LoadOp::create(ib, loc, shared, other);
            memref::StoreOp::create(ib, loc, combine(ib, combiner, mine, theirs),
                                    shared, tid);
            scf::YieldOp::create(ib, loc);
          });
          gpu::BarrierOp::create(nb, loc);
        }

        // 3. Thread 0 folds the total into the output element.
        Value first = arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::eq,
                                            tid, zero);
        foldIntoOutput(first, [&](OpBuilder &ib, Location loc) {
          return memref::LoadOp::create(ib, loc, shared, zero).getResult();
        });
  };
  if (perSubgroup) {
    // Row r of the tile is subgroup r's.
    Value subgroup = arith::DivUIOp::create(
        b, loc, tid, arith::ConstantIndexOp::create(b, loc, subgroupSize));
    reduceRow(b, loc, delinearize(b, loc, subgroup, parallelSizes));
  } else {
    SmallVector<Value> lbs(numParallel, zero), steps(numParallel, one);
    scf::buildLoopNest(b, loc, lbs, parallelSizes, steps, reduceRow);
  }
  Operation *last = op->getPrevNode();
  rewriter.eraseOp(op);
  return last;
}

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

// Upper bound on the 32-bit registers a thread spends on the row values it
// holds from one op to a later one (one buffer of f32 rows of 4096 over 128
// threads takes 32), so that enough threads stay in flight to hide memory
// latency.
constexpr int64_t kRowRegisterBudget = 64;

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
};

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
                    int64_t subgroupSize, bool subgroupRows) {
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
  if (registers > kRowRegisterBudget)
    return std::nullopt;
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
    for (int64_t c = whole ? 0 : u; c < (whole ? plan.chunks : u + 1); ++c) {
      if (vector) {
        Value chunk = vector::LoadOp::create(
            b, loc, VectorType::get({plan.width}, element), operand.get(),
            applyIndexingMap(b, loc, map, rowPoint(chunkStart[c])));
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
        Value laneLeader =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, zero);
        scf::IfOp::create(b, loc, laneLeader, [&](OpBuilder &ib, Location loc) {
          memref::StoreOp::create(ib, loc, total, shared, subgroup);
          scf::YieldOp::create(ib, loc);
        });
        gpu::BarrierOp::create(b, loc);
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
  for (linalg::LinalgOp op : llvm::reverse(ops))
    rewriter.eraseOp(op);
}

// Spreads the parallel loops of `op` over the workgroup's threads: an
// scf.forall with tile 1 (the innermost parallel loop: `threadTile`), each
// iteration running the op on its tile; reduction loops stay whole, so
// each thread reduces serially. Returns the op that replaced `op`.
static FailureOr<Operation *> distributeOp(RewriterBase &rewriter,
                                           linalg::LinalgOp op,
                                           int64_t threadTile) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto tileable = cast<TilingInterface>(op.getOperation());
  SmallVector<Range> domain = tileable.getIterationDomain(rewriter);
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> parallel;
  for (auto [i, it] : llvm::enumerate(iterators))
    if (it == utils::IteratorType::parallel)
      parallel.push_back(i);

  if (parallel.empty()) {
    // Nothing to spread: thread 0 does it all.
    Value tid = gpu::ThreadIdOp::create(rewriter, loc, gpu::Dimension::x);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value first = arith::CmpIOp::create(rewriter, loc,
                                        arith::CmpIPredicate::eq, tid, zero);
    auto ifOp = scf::IfOp::create(rewriter, loc, first, /*withElseRegion=*/false);
    rewriter.moveOpBefore(op, ifOp.thenBlock()->getTerminator());
    return ifOp.getOperation();
  }
  if (parallel.size() > kMaxLinearDims)
    return op.emitError() << "cannot distribute " << parallel.size()
                          << " parallel loops over threads (at most "
                          << kMaxLinearDims << ")";

  // Only a loop that is innermost in memory gets wider thread tiles.
  bool wideInnermost = threadTile > 1 && parallel.back() + 1 == iterators.size();
  SmallVector<OpFoldResult> lbs, ubs, steps;
  SmallVector<Attribute> mapping;
  for (auto [n, i] : llvm::enumerate(parallel)) {
    lbs.push_back(domain[i].offset);
    ubs.push_back(domain[i].size);
    bool wide = wideInnermost && n + 1 == parallel.size();
    steps.push_back(rewriter.getIndexAttr(wide ? threadTile : 1));
    mapping.push_back(threadMapping(op.getContext(), parallel.size() - 1 - n));
  }

  LogicalResult result = success();
  auto forall = scf::ForallOp::create(
      rewriter, loc, lbs, ubs, steps, ValueRange{},
      rewriter.getArrayAttr(mapping),
      [&](OpBuilder &b, Location loc, ValueRange ivs) {
        SmallVector<OpFoldResult> offsets, sizes;
        unsigned next = 0;
        for (auto [i, range] : llvm::enumerate(domain)) {
          if (iterators[i] != utils::IteratorType::parallel) {
            offsets.push_back(range.offset);
            sizes.push_back(range.size);
            continue;
          }
          Value iv = ivs[next];
          int64_t step = *getConstantIntValue(steps[next]);
          ++next;
          offsets.push_back(iv);
          std::optional<int64_t> extent = getConstantIntValue(range.size);
          if (step == 1 || (extent && *extent % step == 0)) {
            sizes.push_back(b.getIndexAttr(step));
            continue;
          }
          // min(step, ub - iv): the last tile may be partial.
          AffineExpr d0, d1;
          bindDims(b.getContext(), d0, d1);
          sizes.push_back(affine::makeComposedFoldedAffineMin(
              b, loc,
              AffineMap::get(2, 0, {b.getAffineConstantExpr(step), d1 - d0},
                             b.getContext()),
              {iv, range.size}));
        }
        FailureOr<TilingResult> tiled =
            tileable.getTiledImplementation(b, offsets, sizes);
        if (failed(tiled))
          result = op.emitError() << "cannot tile '" << op->getName()
                                  << "' over threads";
        scf::InParallelOp::create(b, loc);
      });
  if (failed(result))
    return failure();
  rewriter.eraseOp(op);
  return forall.getOperation();
}

struct GPUDistributeToThreadsPass
    : public kiln::impl::GPUDistributeToThreadsPassBase<
          GPUDistributeToThreadsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    auto strategy = func->getAttrOfType<DictionaryAttr>(kGPUStrategyAttrName);
    auto sizeAttr = strategy
                        ? strategy.getAs<DenseI64ArrayAttr>("workgroup_size")
                        : DenseI64ArrayAttr();
    if (!sizeAttr || sizeAttr.size() != 3) {
      func.emitError() << "kernel '" << func.getSymName() << "' has no "
                       << kGPUStrategyAttrName
                       << " with 'workgroup_size'; run "
                          "kiln-gpu-select-strategy first";
      return signalPassFailure();
    }
    int64_t workgroupSize = sizeAttr[0] * sizeAttr[1] * sizeAttr[2];
    int64_t subgroupSize = 0;
    if (auto attr = strategy.getAs<IntegerAttr>("subgroup_size"))
      subgroupSize = attr.getInt();
    int64_t reductionVector = 1;
    if (auto attr = strategy.getAs<IntegerAttr>("reduction_vector"))
      reductionVector = std::max<int64_t>(1, attr.getInt());
    int64_t threadTile = 1;
    if (auto attr = strategy.getAs<IntegerAttr>("thread_tile"))
      threadTile = std::max<int64_t>(1, attr.getInt());
    auto reductionAttr = strategy.getAs<StringAttr>("reduction");
    // "subgroup": a workgroup reduces one row per subgroup, cooperatively
    // like "workgroup" otherwise.
    bool subgroupRows = reductionAttr && reductionAttr.getValue() == "subgroup";
    bool workgroupReduction =
        reductionAttr &&
        (reductionAttr.getValue() == "workgroup" || subgroupRows);

    SmallVector<linalg::LinalgOp> ops;
    func.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    SmallVector<Operation *> distributed;
    auto intrinsicAttr = strategy.getAs<StringAttr>("intrinsic");
    if (workgroupReduction && !intrinsicAttr &&
        llvm::all_of(ops, [](linalg::LinalgOp op) {
          return op.hasPureBufferSemantics();
        })) {
      if (std::optional<RowPlan> plan = planRowsInRegisters(
              ops, workgroupSize, subgroupSize, subgroupRows)) {
        emitRowsInRegisters(rewriter, ops, *plan, workgroupSize, subgroupSize);
        return;
      }
    }
    for (linalg::LinalgOp op : ops) {
      if (!op.hasPureBufferSemantics()) {
        op.emitError() << "expected a bufferized op; run kiln-gpu-bufferize "
                          "first";
        return signalPassFailure();
      }
      Operation *combiner = workgroupReduction ? getInnermostReductionCombiner(op) : nullptr;
      std::optional<int64_t> reduced = staticReductionSize(op);
      if (combiner && reduced &&
          *reduced >= (subgroupRows ? subgroupSize : workgroupSize)) {
        distributed.push_back(
            emitWorkgroupReduction(rewriter, op, combiner, workgroupSize,
                                   subgroupSize, reductionVector,
                                   subgroupRows));
        continue;
      }
      FailureOr<Operation *> replacement =
          distributeOp(rewriter, op, threadTile);
      if (failed(replacement))
        return signalPassFailure();
      distributed.push_back(*replacement);
    }

    // Threads read what other threads wrote in the previous op (shared
    // temporaries, in-place outputs): a barrier after each distributed op
    // that is followed by memory accesses in the same block.
    for (Operation *done : distributed) {
      bool needed = false;
      for (Operation *op = done->getNextNode(); op && !needed;
           op = op->getNextNode()) {
        if (isa<gpu::BarrierOp>(op))
          break;
        needed = !op->hasTrait<OpTrait::IsTerminator>() &&
                 !isMemoryEffectFree(op) &&
                 !isa<memref::AllocOp, memref::DeallocOp>(op);
      }
      if (!needed)
        continue;
      rewriter.setInsertionPointAfter(done);
      gpu::BarrierOp::create(rewriter, done->getLoc());
    }
  }
};

} // namespace
