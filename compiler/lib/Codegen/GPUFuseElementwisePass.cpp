//===- GPUFuseElementwisePass.cpp - Elementwise fusion for GPU kernels ----===//
//
// Every tensor left between two ops of a GPU workgroup becomes a
// shared-memory buffer and a barrier; fusing elementwise producers into
// their consumers' bodies removes most of them.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"
#include "kiln/DispatchCreation/Attention.h"

#include "CodegenUtils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_GPUFUSEELEMENTWISEPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

// Contractions, convolutions and pooling keep their names (strategy
// selection and readers of the IR want to see them); fills stay fills so
// that bufferization can keep initializing outputs in place.
static bool keepNamed(linalg::LinalgOp op) {
  return isa<linalg::GenericOp, linalg::FillOp>(op) ||
         linalg::isaContractionOpInterface(op) ||
         linalg::isaConvolutionOpInterface(op);
}

struct GPUFuseElementwisePass
    : public kiln::impl::GPUFuseElementwisePassBase<GPUFuseElementwisePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // An attention chain is lowered whole (kiln-gpu-lower-attention), which
    // needs its ops as dispatch creation matched them.
    if (Operation *producer = getTileableResultProducer(func))
      if (std::optional<AttentionChain> chain =
              matchAttentionOnTensors(producer))
        if (isFusableAttention(*chain))
          return;
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::LinalgOp> named;
    func.walk([&](linalg::LinalgOp op) {
      if (!keepNamed(op))
        named.push_back(op);
    });
    for (linalg::LinalgOp op : named) {
      rewriter.setInsertionPoint(op);
      // Ops without a generic form (none today) simply stay named.
      (void)linalg::generalizeNamedOp(rewriter, op);
    }

    RewritePatternSet patterns(&getContext());
    // Fuse only producers that are computed once per element anyway: the
    // consumer reads each producer element once (its indexing map is a
    // permutation), so nothing is recomputed.
    linalg::ControlFusionFn control = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
      return producer && consumer &&
             consumer.getMatchingIndexingMap(fused).isPermutation();
    };
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
