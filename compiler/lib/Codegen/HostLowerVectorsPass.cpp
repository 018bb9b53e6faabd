//===- HostLowerVectorsPass.cpp - Vector ops to 1-D vector code -----------===//
//
// Upstream progressive vector lowering, in the order the patterns expect:
// high-level ops first, then n-D transfers, then 1-D loads and stores.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_HOSTLOWERVECTORSPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

// Far more rewrites than the lowering of any register tile needs.
constexpr int64_t kMaxRewrites = 50000;

struct HostLowerVectorsPass
    : public kiln::impl::HostLowerVectorsPassBase<HostLowerVectorsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *ctx = &getContext();

    // 0. Reductions over outer dims only (column sums) are elementwise ops
    //    between whole registers; the inner-reduction lowering below would
    //    transpose them into horizontal reductions of scattered elements.
    {
      SmallVector<Operation *> outerReductions;
      func.walk([&](vector::MultiDimReductionOp op) {
        ArrayRef<int64_t> dims = op.getReductionDims();
        bool outerOnly =
            !dims.empty() && static_cast<int64_t>(dims.size()) <
                                 op.getSourceVectorType().getRank();
        for (auto [i, dim] : llvm::enumerate(dims))
          outerOnly &= dim == static_cast<int64_t>(i);
        if (outerOnly)
          outerReductions.push_back(op);
      });
      RewritePatternSet patterns(ctx);
      vector::populateVectorMultiReductionLoweringPatterns(
          patterns, vector::VectorMultiReductionLowering::InnerParallel);
      GreedyRewriteConfig config;
      config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
      if (!outerReductions.empty() &&
          failed(applyOpPatternsGreedily(outerReductions, std::move(patterns),
                                         config)))
        return signalPassFailure();
    }

    // 1. Contractions, reductions, transposes, broadcasts and masks to
    //    operations on 1-D vectors; transfers to minor-identity maps. The
    //    unit dims that register tiles of size 1 leave are cast away first,
    //    so an elementwise tile is a plain vector<Nxf32>.
    {
      RewritePatternSet patterns(ctx);
      vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
      vector::populateVectorContractLoweringPatterns(
          patterns, vector::VectorContractLowering::OuterProduct);
      vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
      vector::populateVectorMultiReductionLoweringPatterns(
          patterns, vector::VectorMultiReductionLowering::InnerReduction);
      vector::populateVectorTransposeLoweringPatterns(
          patterns, vector::VectorTransposeLowering::EltWise);
      vector::populateVectorBroadcastLoweringPatterns(patterns);
      vector::populateVectorShapeCastLoweringPatterns(patterns);
      vector::populateVectorMaskOpLoweringPatterns(patterns);
      vector::populateVectorToVectorCanonicalizationPatterns(patterns);
      // Unit-dim removal and broadcast lowering can undo each other on n-D
      // vectors that cross a block boundary (kernels have none: every
      // vector here comes from a transfer in the same block); bound the
      // rewrites so such input is an error instead of a hang.
      GreedyRewriteConfig config;
      config.setMaxNumRewrites(kMaxRewrites);
      if (failed(applyPatternsGreedily(func, std::move(patterns), config))) {
        func.emitError() << "vector lowering of '" << func.getSymName()
                         << "' did not converge (n-D vectors crossing a "
                            "block or function boundary are not supported)";
        return signalPassFailure();
      }
    }

    // 2. n-D transfers become unrolled 1-D transfers.
    {
      RewritePatternSet patterns(ctx);
      populateVectorToSCFConversionPatterns(
          patterns, VectorTransferToSCFOptions().enableFullUnroll());
      if (failed(applyPatternsGreedily(func, std::move(patterns))))
        return signalPassFailure();
    }

    // 3. Keep the accumulators of reduction loops (the matmul K loop) in
    //    registers, one 1-D vector per row: a read/write pair of the same
    //    loop-invariant slice moves out of the loop and the value is carried
    //    by the loop. The hoisting matches the pair by base memref and index
    //    values and gives up on (chains of) subviews, so subviews are folded
    //    into the transfers and index computations hoisted and deduplicated
    //    first.
    {
      RewritePatternSet patterns(ctx);
      memref::populateFoldMemRefAliasOpPatterns(patterns);
      (void)applyPatternsGreedily(func, std::move(patterns));
    }
    func.walk([](LoopLikeOpInterface loop) { moveLoopInvariantCode(loop); });
    IRRewriter rewriter(ctx);
    DominanceInfo dominance(func);
    eliminateCommonSubExpressions(rewriter, dominance, func);
    linalg::hoistRedundantVectorTransfers(func);

    // 4. 1-D transfers on contiguous memory become vector.load/store (the
    //    others stay transfers: convert-vector-to-llvm emits masked or
    //    element-wise accesses for them).
    {
      RewritePatternSet patterns(ctx);
      vector::populateVectorTransferLoweringPatterns(patterns,
                                                     /*maxTransferRank=*/1);
      vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
      vector::populateVectorShapeCastLoweringPatterns(patterns);
      vector::populateVectorToVectorCanonicalizationPatterns(patterns);
      if (failed(applyPatternsGreedily(func, std::move(patterns))))
        return signalPassFailure();
    }
  }
};

} // namespace
