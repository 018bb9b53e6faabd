//===- GPUVectorizePass.cpp - Per-thread tiles as vector loads/stores -----===//
//
// When the strategy gives each thread `thread_tile` > 1 contiguous elements
// of the innermost loop (128 bits: 4 x f32, 8 x f16), the per-thread tile
// ops are vectorized so that each operand is read and each result written
// with one vector access, which the backends turn into 128-bit memory
// instructions (global_load_dwordx4, ld.global.v4.f32). Tiles that are not
// exactly one contiguous chunk (partial tiles, strided or transposed
// operands, other element types) stay scalar.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "CodegenUtils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_GPUVECTORIZEPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

// Element types whose vectors have the memory layout of their memrefs (i1
// vectors are bit-packed) and that the later stages handle as vectors.
static bool isVectorElementType(Type type) {
  Type element = getElementTypeOrSelf(type);
  return element.isF32() || element.isF16() || element.isBF16() ||
         element.isInteger(8) || element.isInteger(16) || element.isInteger(32);
}

// Whether `operand` reads or writes a contiguous run of the innermost loop
// (its last index is exactly that loop and its innermost stride is 1), or
// does not depend on that loop at all (a broadcast).
static bool isContiguousOrBroadcast(linalg::LinalgOp op, OpOperand &operand) {
  auto type = dyn_cast<MemRefType>(operand.get().getType());
  if (!type)
    return true; // a scalar
  AffineMap map = op.getMatchingIndexingMap(&operand);
  unsigned innermost = op.getNumLoops() - 1;
  if (!map.isFunctionOfDim(innermost))
    return true;
  if (map.getNumResults() == 0 ||
      map.getResults().back() != getAffineDimExpr(innermost, op.getContext()))
    return false;
  for (AffineExpr expr : map.getResults().drop_back())
    if (expr.isFunctionOfDim(innermost))
      return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

// A per-thread tile that is one chunk of `width` contiguous elements: all
// loops parallel and static, the innermost of extent `width`, the others 1.
static bool isVectorChunk(linalg::LinalgOp op, int64_t width) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() == 0 ||
      op.getNumParallelLoops() != op.getNumLoops() ||
      !linalg::hasVectorizationImpl(op))
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (int64_t r : ArrayRef(ranges).drop_back())
    if (r != 1)
      return false;
  if (ranges.back() != width)
    return false;
  for (OpOperand &operand : op->getOpOperands()) {
    if (isa<MemRefType>(operand.get().getType()) &&
        !isVectorElementType(operand.get().getType()))
      return false;
    if (!isContiguousOrBroadcast(op, operand))
      return false;
  }
  return succeeded(linalg::vectorizeOpPrecondition(op));
}

struct GPUVectorizePass
    : public kiln::impl::GPUVectorizePassBase<GPUVectorizePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *ctx = &getContext();
    auto strategy = func->getAttrOfType<DictionaryAttr>(kGPUStrategyAttrName);
    auto widthAttr =
        strategy ? strategy.getAs<IntegerAttr>("thread_tile") : IntegerAttr();
    if (!widthAttr || widthAttr.getInt() <= 1)
      return;
    int64_t width = widthAttr.getInt();

    // 1. Vectorize the chunks (transfer_read / elementwise / transfer_write).
    SmallVector<linalg::LinalgOp> chunks;
    func.walk([&](linalg::LinalgOp op) {
      if (op->getParentOfType<scf::ForallOp>() && isVectorChunk(op, width))
        chunks.push_back(op);
    });
    IRRewriter rewriter(ctx);
    for (linalg::LinalgOp op : chunks) {
      rewriter.setInsertionPoint(op);
      if (failed(linalg::vectorize(rewriter, op))) {
        op.emitError() << "cannot vectorize the per-thread tile of '"
                       << op->getName() << "' although its shape allows it";
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
    }
    if (chunks.empty())
      return;

    // 2. Unit dims cast away, so a chunk is a 1-D vector. This runs to a
    //    fixpoint before broadcasts are lowered: with both pattern sets at
    //    once, a 1-D value broadcast to 1 x W for a leading-unit write (a
    //    chunk computed from linalg.index alone) is cast away and lowered
    //    back forever.
    RewritePatternSet unitDims(ctx);
    vector::populateCastAwayVectorLeadingOneDimPatterns(unitDims);
    vector::populateVectorTransferDropUnitDimsPatterns(unitDims);
    vector::populateVectorToVectorCanonicalizationPatterns(unitDims);
    if (failed(applyPatternsGreedily(func, std::move(unitDims))))
      return signalPassFailure();

    // 3. Broadcasts become a scalar read and a vector.broadcast; contiguous
    //    1-D transfers become vector.load / vector.store.
    RewritePatternSet patterns(ctx);
    vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
    vector::populateVectorTransferDropUnitDimsPatterns(patterns);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateVectorTransferLoweringPatterns(patterns,
                                                   /*maxTransferRank=*/1);
    vector::populateVectorBroadcastLoweringPatterns(patterns);
    vector::populateVectorShapeCastLoweringPatterns(patterns);
    // linalg.index in a chunk vectorizes to vector.step, which no
    // conversion to LLVM takes: a constant [0, 1, ...] instead.
    vector::populateVectorStepLoweringPatterns(patterns);
    vector::populateVectorToVectorCanonicalizationPatterns(patterns);
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
