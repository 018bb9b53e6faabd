//===- BufferizePass.cpp - One-shot bufferization of host kernels ---------===//
//
// Bufferizes kernels whose signature already is their memref bindings. The
// result tensors were tied to the result bindings by
// kiln-host-convert-to-bindings, so empty-tensor elimination lets the ops
// producing them write straight into the binding.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_HOSTBUFFERIZEPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

// Kernels may import nothing but libm, so temporaries live on the stack.
// Workgroup tiling keeps tile-local temporaries small.
static FailureOr<Value> createStackAllocation(OpBuilder &b, Location loc,
                                              MemRefType type,
                                              ValueRange dynamicSizes,
                                              unsigned alignment) {
  return memref::AllocaOp::create(b, loc, type, dynamicSizes,
                                  b.getI64IntegerAttr(alignment))
      .getResult();
}

// memref.copy of strided buffers lowers to a call into the MLIR runtime
// library; linalg.copy lowers to plain loops.
static LogicalResult createLinalgCopy(OpBuilder &b, Location loc, Value from,
                                      Value to) {
  // In-place tiles are "copied" onto themselves when the workgroup forall
  // bufferizes; that is a no-op.
  if (from == to)
    return success();
  linalg::CopyOp::create(b, loc, from, to);
  return success();
}

// Bufferizing the forall's parallel_insert_slice copies each in-place tile
// onto itself (source and target are identical subviews): drop those.
struct EraseSelfCopy : OpRewritePattern<linalg::CopyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::CopyOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureBufferSemantics())
      return failure();
    Value from = op.getInputs().front(), to = op.getOutputs().front();
    Operation *fromDef = from.getDefiningOp(), *toDef = to.getDefiningOp();
    bool same = from == to ||
                (fromDef && toDef && isa<memref::SubViewOp>(fromDef) &&
                 OperationEquivalence::isEquivalentTo(
                     fromDef, toDef, OperationEquivalence::IgnoreLocations));
    if (!same)
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
};

struct HostBufferizePass
    : public kiln::impl::HostBufferizePassBase<HostBufferizePass> {
  void getDependentDialects(DialectRegistry &registry) const override {
    HostBufferizePassBase::getDependentDialects(registry);
    registerHostCodegenDialects(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bufferization::OneShotBufferizationOptions options;
    options.allocationFn = createStackAllocation;
    options.memCpyFn = createLinalgCopy;
    options.bufferizeFunctionBoundaries = false;

    IRRewriter rewriter(&getContext());
    if (failed(bufferization::eliminateEmptyTensors(rewriter, module)))
      return signalPassFailure();
    bufferization::BufferizationState state;
    if (failed(bufferization::runOneShotBufferize(module, options, state)))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    patterns.add<EraseSelfCopy>(&getContext());
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
