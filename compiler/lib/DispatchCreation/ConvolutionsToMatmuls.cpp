//===- ConvolutionsToMatmuls.cpp - Convolutions as im2col + matmul -------===//
//
// Rewrites f16/bf16 2-D NHWC convolutions into an im2col gather and a
// matmul with an f32 accumulator (see the pass description in Passes.td),
// so that GPU targets run them with the matrix-core contraction recipe.
//
//===----------------------------------------------------------------------===//

#include "kiln/DispatchCreation/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_CONVOLUTIONSTOMATMULSPASS
#include "kiln/DispatchCreation/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {

bool isNarrowFloat(Type type) { return type.isF16() || type.isBF16(); }

// An elementwise linalg.generic over `type`'s shape applying `convert` to
// each element of `input` (an extension or truncation of floats).
Value convertElements(OpBuilder &b, Location loc, Value input,
                      RankedTensorType type, bool extend) {
  Value init =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  int64_t rank = type.getRank();
  SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, type, ValueRange{input}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Type to = type.getElementType();
        Value converted =
            extend ? arith::ExtFOp::create(nb, nloc, to, args[0]).getResult()
                   : arith::TruncFOp::create(nb, nloc, to, args[0]).getResult();
        linalg::YieldOp::create(nb, nloc, converted);
      });
  return generic.getResult(0);
}

// The operand types of a convolution this pass rewrites: static shapes,
// an f16 or bf16 input and filter of the same type, and an f32 or
// same-type result.
struct ConvolutionTypes {
  RankedTensorType filter, output;
  Type element, accumulator;
  SmallVector<int64_t> strides, dilations; // (height, width)
};
template <typename ConvOp>
std::optional<ConvolutionTypes> getConvolutionTypes(ConvOp conv) {
  auto input = dyn_cast<RankedTensorType>(conv.getDpsInputs()[0].getType());
  auto filter = dyn_cast<RankedTensorType>(conv.getDpsInputs()[1].getType());
  auto output = dyn_cast<RankedTensorType>(conv.getDpsInits()[0].getType());
  if (!conv.hasPureTensorSemantics() || !input || !filter || !output ||
      !input.hasStaticShape() || !filter.hasStaticShape() ||
      !output.hasStaticShape())
    return std::nullopt;
  Type element = input.getElementType();
  Type accumulator = output.getElementType();
  if (!isNarrowFloat(element) || filter.getElementType() != element ||
      !(accumulator.isF32() || accumulator == element))
    return std::nullopt;
  return ConvolutionTypes{
      filter,
      output,
      element,
      accumulator,
      SmallVector<int64_t>(conv.getStrides().template getValues<int64_t>()),
      SmallVector<int64_t>(conv.getDilations().template getValues<int64_t>())};
}

// The gather of a convolution's input patches: a linalg.generic writing a
// tensor of `shape` through `inputMap`.
Value createPatches(RewriterBase &rewriter, Location loc, Value input,
                    AffineMap inputMap, ArrayRef<int64_t> shape, Type element) {
  auto type = RankedTensorType::get(shape, element);
  Value init = tensor::EmptyOp::create(rewriter, loc, shape, element);
  unsigned rank = shape.size();
  return linalg::GenericOp::create(
             rewriter, loc, type, ValueRange{input}, ValueRange{init},
             SmallVector<AffineMap>{inputMap,
                                    rewriter.getMultiDimIdentityMap(rank)},
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [](OpBuilder &b, Location l, ValueRange args) {
               linalg::YieldOp::create(b, l, args[0]);
             })
      .getResult(0);
}

