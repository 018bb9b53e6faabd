//===- SplitReductions.cpp - Partial reductions for parallelism -----------===//
//
// A reduction with few results and many elements per result (a sum over all
// elements, a column sum over a short row of columns, a few very long rows)
// keeps a kernel's grid small: one workgroup per row, or one thread per
// column. This pass splits such a reduction in two: the first op reduces
// slices of one reduced loop into a partial tensor (S times the results),
// the second combines the S partials per result. Both run at full width.
//
//===----------------------------------------------------------------------===//
#include "kiln/DispatchCreation/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_SPLITREDUCTIONSPASS
#include "kiln/DispatchCreation/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {

// Targets of the split (any GPU; a host workgroup takes a slice of rows or
// columns, so the same shapes suit it): a reduction along rows (the
// innermost loop reduces, one workgroup per result) wants at least
// kRowResults results, each over at least kRowElements elements; a
// reduction across rows (the innermost loop is parallel, one thread per
// result) wants kColumnThreads results, each over at least kColumnElements.
constexpr int64_t kRowResults = 512;
constexpr int64_t kRowMinResults = 256;
constexpr int64_t kRowMinReduced = int64_t{1} << 15;
constexpr int64_t kRowElements = 4096;
constexpr int64_t kColumnThreads = int64_t{1} << 18;
constexpr int64_t kColumnMinThreads = int64_t{1} << 16;
constexpr int64_t kColumnMinReduced = 512;
constexpr int64_t kColumnElements = 32;

// The combiner of `op`'s single reduction (result = combiner(f(inputs),
// accumulator)), if it has a neutral element to start partials from.
static Operation *getCombiner(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0)
    return nullptr;
  SmallVector<Operation *> combiners;
  if (!matchReduction(op.getRegionOutputArgs(), /*redPos=*/0, combiners) ||
      combiners.size() != 1 || combiners.front()->getNumOperands() != 2 ||
      combiners.front()->getNumResults() != 1 ||
      !arith::getNeutralElement(combiners.front()))
    return nullptr;
  return combiners.front();
}

// Whether `op` reduces along rows: its innermost loop reduces, and it is no
// contraction (which computes one result per thread, whatever its loop
// order, as reductions across rows do).
static bool isAlongRows(linalg::LinalgOp op) {
  return op.getIteratorTypesArray().back() == utils::IteratorType::reduction &&
         !linalg::isaContractionOpInterface(op);
}

// How many slices to split a reduced loop of `op` of `size` elements into
// (`results` results of `reduced` elements each); 1 for none.
static int64_t chooseSlices(linalg::LinalgOp op, int64_t size, int64_t results,
                            int64_t reduced) {
  int64_t slices = 1;
  if (isAlongRows(op)) {
    if (results >= kRowMinResults || reduced < kRowMinReduced)
      return 1;
    while (results * slices < kRowResults &&
           reduced / (slices * 2) >= kRowElements)
      slices *= 2;
  } else {
    if (results >= kColumnMinThreads || reduced < kColumnMinReduced)
      return 1;
    while (results * slices < kColumnThreads &&
           reduced / (slices * 2) >= kColumnElements)
      slices *= 2;
  }
  while (slices > 1 && size % slices != 0)
    slices /= 2;
  return slices;
}

