//===- GPUDistributeToThreadsPass.cpp - Workgroup ops over threads --------===//
//
// After bufferization (and after the passes that lower whole rows and
// cooperative reductions), a workgroup runs a sequence of linalg ops on
// buffers. This pass gives each remaining op to all the workgroup's
// threads: a thread-mapped scf.forall over its parallel loops, reduction
// loops serial per thread, and a barrier between consecutive ops.
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
#define GEN_PASS_DEF_GPUDISTRIBUTETOTHREADSPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

// Thread mappings available to one scf.forall (#gpu.thread<linear_dim_i>).
constexpr unsigned kMaxLinearDims = 10;

static Attribute threadMapping(MLIRContext *ctx, unsigned linearDim) {
  return gpu::GPUThreadMappingAttr::get(
      ctx, static_cast<gpu::MappingId>(
               static_cast<unsigned>(gpu::MappingId::LinearDim0) + linearDim));
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
    FailureOr<GPUStrategyAttr> strategy = readGPUStrategy(func);
    if (failed(strategy))
      return signalPassFailure();
    FailureOr<SmallVector<linalg::LinalgOp>> ops = getBufferizedOps(func);
    if (failed(ops))
      return signalPassFailure();
    IRRewriter rewriter(&getContext());
    SmallVector<Operation *> distributed;
    for (linalg::LinalgOp op : *ops) {
      FailureOr<Operation *> replacement =
          distributeOp(rewriter, op, strategy->getThreadTile());
      if (failed(replacement))
        return signalPassFailure();
      distributed.push_back(*replacement);
    }
    insertBarriersAfter(rewriter, distributed);
  }
};
} // namespace
