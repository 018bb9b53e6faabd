//===- CodegenUtils.cpp - Helpers shared by host and GPU codegen ----------===//

#include "CodegenUtils.h"
#include "kiln/Codegen/Passes.h"

#include <cmath>

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace {

Value f32SplatConstant(OpBuilder &b, Location loc, Type type, float value) {
  Attribute attr = b.getF32FloatAttr(value);
  if (auto shaped = dyn_cast<ShapedType>(type))
    attr = DenseElementsAttr::get(shaped, attr);
  return arith::ConstantOp::create(b, loc, type, cast<TypedAttr>(attr));
}

template <typename LogOp>
void scaleDenormalInput(LogOp op, double log2Scale) {
  Type type = op.getType();
  if (!getElementTypeOrSelf(type).isF32())
    return;
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value x = op.getOperand();
  Value minNormal = f32SplatConstant(b, loc, type, std::ldexp(1.0f, -126));
  Value isDenormal = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                           x, minNormal);
  Value scaled =
      arith::MulFOp::create(b, loc, x, f32SplatConstant(b, loc, type, 0x1p23f));
  op.getOperandMutable().assign(
      arith::SelectOp::create(b, loc, isDenormal, scaled, x));

  b.setInsertionPointAfter(op);
  Value zero = f32SplatConstant(b, loc, type, 0.0f);
  Value shift =
      f32SplatConstant(b, loc, type, static_cast<float>(23 * log2Scale));
  Value correction = arith::SelectOp::create(b, loc, isDenormal, shift, zero);
  auto result = arith::SubFOp::create(b, loc, op.getResult(), correction);
  op.getResult().replaceAllUsesExcept(result, result);
}

} // namespace

void kiln::scaleDenormalLogInputs(Operation *root) {
  root->walk([](math::LogOp op) { scaleDenormalInput(op, std::log(2.0)); });
  root->walk([](math::Log2Op op) { scaleDenormalInput(op, 1.0); });
}

Operation *kiln::getTileableResultProducer(func::FuncOp func) {
  if (func.isExternal() || func.getNumResults() != 1)
    return nullptr;
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  Operation *producer = ret.getOperand(0).getDefiningOp();
  if (!isa_and_nonnull<TilingInterface>(producer) ||
      producer->getNumResults() != 1)
    return nullptr;
  return producer;
}

Operation *kiln::findRootOp(func::FuncOp func, Operation *resultProducer) {
  Operation *root = nullptr;
  func.walk([&](linalg::LinalgOp op) {
    if (op.getNumReductionLoops() > 0)
      root = op;
  });
  if (root || resultProducer)
    return root ? root : resultProducer;
  func.walk([&](linalg::LinalgOp op) { root = op; });
  return root;
}

static bool bodyMultiplies(linalg::LinalgOp op) {
  bool found = false;
  op->walk([&](Operation *inner) {
    found |= isa<arith::MulFOp, arith::MulIOp>(inner);
  });
  return found;
}

StringRef kiln::classifyRootOp(Operation *root) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(root);
  if (!linalgOp)
    return "generic";
  if (linalg::isaContractionOpInterface(linalgOp))
    return "matmul";
  if (linalg::isaConvolutionOpInterface(linalgOp)) {
    // Pooling ops are convolutions whose "filter" only gives the window
    // shape: nothing is multiplied.
    bool pooling = root->getName().getStringRef().contains("pooling") ||
                   !bodyMultiplies(linalgOp);
    return pooling ? "pooling" : "conv";
  }
  if (linalgOp.getNumReductionLoops() > 0)
    return "reduction";
  return "elementwise";
}

FailureOr<kiln::GPUStrategyAttr> kiln::readGPUStrategy(func::FuncOp func) {
  if (auto strategy =
          func->getAttrOfType<GPUStrategyAttr>(kGPUStrategyAttrName))
    return strategy;
  return func.emitError() << "kernel '" << func.getSymName() << "' has no "
                          << kGPUStrategyAttrName
                          << " (a #kiln.gpu_strategy); run "
                             "kiln-gpu-select-strategy first";
}

std::optional<unsigned> kiln::getNvidiaSmVersion(StringRef chip) {
  unsigned sm = 0;
  if (!chip.consume_front("sm_") || chip.consumeInteger(10, sm))
    return std::nullopt;
  return sm;
}

std::optional<kiln::RecipeContraction>
kiln::matchRecipeContraction(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  if (!linalgOp || linalgOp.getNumDpsInputs() != 2 ||
      linalgOp.getNumDpsInits() != 1 ||
      !linalg::isaContractionOpInterface(linalgOp))
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(linalgOp);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1)
    return std::nullopt;
  RecipeContraction contraction;
  contraction.batch.assign(dims->batch.begin(), dims->batch.end());
  contraction.m = dims->m[0];
  contraction.n = dims->n[0];
  contraction.k = dims->k[0];
  // Whether `map` gives the batch loops, then `tail`, as plain dims.
  auto indexes = [&](AffineMap map, std::initializer_list<unsigned> tail) {
    SmallVector<unsigned> expected(contraction.batch);
    expected.append(tail);
    if (map.getNumResults() != expected.size())
      return false;
    for (auto [expr, position] : llvm::zip(map.getResults(), expected)) {
      auto dim = dyn_cast<AffineDimExpr>(expr);
      if (!dim || dim.getPosition() != position)
        return false;
    }
    return true;
  };
  SmallVector<AffineMap> maps = linalgOp.getIndexingMapsArray();
  unsigned m = contraction.m, n = contraction.n, k = contraction.k;
  if (!indexes(maps[0], {m, k}) || !indexes(maps[2], {m, n}))
    return std::nullopt;
  if (indexes(maps[1], {k, n}))
    contraction.transposedB = false;
  else if (indexes(maps[1], {n, k}))
    contraction.transposedB = true;
  else
    return std::nullopt;
  return contraction;
}