LogicalResult rewriteConvolution(RewriterBase &rewriter,
                                 linalg::Conv2DNhwcHwcfOp conv) {
  std::optional<ConvolutionTypes> types = getConvolutionTypes(conv);
  if (!types)
    return failure();
  RankedTensorType filterType = types->filter, outputType = types->output;
  Type element = types->element, accElement = types->accumulator;

  Location loc = conv.getLoc();
  rewriter.setInsertionPoint(conv);
  ArrayRef<int64_t> out = outputType.getShape();    // N, OH, OW, F
  ArrayRef<int64_t> filter = filterType.getShape(); // KH, KW, C, F
  int64_t n = out[0], oh = out[1], ow = out[2], f = out[3];
  int64_t kh = filter[0], kw = filter[1], c = filter[2];
  ArrayRef<int64_t> strides = types->strides, dilations = types->dilations;

  // im2col: patches[n][oh][ow][kh][kw][c] = input[n][oh*sh + kh*dh]
  // [ow*sw + kw*dw][c].
  MLIRContext *context = rewriter.getContext();
  AffineExpr dn, doh, dow, dkh, dkw, dc;
  bindDims(context, dn, doh, dow, dkh, dkw, dc);
  AffineMap inputMap =
      AffineMap::get(6, 0,
                     {dn, doh * strides[0] + dkh * dilations[0],
                      dow * strides[1] + dkw * dilations[1], dc},
                     context);
  Value patches = createPatches(rewriter, loc, conv.getDpsInputs()[0], inputMap,
                                {n, oh, ow, kh, kw, c}, element);
  Value a = tensor::CollapseShapeOp::create(
      rewriter, loc, patches,
      SmallVector<ReassociationIndices>{{0, 1, 2}, {3, 4, 5}});
  Value b = tensor::CollapseShapeOp::create(
      rewriter, loc, conv.getDpsInputs()[1],
      SmallVector<ReassociationIndices>{{0, 1, 2}, {3}});

  // The f32 accumulator: the init itself, a widened fill, or the init
  // extended.
  SmallVector<ReassociationIndices> rows = {{0, 1, 2}, {3}};
  Value init = conv.getDpsInits()[0];
  auto acc2dType =
      RankedTensorType::get({n * oh * ow, f}, rewriter.getF32Type());
  Value acc;
  if (accElement.isF32()) {
    acc = tensor::CollapseShapeOp::create(rewriter, loc, init, rows);
  } else if (auto fill = init.getDefiningOp<linalg::FillOp>()) {
    Value value = arith::ExtFOp::create(rewriter, loc, rewriter.getF32Type(),
                                        fill.getDpsInputs()[0]);
    Value empty = tensor::EmptyOp::create(rewriter, loc, acc2dType.getShape(),
                                          rewriter.getF32Type());
    acc = linalg::FillOp::create(rewriter, loc, value, empty).getResult(0);
  } else {
    Value init2d = tensor::CollapseShapeOp::create(rewriter, loc, init, rows);
    acc = convertElements(rewriter, loc, init2d, acc2dType, /*extend=*/true);
  }
  Value product = linalg::MatmulOp::create(rewriter, loc, acc2dType,
                                           ValueRange{a, b}, ValueRange{acc})
                      .getResult(0);
  if (!accElement.isF32())
    product =
        convertElements(rewriter, loc, product,
                        RankedTensorType::get(acc2dType.getShape(), accElement),
                        /*extend=*/false);
  rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(conv, outputType, product,
                                                     rows);
  return success();
}

// The single user of an NCHW convolution's result when it is an
// elementwise linalg.generic that can run on the N x F x (OH*OW) product:
// all loops parallel, one result, the convolution's result read through
// the identity map, every other input either read through the identity
// (same shape) or through a projection that does not use the spatial loops
// (a per-channel bias).
linalg::GenericOp getCollapsibleConsumer(Value result) {
  if (!result.hasOneUse())
    return nullptr;
  auto generic = dyn_cast<linalg::GenericOp>(*result.getUsers().begin());
  if (!generic || generic.getNumDpsInits() != 1 || generic.getNumLoops() != 4 ||
      generic.getNumParallelLoops() != 4 || !generic.hasPureTensorSemantics() ||
      !generic.getBody()->getOps<linalg::IndexOp>().empty())
    return nullptr;
  auto resultType = cast<RankedTensorType>(result.getType());
  for (OpOperand &operand : generic->getOpOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(&operand);
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!type)
      return nullptr;
    if (map.isIdentity()) {
      if (type.getShape() != resultType.getShape())
        return nullptr;
      continue;
    }
    if (operand.get() == result || !map.isProjectedPermutation() ||
        map.isFunctionOfDim(2) || map.isFunctionOfDim(3) ||
        generic.isDpsInit(&operand))
      return nullptr;
  }
  return generic;
}