static LogicalResult splitReduction(RewriterBase &rewriter,
                                    linalg::LinalgOp op) {
  Operation *combiner = getCombiner(op);
  if (!combiner || !op.hasPureTensorSemantics() ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0))
           .isProjectedPermutation())
    return failure();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return failure();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned numLoops = ranges.size();
  int64_t results = 1, reduced = 1;
  for (unsigned i = 0; i < numLoops; ++i)
    (iterators[i] == utils::IteratorType::parallel ? results : reduced) *=
        ranges[i];
  // The reduced loop to split: the first one that every operand names by
  // itself in at most one position (it is split as it is stored) and that
  // divides into enough slices.
  auto splittable = [&](unsigned dim) {
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<RankedTensorType>(operand.get().getType()))
        continue; // a scalar input
      int64_t uses = 0;
      for (AffineExpr e : op.getMatchingIndexingMap(&operand).getResults()) {
        if (!e.isFunctionOfDim(dim))
          continue;
        if (!isa<AffineDimExpr>(e))
          return false;
        ++uses;
      }
      if (uses > 1)
        return false;
    }
    return true;
  };
  std::optional<unsigned> split;
  int64_t slices = 1;
  for (unsigned i = 0; i < numLoops && !split; ++i) {
    if (iterators[i] != utils::IteratorType::reduction || !splittable(i))
      continue;
    slices = chooseSlices(op, ranges[i], results, reduced);
    if (slices >= 2)
      split = i;
  }
  if (!split)
    return failure();
  OpOperand *init = op.getDpsInitOperand(0);
  int64_t size = ranges[*split];
  int64_t sliceSize = size / slices;

  // Loops of the partial op: the new parallel slice loop `s` first, then the
  // op's loops in order, the split loop now running within its slice. (The
  // innermost loops stay: a reduction innermost keeps its cooperative row
  // strategies, a parallel loop innermost keeps threads along the
  // contiguous dimension.)
  // A contraction's innermost parallel loop moves after its reduction loops
  // (a matrix-vector product then reduces across rows, a thread per chunk
  // of adjacent results along the contiguous dimension).
  MLIRContext *ctx = op.getContext();
  SmallVector<unsigned> order = llvm::to_vector(llvm::seq<unsigned>(numLoops));
  if (!isAlongRows(op) && iterators.back() == utils::IteratorType::reduction) {
    auto lastParallel =
        llvm::find(llvm::reverse(iterators), utils::IteratorType::parallel);
    if (lastParallel != iterators.rend()) {
      unsigned moved = numLoops - 1 - (lastParallel - iterators.rbegin());
      llvm::erase(order, moved);
      order.push_back(moved);
    }
  }
  const unsigned slicePosition = 0;
  SmallVector<unsigned> newPosition(numLoops);
  SmallVector<utils::IteratorType> partialIterators = {
      utils::IteratorType::parallel};
  SmallVector<AffineExpr> partialResults = {
      getAffineDimExpr(slicePosition, ctx)};
  for (unsigned i : order) {
    newPosition[i] = partialIterators.size();
    if (iterators[i] == utils::IteratorType::parallel)
      partialResults.push_back(getAffineDimExpr(newPosition[i], ctx));
    partialIterators.push_back(iterators[i]);
  }
  unsigned numPartialLoops = partialIterators.size();
  AffineExpr sliceDim = getAffineDimExpr(slicePosition, ctx);
  SmallVector<AffineExpr> renumbered;
  for (unsigned i = 0; i < numLoops; ++i)
    renumbered.push_back(getAffineDimExpr(newPosition[i], ctx));

  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    SmallVector<AffineExpr> exprs;
    SmallVector<ReassociationIndices> reassociation;
    SmallVector<int64_t> expandedShape;
    auto type = dyn_cast<RankedTensorType>(input->get().getType());
    for (auto [position, e] : llvm::enumerate(map.getResults())) {
      bool isSplit = e.isFunctionOfDim(*split);
      ReassociationIndices group;
      if (isSplit) {
        exprs.push_back(sliceDim);
        group.push_back(expandedShape.size());
        expandedShape.push_back(slices);
      }
      exprs.push_back(e.replaceDims(renumbered));
      group.push_back(expandedShape.size());
      if (type)
        expandedShape.push_back(isSplit ? sliceSize
                                        : type.getDimSize(position));
      reassociation.push_back(group);
    }
    Value value = input->get();
    if (type && expandedShape.size() != static_cast<size_t>(type.getRank()))
      value = tensor::ExpandShapeOp::create(
          rewriter, loc,
          RankedTensorType::get(expandedShape, type.getElementType()), value,
          reassociation);
    inputs.push_back(value);
    maps.push_back(AffineMap::get(numPartialLoops, 0, exprs, ctx));
  }

  // The partials: one per parallel loop point of the partial op, from the
  // combiner's neutral element.
  Type accType = getElementTypeOrSelf(init->get().getType());
  SmallVector<int64_t> partialShape;
  for (unsigned i = 0; i < numLoops; ++i) {
    if (i == 0)
      partialShape.push_back(slices);
    if (iterators[i] == utils::IteratorType::parallel)
      partialShape.push_back(ranges[i]);
  }
  Value empty = tensor::EmptyOp::create(rewriter, loc, partialShape, accType);
  Value neutral = arith::ConstantOp::create(
      rewriter, loc, *arith::getNeutralElement(combiner));
  Value partialInit =
      linalg::FillOp::create(rewriter, loc, neutral, empty).getResult(0);
  maps.push_back(AffineMap::get(numPartialLoops, 0, partialResults, ctx));
  auto partial = linalg::GenericOp::create(rewriter, loc, partialInit.getType(),
                                           inputs, ValueRange{partialInit},
                                           maps, partialIterators);
  rewriter.cloneRegionBefore(op->getRegion(0), partial.getRegion(),
                             partial.getRegion().end());
  // Loop indices read in the body: the split loop's is s * sliceSize + r.
  for (linalg::IndexOp index : llvm::make_early_inc_range(
           partial.getBody()->getOps<linalg::IndexOp>())) {
    rewriter.setInsertionPoint(index);
    unsigned dim = index.getDim();
    Value replacement =
        linalg::IndexOp::create(rewriter, index.getLoc(), newPosition[dim]);
    if (dim == *split) {
      Value s =
          linalg::IndexOp::create(rewriter, index.getLoc(), slicePosition);
      Value base = arith::MulIOp::create(
          rewriter, index.getLoc(), s,
          arith::ConstantIndexOp::create(rewriter, index.getLoc(), sliceSize));
      replacement =
          arith::AddIOp::create(rewriter, index.getLoc(), base, replacement);
    }
    rewriter.replaceOp(index, replacement);
  }

  // The final op combines the S partials of each result into the original
  // init. Along rows, its slice loop is innermost (a few results, each
  // reduced cooperatively); across rows, outermost (threads along the
  // contiguous dimension of the partials).
  rewriter.setInsertionPoint(op);
  bool sliceInnermost = isAlongRows(op);
  SmallVector<unsigned> finalPosition(numLoops);
  unsigned numFinalParallel = 0;
  for (unsigned i = 0; i < numLoops; ++i)
    if (iterators[i] == utils::IteratorType::parallel)
      finalPosition[i] = numFinalParallel++ + (sliceInnermost ? 0 : 1);
  unsigned numFinalLoops = numFinalParallel + 1;
  unsigned finalSlice = sliceInnermost ? numFinalParallel : 0;
  SmallVector<utils::IteratorType> finalIterators(
      numFinalLoops, utils::IteratorType::parallel);
  finalIterators[finalSlice] = utils::IteratorType::reduction;
  // The partials' dimensions: the slice, then the results in loop order.
  SmallVector<AffineExpr> partialExprs = {getAffineDimExpr(finalSlice, ctx)};
  for (unsigned i = 0; i < numLoops; ++i)
    if (iterators[i] == utils::IteratorType::parallel)
      partialExprs.push_back(getAffineDimExpr(finalPosition[i], ctx));
  SmallVector<AffineExpr> initExprs;
  for (AffineExpr e : op.getMatchingIndexingMap(init).getResults()) {
    auto dim = cast<AffineDimExpr>(e);
    initExprs.push_back(
        getAffineDimExpr(finalPosition[dim.getPosition()], ctx));
  }
  SmallVector<AffineMap> finalMaps = {
      AffineMap::get(numFinalLoops, 0, partialExprs, ctx),
      AffineMap::get(numFinalLoops, 0, initExprs, ctx)};
  auto final = linalg::GenericOp::create(
      rewriter, loc, op->getResultTypes(), partial.getResult(0), init->get(),
      finalMaps, finalIterators,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        IRMapping mapping;
        mapping.map(combiner->getOperand(0), args[0]);
        mapping.map(combiner->getOperand(1), args[1]);
        // The combiner's operands are the body's value and accumulator in
        // either order; the op is commutative for every combiner with a
        // neutral element that the row strategies take.
        Value result = b.clone(*combiner, mapping)->getResult(0);
        linalg::YieldOp::create(b, loc, result);
      });
  rewriter.replaceOp(op, final->getResults());
  return success();
}

struct SplitReductionsPass
    : kiln::impl::SplitReductionsPassBase<SplitReductionsPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.getNumReductionLoops() > 0)
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : candidates)
      (void)splitReduction(rewriter, op);
  }
};

} // namespace