std::optional<SmallVector<int64_t>>
kiln::getStaticIterationSizes(Operation *op) {
  auto tileable = dyn_cast_or_null<TilingInterface>(op);
  if (!tileable)
    return std::nullopt;
  OpBuilder builder(op);
  SmallVector<int64_t> sizes;
  for (Range range : tileable.getIterationDomain(builder)) {
    std::optional<int64_t> size = getConstantIntValue(range.size);
    std::optional<int64_t> offset = getConstantIntValue(range.offset);
    if (!size || !offset || *offset != 0)
      return std::nullopt;
    sizes.push_back(*size);
  }
  return sizes;
}

LogicalResult kiln::tileResultIntoForall(func::FuncOp func,
                                         ArrayRef<int64_t> tileSizes,
                                         ArrayRef<Attribute> mapping) {
  auto consumer =
      dyn_cast_or_null<TilingInterface>(getTileableResultProducer(func));
  if (!consumer || consumer.getLoopIteratorTypes().size() != tileSizes.size())
    return func.emitError() << "the strategy's tile sizes do not match the op "
                               "producing the kernel result";

  MLIRContext *ctx = func.getContext();
  OpBuilder b(ctx);
  SmallVector<OpFoldResult> sizes;
  for (int64_t t : tileSizes)
    sizes.push_back(b.getIndexAttr(t));

  scf::SCFTilingOptions tilingOptions;
  tilingOptions.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp)
      .setTileSizes(sizes)
      .setMapping(mapping);
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(tilingOptions);

  IRRewriter rewriter(ctx);
  rewriter.setInsertionPoint(consumer);
  FailureOr<scf::SCFTileAndFuseResult> result =
      scf::tileConsumerAndFuseProducersUsingSCF(rewriter, consumer, options);
  if (failed(result))
    return consumer->emitError()
           << "failed to tile '" << consumer->getName() << "' into workgroups";
  for (OpResult res : consumer->getResults()) {
    auto it = result->replacements.find(res);
    if (it != result->replacements.end())
      rewriter.replaceAllUsesWith(res, it->second);
  }
  if (consumer->use_empty())
    rewriter.eraseOp(consumer);
  return success();
}

namespace {

// memref.copy of strided buffers lowers to a call into the MLIR runtime
// library; linalg.copy lowers to plain loops (and, on GPUs, is distributed
// over threads like any linalg op).
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

} // namespace

LogicalResult kiln::bufferizeKernels(
    ModuleOp module,
    bufferization::BufferizationOptions::AllocationFn allocationFn,
    bufferization::BufferizationOptions::DefaultMemorySpaceFn memorySpaceFn) {
  bufferization::OneShotBufferizationOptions options;
  options.allocationFn = allocationFn;
  options.memCpyFn = createLinalgCopy;
  options.bufferizeFunctionBoundaries = false;
  if (memorySpaceFn)
    options.defaultMemorySpaceFn = memorySpaceFn;

  IRRewriter rewriter(module.getContext());
  if (failed(bufferization::eliminateEmptyTensors(rewriter, module)))
    return failure();
  bufferization::BufferizationState state;
  if (failed(bufferization::runOneShotBufferize(module, options, state)))
    return failure();
  RewritePatternSet patterns(module.getContext());
  patterns.add<EraseSelfCopy>(module.getContext());
  return applyPatternsGreedily(module, std::move(patterns));
}

SmallVector<Value> kiln::applyIndexingMap(OpBuilder &b, Location loc,
                                          AffineMap map, ValueRange ivs) {
  SmallVector<Value> indices;
  for (AffineExpr expr : map.getResults())
    indices.push_back(affine::AffineApplyOp::create(
        b, loc, AffineMap::get(map.getNumDims(), 0, expr), ivs));
  return indices;
}

Operation *kiln::getInnermostReductionCombiner(linalg::LinalgOp op) {
  if (!op || op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0)
    return nullptr;
  unsigned numParallel = op.getNumParallelLoops();
  if (numParallel + op.getNumReductionLoops() != op.getNumLoops())
    return nullptr;
  for (auto [i, it] : llvm::enumerate(op.getIteratorTypesArray()))
    if ((it == utils::IteratorType::parallel) != (i < numParallel))
      return nullptr;
  if (!op.getMatchingIndexingMap(op.getDpsInitOperand(0))
           .isProjectedPermutation())
    return nullptr;
  SmallVector<Operation *> combiners;
  if (!matchReduction(op.getRegionOutputArgs(), /*redPos=*/0, combiners) ||
      combiners.size() != 1 || combiners.front()->getNumOperands() != 2 ||
      combiners.front()->getNumResults() != 1 ||
      !arith::getNeutralElement(combiners.front()))
    return nullptr;
  return combiners.front();
}
