//===- GPULowerWorkgroupReductionsPass.cpp - Reductions by whole workgroups
//-===//
//
// Under the "workgroup" (or "subgroup") reduction strategy, a linalg op that
// reduces over its innermost loops, with enough elements per output for
// the threads, is rewritten into a cooperative reduction: every thread
// folds a strided slice into a partial, subgroups combine lanes with
// gpu.subgroup_reduce, and partials meet in shared memory (see
// emitWorkgroupReduction). Other ops are left to
// kiln-gpu-distribute-to-threads.
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

namespace mlir::kiln {
#define GEN_PASS_DEF_GPULOWERWORKGROUPREDUCTIONSPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

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
static Operation *
emitWorkgroupReduction(RewriterBase &rewriter, linalg::LinalgOp op,
                       Operation *combiner, int64_t workgroupSize,
                       int64_t subgroupSize, int64_t vectorWidth,
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
  const bool perSubgroup =
      subgroupRows && subgroupKind && tileRows == workgroupSize / subgroupSize;
  // Threads that reduce one row together.
  const int64_t span = perSubgroup ? subgroupSize : workgroupSize;
  // Chunks of `width` consecutive elements per thread (128 bits of the
  // widest contiguous input), `unroll` chunks per step: one innermost reduced
  // loop whose extent splits evenly into them. The chunks of a step are
  // loaded before any is reduced, so that several loads are in flight.
  int64_t width = 1, unroll = 1;
  std::optional<int64_t> extent = reducedSizes.size() == 1
                                      ? getConstantIntValue(reducedSizes[0])
                                      : std::nullopt;
  if (vectorWidth > 1 && extent) {
    int64_t bits = 0;
    for (OpOperand *input : op.getDpsInputOperands())
      if (classifyChunkRead(op, *input, numParallel) == ChunkRead::Vector)
        bits =
            std::max<int64_t>(bits, getElementTypeOrSelf(input->get().getType())
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
  Value neutral =
      arith::ConstantOp::create(b, loc, *arith::getNeutralElement(combiner));
  // The thread's index among the `span` that share its row.
  Value self = tid;
  if (perSubgroup)
    self = arith::RemUIOp::create(
        b, loc, tid, arith::ConstantIndexOp::create(b, loc, subgroupSize));

  auto reduceRow = [&](OpBuilder &nb, Location loc, ValueRange parallelIvs) {
    // On the thread for which `isWriter` holds: the output element of the
    // row at `parallelIvs` becomes combine(output, total()).
    auto foldIntoOutput =
        [&](Value isWriter, function_ref<Value(OpBuilder &, Location)> total) {
          scf::IfOp::create(
              nb, loc, isWriter, [&](OpBuilder &ib, Location loc) {
                SmallVector<Value> ivs(parallelIvs);
                ivs.append(reducedSizes.size(), zero);
                SmallVector<Value> outIndices = applyIndexingMap(
                    ib, loc, op.getMatchingIndexingMap(init), ivs);
                Value old =
                    memref::LoadOp::create(ib, loc, init->get(), outIndices);
                memref::StoreOp::create(
                    ib, loc, combine(ib, combiner, old, total(ib, loc)),
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
      stride = arith::ConstantIndexOp::create(nb, loc, span * width * unroll);
    }
    auto partialLoop = scf::ForOp::create(
        nb, loc, start, reducedTotal, stride, ValueRange{neutral},
        [&](OpBuilder &lb, Location loc, Value k, ValueRange iterArgs) {
          auto pointAt = [&](Value index) {
            SmallVector<Value> ivs(parallelIvs);
            llvm::append_range(ivs, delinearize(lb, loc, index, reducedSizes));
            return ivs;
          };
          auto offset = [&](Value base, int64_t by) {
            return by == 0 ? base
                           : arith::AddIOp::create(
                                 lb, loc, base,
                                 arith::ConstantIndexOp::create(lb, loc, by))
                                 .getResult();
          };
          Block *body = op.getBlock();
          // Per chunk and input: a vector, or one scalar for the chunk.
          SmallVector<DenseMap<OpOperand *, Value>> chunkValues(unroll);
          if (width > 1) {
            for (int64_t u = 0; u < unroll; ++u) {
              SmallVector<Value> base = pointAt(offset(k, u * span * width));
              for (OpOperand *input : op.getDpsInputOperands()) {
                switch (classifyChunkRead(op, *input, numParallel)) {
                case ChunkRead::Vector: {
                  auto vectorType = VectorType::get(
                      {width}, getElementTypeOrSelf(input->get().getType()));
                  chunkValues[u][input] = vector::LoadOp::create(
                      lb, loc, vectorType, input->get(),
                      applyIndexingMap(lb, loc,
                                       op.getMatchingIndexingMap(input), base));
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
                  value = vector::ExtractOp::create(lb, loc, value,
                                                    ArrayRef<int64_t>{e});
                if (!value)
                  value = loadOperand(lb, loc, op, *input, ivs);
                mapping.map(body->getArgument(input->getOperandNumber()),
                            value);
              }
              mapping.map(body->getArgument(init->getOperandNumber()), acc);
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
      Value leader =
          arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::eq, self, zero);
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
      publishSubgroupTotal(nb, loc, subgroupTotal, lane, shared, subgroup);
      Value first =
          arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::eq, tid, zero);
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
    for (int64_t stride = llvm::PowerOf2Ceil(workgroupSize) / 2; stride >= 1;
         stride /= 2) {
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
    Value first =
        arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::eq, tid, zero);
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

struct GPULowerWorkgroupReductionsPass
    : public kiln::impl::GPULowerWorkgroupReductionsPassBase<
          GPULowerWorkgroupReductionsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    FailureOr<GPUStrategyAttr> strategy = readGPUStrategy(func);
    if (failed(strategy))
      return signalPassFailure();
    if (!strategy->reducesRowsTogether())
      return;
    FailureOr<SmallVector<linalg::LinalgOp>> ops = getBufferizedOps(func);
    if (failed(ops))
      return signalPassFailure();
    bool subgroupRows = strategy->getReduction() == GPUReduction::Subgroup;
    int64_t workgroupSize = strategy->getWorkgroupSize();
    int64_t subgroupSize = strategy->getSubgroupSize();
    IRRewriter rewriter(&getContext());
    SmallVector<Operation *> lowered;
    for (linalg::LinalgOp op : *ops) {
      Operation *combiner = getInnermostReductionCombiner(op);
      std::optional<int64_t> reduced = staticReductionSize(op);
      if (!combiner || !reduced ||
          *reduced < (subgroupRows ? subgroupSize : workgroupSize))
        continue;
      lowered.push_back(emitWorkgroupReduction(
          rewriter, op, combiner, workgroupSize, subgroupSize,
          strategy->getReductionVector(), subgroupRows));
    }
    insertBarriersAfter(rewriter, lowered);
  }
};
} // namespace
