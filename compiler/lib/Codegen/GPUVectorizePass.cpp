//===- GPUVectorizePass.cpp - Per-thread tiles as vector loads/stores -----===//
//
// When the strategy gives each thread `thread_tile` > 1 contiguous elements
// of the innermost loop (128 bits: 4 x f32, 8 x f16), the per-thread tile
// ops are vectorized so that each operand is read and each result written
// with one vector access, which the backends turn into 128-bit memory
// instructions (global_load_dwordx4, ld.global.v4.f32). Tiles that are not
// exactly one contiguous chunk (partial tiles, strided or transposed
// operands, other element types) stay scalar. A reduction across rows whose
// thread tile is a chunk of adjacent results (the innermost loop parallel)
// becomes a loop over the reduced elements carrying a vector of partials.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "CodegenUtils.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/IRMapping.h"
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
  // The last index is the innermost loop, or that loop plus terms of other
  // loops (an im2col gather: ow * sw + kw * dw with sw = 1).
  AffineExpr inner = getAffineDimExpr(innermost, op.getContext());
  auto isInnermostPlusOthers = [&](AffineExpr expr) {
    if (expr == inner)
      return true;
    auto sum = dyn_cast<AffineBinaryOpExpr>(expr);
    if (!sum || sum.getKind() != AffineExprKind::Add)
      return false;
    return (sum.getLHS() == inner &&
            !sum.getRHS().isFunctionOfDim(innermost)) ||
           (sum.getRHS() == inner && !sum.getLHS().isFunctionOfDim(innermost));
  };
  if (map.getNumResults() == 0 ||
      !isInnermostPlusOthers(map.getResults().back()))
    return false;
  for (AffineExpr expr : map.getResults().drop_back())
    if (expr.isFunctionOfDim(innermost))
      return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

// Whether every operand of `op` has a vector element type and reads the
// innermost loop contiguously, or not at all.
static bool hasChunkOperands(linalg::LinalgOp op) {
  for (OpOperand &operand : op->getOpOperands()) {
    if (isa<MemRefType>(operand.get().getType()) &&
        !isVectorElementType(operand.get().getType()))
      return false;
    if (!isContiguousOrBroadcast(op, operand))
      return false;
  }
  return true;
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
  return hasChunkOperands(op) && succeeded(linalg::vectorizeOpPrecondition(op));
}

// A per-thread tile of a reduction across rows: the innermost loop parallel
// over one chunk of `width` contiguous elements, the other parallel loops 1,
// static reduction loops, one result, every operand contiguous along the
// chunk or independent of it, and a body of elementwise ops. With no
// reduction loops, the same describes a parallel chunk whose operands the
// upstream vectorizer does not take (an input read through a map that is
// not a projected permutation, such as the im2col gather (n, oh + kh, ow +
// kw, c)): it is vectorized the same way, by hand.
static bool isHandVectorizedChunk(linalg::LinalgOp op, int64_t width) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1)
    return false;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (iterators.back() != utils::IteratorType::parallel ||
      ranges.back() != width)
    return false;
  for (auto [it, r] : llvm::zip(ArrayRef(iterators).drop_back(), ranges))
    if (ShapedType::isDynamic(r) ||
        (it == utils::IteratorType::parallel && r != 1))
      return false;
  OpOperand *init = op.getDpsInitOperand(0);
  if (!op.getMatchingIndexingMap(init).isFunctionOfDim(op.getNumLoops() - 1) ||
      !hasChunkOperands(op))
    return false;
  return llvm::all_of(
      op.getBlock()->without_terminator(), [](Operation &inner) {
        return OpTrait::hasElementwiseMappableTraits(&inner) &&
               llvm::all_of(inner.getResultTypes(),
                            [](Type t) { return t.isIntOrFloat(); });
      });
}