// Rebuilds `consumer`, which reads `current` (N x F x OH x OW), on `flat`,
// the same values as the product's shape (N x F x P, or F x P for one
// image): identity operands collapsed like the output, the others' maps
// renamed (n, f, oh, ow) -> (n, f, p) (one image: n dropped). Returns the
// rebuilt result.
Value rebuildOnProduct(RewriterBase &rewriter, linalg::GenericOp consumer,
                       Value current, Value flat,
                       ArrayRef<ReassociationIndices> groups, bool batched) {
  Location loc = consumer.getLoc();
  MLIRContext *context = rewriter.getContext();
  rewriter.setInsertionPoint(consumer);
  auto flatType = cast<RankedTensorType>(flat.getType());
  unsigned rank = flatType.getRank();
  // Old dims n and f (oh and ow are never used by a renamed map).
  SmallVector<AffineExpr> rename(4, getAffineConstantExpr(0, context));
  if (batched) {
    rename[0] = getAffineDimExpr(0, context);
    rename[1] = getAffineDimExpr(1, context);
  } else {
    rename[1] = getAffineDimExpr(0, context);
  }
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : consumer.getDpsInputOperands()) {
    AffineMap map = consumer.getMatchingIndexingMap(input);
    if (input->get() == current) {
      inputs.push_back(flat);
      maps.push_back(rewriter.getMultiDimIdentityMap(rank));
    } else if (map.isIdentity()) {
      inputs.push_back(
          tensor::CollapseShapeOp::create(rewriter, loc, input->get(), groups));
      maps.push_back(rewriter.getMultiDimIdentityMap(rank));
    } else {
      inputs.push_back(input->get());
      maps.push_back(map.replaceDimsAndSymbols(rename, {}, rank, 0));
    }
  }
  auto outType = cast<RankedTensorType>(consumer.getResult(0).getType());
  auto movedType =
      RankedTensorType::get(flatType.getShape(), outType.getElementType());
  Value init = tensor::EmptyOp::create(rewriter, loc, movedType.getShape(),
                                       movedType.getElementType());
  maps.push_back(rewriter.getMultiDimIdentityMap(rank));
  auto moved = linalg::GenericOp::create(
      rewriter, loc, movedType, inputs, ValueRange{init}, maps,
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel));
  IRMapping mapping;
  consumer.getRegion().cloneInto(&moved.getRegion(), mapping);
  return moved.getResult(0);
}

// Replaces the NCHW convolution by `product` (its values in the product's
// shape) expanded back, after moving the chain of elementwise consumers
// that getCollapsibleConsumer accepts (bias, then activation, ...) onto
// the product's shape, so that they can be the contraction's epilogue.
void replaceWithProduct(RewriterBase &rewriter, linalg::Conv2DNchwFchwOp conv,
                        Value product, ArrayRef<ReassociationIndices> groups,
                        bool batched) {
  Value current = conv.getResult(0), flat = product;
  SmallVector<linalg::GenericOp> moved;
  while (linalg::GenericOp consumer = getCollapsibleConsumer(current)) {
    flat = rebuildOnProduct(rewriter, consumer, current, flat, groups, batched);
    moved.push_back(consumer);
    current = consumer.getResult(0);
  }
  rewriter.setInsertionPointAfterValue(flat);
  Value expanded = tensor::ExpandShapeOp::create(
      rewriter, conv.getLoc(), current.getType(), flat, groups);
  rewriter.replaceAllUsesWith(current, expanded);
  for (linalg::GenericOp consumer : llvm::reverse(moved))
    rewriter.eraseOp(consumer);
  rewriter.eraseOp(conv);
}

