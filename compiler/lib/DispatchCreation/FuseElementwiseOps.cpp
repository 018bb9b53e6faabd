//===- FuseElementwiseOps.cpp - Elementwise linalg fusion -----------------===//
//
// Produces the largest elementwise generics before dispatch regions are
// formed, so that each becomes one loop nest in one kernel.
//
//===----------------------------------------------------------------------===//
#include "kiln/DispatchCreation/Passes.h"

#include "DispatchUtils.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_FUSEELEMENTWISEOPSPASS
#include "kiln/DispatchCreation/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {

// Named elementwise ops (linalg.add, linalg.elementwise, linalg.transpose,
// ...) only fuse once written as linalg.generic.
struct GeneralizeElementwiseOp
    : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (isa<linalg::GenericOp>(op) || !kiln::isFusableElementwise(op))
      return rewriter.notifyMatchFailure(op, "not a named elementwise op");
    return linalg::generalizeNamedOp(rewriter, op);
  }
};

struct FuseElementwiseOpsPass
    : kiln::impl::FuseElementwiseOpsPassBase<FuseElementwiseOpsPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    patterns.add<GeneralizeElementwiseOp>(context);
    // Fusing a producer that has other users would compute it twice.
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *fusedOperand) {
          Operation *producer = fusedOperand->get().getDefiningOp();
          return producer && producer->hasOneUse();
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
