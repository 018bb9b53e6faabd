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

LogicalResult rewriteConvolution(RewriterBase &rewriter,
                                 linalg::Conv2DNhwcHwcfOp conv) {
  auto inputType = dyn_cast<RankedTensorType>(conv.getDpsInputs()[0].getType());
  auto filterType =
      dyn_cast<RankedTensorType>(conv.getDpsInputs()[1].getType());
  auto outputType = dyn_cast<RankedTensorType>(conv.getDpsInits()[0].getType());
  if (!conv.hasPureTensorSemantics() || !inputType || !filterType ||
      !outputType || !inputType.hasStaticShape() ||
      !filterType.hasStaticShape() || !outputType.hasStaticShape())
    return failure();
  Type element = inputType.getElementType();
  Type accElement = outputType.getElementType();
  if (!isNarrowFloat(element) || filterType.getElementType() != element ||
      !(accElement.isF32() || accElement == element))
    return failure();

  Location loc = conv.getLoc();
  rewriter.setInsertionPoint(conv);
  ArrayRef<int64_t> out = outputType.getShape();    // N, OH, OW, F
  ArrayRef<int64_t> filter = filterType.getShape(); // KH, KW, C, F
  int64_t n = out[0], oh = out[1], ow = out[2], f = out[3];
  int64_t kh = filter[0], kw = filter[1], c = filter[2];
  SmallVector<int64_t> strides(conv.getStrides().getValues<int64_t>());
  SmallVector<int64_t> dilations(conv.getDilations().getValues<int64_t>());

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
  auto patchesType = RankedTensorType::get({n, oh, ow, kh, kw, c}, element);
  Value patchesInit =
      tensor::EmptyOp::create(rewriter, loc, patchesType.getShape(), element);
  auto patches = linalg::GenericOp::create(
      rewriter, loc, patchesType, ValueRange{conv.getDpsInputs()[0]},
      ValueRange{patchesInit},
      SmallVector<AffineMap>{inputMap, rewriter.getMultiDimIdentityMap(6)},
      SmallVector<utils::IteratorType>(6, utils::IteratorType::parallel),
      [](OpBuilder &b, Location l, ValueRange args) {
        linalg::YieldOp::create(b, l, args[0]);
      });
  Value a = tensor::CollapseShapeOp::create(
      rewriter, loc, patches.getResult(0),
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

struct ConvolutionsToMatmulsPass
    : public kiln::impl::ConvolutionsToMatmulsPassBase<
          ConvolutionsToMatmulsPass> {
  void runOnOperation() override {
    SmallVector<linalg::Conv2DNhwcHwcfOp> convs;
    getOperation().walk(
        [&](linalg::Conv2DNhwcHwcfOp conv) { convs.push_back(conv); });
    IRRewriter rewriter(&getContext());
    for (linalg::Conv2DNhwcHwcfOp conv : convs)
      (void)rewriteConvolution(rewriter, conv);
  }
};

} // namespace