// NCHW x FCHW: the filter is already the F x (C*KH*KW) matrix A and the
// patches[n][c][kh][kw][oh][ow] = input[n][c][oh*sh + kh*dh][ow*sw + kw*dw]
// are B, (C*KH*KW) x (OH*OW) per image, contiguous along ow; the product
// F x (OH*OW) per image is the NCHW output as it is. One image: a matmul;
// a batch: a batch_matmul with the filter broadcast over the images (a
// small copy: filters are small next to activations).
LogicalResult rewriteConvolution(RewriterBase &rewriter,
                                 linalg::Conv2DNchwFchwOp conv) {
  std::optional<ConvolutionTypes> types = getConvolutionTypes(conv);
  if (!types)
    return failure();
  RankedTensorType filterType = types->filter, outputType = types->output;
  Type element = types->element, accElement = types->accumulator;

  Location loc = conv.getLoc();
  rewriter.setInsertionPoint(conv);
  ArrayRef<int64_t> out = outputType.getShape();    // N, F, OH, OW
  ArrayRef<int64_t> filter = filterType.getShape(); // F, C, KH, KW
  int64_t n = out[0], f = out[1], oh = out[2], ow = out[3];
  int64_t c = filter[1], kh = filter[2], kw = filter[3];
  int64_t k = c * kh * kw, p = oh * ow;
  bool batched = n > 1;
  ArrayRef<int64_t> strides = types->strides, dilations = types->dilations;

  MLIRContext *context = rewriter.getContext();
  AffineExpr dn, dc, dkh, dkw, doh, dow;
  bindDims(context, dn, dc, dkh, dkw, doh, dow);
  AffineMap inputMap =
      AffineMap::get(6, 0,
                     {dn, dc, doh * strides[0] + dkh * dilations[0],
                      dow * strides[1] + dkw * dilations[1]},
                     context);
  Value patches = createPatches(rewriter, loc, conv.getDpsInputs()[0], inputMap,
                                {n, c, kh, kw, oh, ow}, element);
  // B: K x P, or N x K x P.
  SmallVector<ReassociationIndices> patchGroups =
      batched ? SmallVector<ReassociationIndices>{{0}, {1, 2, 3}, {4, 5}}
              : SmallVector<ReassociationIndices>{{0, 1, 2, 3}, {4, 5}};
  Value bMatrix =
      tensor::CollapseShapeOp::create(rewriter, loc, patches, patchGroups);
  // A: F x K, broadcast to N x F x K for a batch.
  Value aMatrix = tensor::CollapseShapeOp::create(
      rewriter, loc, conv.getDpsInputs()[1],
      SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
  if (batched) {
    Value init = tensor::EmptyOp::create(rewriter, loc, {n, f, k}, element);
    aMatrix = linalg::BroadcastOp::create(rewriter, loc, aMatrix, init,
                                          ArrayRef<int64_t>{0})
                  ->getResult(0);
  }

  // The f32 accumulator, F x P or N x F x P: a fill of the widened value,
  // or the init (collapsed, extended when narrow).
  Type f32 = rewriter.getF32Type();
  SmallVector<int64_t> productShape =
      batched ? SmallVector<int64_t>{n, f, p} : SmallVector<int64_t>{f, p};
  auto productType = RankedTensorType::get(productShape, f32);
  SmallVector<ReassociationIndices> outGroups =
      batched ? SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}}
              : SmallVector<ReassociationIndices>{{0, 1}, {2, 3}};
  Value init = conv.getDpsInits()[0];
  Value acc;
  if (auto fill = init.getDefiningOp<linalg::FillOp>();
      fill && !accElement.isF32()) {
    Value value =
        arith::ExtFOp::create(rewriter, loc, f32, fill.getDpsInputs()[0]);
    Value empty = tensor::EmptyOp::create(rewriter, loc, productShape, f32);
    acc = linalg::FillOp::create(rewriter, loc, value, empty).getResult(0);
  } else {
    Value collapsed =
        tensor::CollapseShapeOp::create(rewriter, loc, init, outGroups);
    acc = accElement.isF32() ? collapsed
                             : convertElements(rewriter, loc, collapsed,
                                               productType, /*extend=*/true);
  }
  Value product =
      batched ? linalg::BatchMatmulOp::create(rewriter, loc, productType,
                                              ValueRange{aMatrix, bMatrix},
                                              ValueRange{acc})
                    .getResult(0)
              : linalg::MatmulOp::create(rewriter, loc, productType,
                                         ValueRange{aMatrix, bMatrix},
                                         ValueRange{acc})
                    .getResult(0);
  if (!accElement.isF32())
    product = convertElements(rewriter, loc, product,
                              RankedTensorType::get(productShape, accElement),
                              /*extend=*/false);
  replaceWithProduct(rewriter, conv, product, outGroups, batched);
  return success();
}

struct ConvolutionsToMatmulsPass
    : public kiln::impl::ConvolutionsToMatmulsPassBase<
          ConvolutionsToMatmulsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> convs;
    getOperation().walk([&](Operation *op) {
      if (isa<linalg::Conv2DNhwcHwcfOp, linalg::Conv2DNchwFchwOp>(op))
        convs.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *conv : convs) {
      if (auto nhwc = dyn_cast<linalg::Conv2DNhwcHwcfOp>(conv))
        (void)rewriteConvolution(rewriter, nhwc);
      else
        (void)rewriteConvolution(rewriter,
                                 cast<linalg::Conv2DNchwFchwOp>(conv));
    }
  }
};

} // namespace