// Rewrites a chunk of isHandVectorizedChunk as a loop nest over its
// reduction loops (none for a parallel chunk) that carries a vector of
// `width` partial results: each step loads one vector per contiguous input
// (a broadcast scalar for the others) and runs the body on vectors; the
// result is stored once. A parallel chunk whose body ignores the init reads
// nothing of it.
static void vectorizeChunkByHand(RewriterBase &b, linalg::LinalgOp op,
                                 int64_t width) {
  Location loc = op.getLoc();
  b.setInsertionPoint(op);
  unsigned numLoops = op.getNumLoops();
  unsigned innermost = numLoops - 1;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto vectorOf = [&](Type element) {
    return VectorType::get({width}, element);
  };
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap initMap = op.getMatchingIndexingMap(init);
  SmallVector<Value> zeros(numLoops, zero);
  Block *body = op.getBlock();
  bool readsInit = !body->getArgument(init->getOperandNumber()).use_empty() ||
                   op.getNumReductionLoops() > 0;
  Value start =
      readsInit
          ? vector::LoadOp::create(
                b, loc, vectorOf(getElementTypeOrSelf(init->get().getType())),
                init->get(), applyIndexingMap(b, loc, initMap, zeros))
                .getResult()
          : arith::ConstantOp::create(
                b, loc,
                b.getZeroAttr(
                    vectorOf(getElementTypeOrSelf(init->get().getType()))))
                .getResult();
  SmallVector<Value> lbs, ubs, steps;
  SmallVector<unsigned> reducedDims;
  for (unsigned i = 0; i < numLoops; ++i) {
    if (iterators[i] != utils::IteratorType::reduction)
      continue;
    reducedDims.push_back(i);
    lbs.push_back(zero);
    ubs.push_back(arith::ConstantIndexOp::create(b, loc, ranges[i]));
    steps.push_back(one);
  }
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, lbs, ubs, steps, ValueRange{start},
      [&](OpBuilder &nb, Location loc, ValueRange loopIvs,
          ValueRange iterArgs) -> scf::ValueVector {
        SmallVector<Value> ivs(zeros);
        for (auto [dim, iv] : llvm::zip(reducedDims, loopIvs))
          ivs[dim] = iv;
        IRMapping mapping;
        DenseMap<Value, Value> broadcasts;
        auto broadcast = [&](Value scalar) {
          Value &v = broadcasts[scalar];
          if (!v)
            v = vector::BroadcastOp::create(nb, loc, vectorOf(scalar.getType()),
                                            scalar);
          return v;
        };
        for (OpOperand *input : op.getDpsInputOperands()) {
          Value source = input->get();
          Value value;
          if (!isa<MemRefType>(source.getType())) {
            value = broadcast(source);
          } else {
            AffineMap map = op.getMatchingIndexingMap(input);
            SmallVector<Value> indices = applyIndexingMap(nb, loc, map, ivs);
            Type element = getElementTypeOrSelf(source.getType());
            value = map.isFunctionOfDim(innermost)
                        ? vector::LoadOp::create(nb, loc, vectorOf(element),
                                                 source, indices)
                              .getResult()
                        : broadcast(
                              memref::LoadOp::create(nb, loc, source, indices));
          }
          mapping.map(body->getArgument(input->getOperandNumber()), value);
        }
        mapping.map(body->getArgument(init->getOperandNumber()),
                    iterArgs.front());
        for (Operation &inner : body->without_terminator()) {
          SmallVector<Value> operands;
          for (Value operand : inner.getOperands()) {
            Value mapped = mapping.lookupOrNull(operand);
            operands.push_back(mapped ? mapped : broadcast(operand));
          }
          SmallVector<Type> types;
          for (Type t : inner.getResultTypes())
            types.push_back(vectorOf(t));
          Operation *vectorOp = nb.create(loc, inner.getName().getIdentifier(),
                                          operands, types, inner.getAttrs());
          mapping.map(inner.getResults(), vectorOp->getResults());
        }
        return {mapping.lookup(body->getTerminator()->getOperand(0))};
      });
  vector::StoreOp::create(b, loc, nest.results.front(), init->get(),
                          applyIndexingMap(b, loc, initMap, zeros));
  b.eraseOp(op);
}

struct GPUVectorizePass
    : public kiln::impl::GPUVectorizePassBase<GPUVectorizePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *ctx = &getContext();
    auto strategy = func->getAttrOfType<GPUStrategyAttr>(kGPUStrategyAttrName);
    if (!strategy || strategy.getThreadTile() <= 1)
      return;
    int64_t width = strategy.getThreadTile();

    // 1. Vectorize the chunks (transfer_read / elementwise / transfer_write);
    //    the others vectorizeChunkByHand takes (reductions across rows, maps
    //    upstream declines) become vector loads, the body on vectors and a
    //    loop carrying a vector of results where they reduce.
    SmallVector<linalg::LinalgOp> chunks, handChunks;
    func.walk([&](linalg::LinalgOp op) {
      if (!op->getParentOfType<scf::ForallOp>())
        return;
      if (isVectorChunk(op, width))
        chunks.push_back(op);
      else if (isHandVectorizedChunk(op, width))
        handChunks.push_back(op);
    });
    IRRewriter rewriter(ctx);
    for (linalg::LinalgOp op : handChunks)
      vectorizeChunkByHand(rewriter, op, width);
    for (linalg::LinalgOp op : chunks) {
      rewriter.setInsertionPoint(op);
      if (failed(linalg::vectorize(rewriter, op))) {
        op.emitError() << "cannot vectorize the per-thread tile of '"
                       << op->getName() << "' although its shape allows it";
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
    }
    if (chunks.empty() && handChunks.empty())
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
