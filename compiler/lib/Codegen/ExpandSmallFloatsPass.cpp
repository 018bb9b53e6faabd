//===- ExpandSmallFloatsPass.cpp - f16/bf16 conversions as integer ops ----===//
//
// Generic x86-64 has no instructions for half or bfloat conversions, and
// LLVM lowers them to compiler-rt/libgcc calls that a host kernel may not
// import. Arithmetic on those types is already done in f32 (upstream
// arith-emulate-unsupported-floats / math-extend-to-supported-types); this
// pass expands the remaining extf/truncf into integer bit manipulation.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_HOSTEXPANDSMALLFLOATSPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

static bool isSmallFloat(Type type) {
  return isa<Float16Type, BFloat16Type>(getElementTypeOrSelf(type));
}

// `type` with its element type replaced (scalars and vectors alike).
static Type withElementType(Type type, Type elementType) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    return shaped.clone(elementType);
  return elementType;
}

static Value intConstant(OpBuilder &b, Location loc, Type type,
                         int64_t value) {
  Type elementType = getElementTypeOrSelf(type);
  TypedAttr attr = b.getIntegerAttr(elementType, value);
  if (auto shaped = dyn_cast<ShapedType>(type))
    attr = SplatElementsAttr::get(shaped, attr);
  return arith::ConstantOp::create(b, loc, attr);
}

static Value floatConstant(OpBuilder &b, Location loc, Type type,
                           double value) {
  Type elementType = getElementTypeOrSelf(type);
  TypedAttr attr = b.getFloatAttr(elementType, value);
  if (auto shaped = dyn_cast<ShapedType>(type))
    attr = SplatElementsAttr::get(shaped, attr);
  return arith::ConstantOp::create(b, loc, attr);
}

// extf f16/bf16 -> f64 and truncf f64 -> f16/bf16 go through f32, so only
// the f32 forms need an expansion. (f64 -> f16 rounds twice; the error is
// at most one f16 ulp in rare halfway cases.) `CastOp` is arith::ExtFOp,
// whose source is the f16/bf16 side, or arith::TruncFOp, whose result is.
template <typename CastOp> struct SplitWideCast : OpRewritePattern<CastOp> {
  using OpRewritePattern<CastOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(CastOp op,
                                PatternRewriter &rewriter) const override {
    Type small = op.getIn().getType();
    Type other = op.getType();
    if constexpr (std::is_same_v<CastOp, arith::TruncFOp>)
      std::swap(small, other);
    if (!isSmallFloat(small) || getElementTypeOrSelf(other).isF32())
      return failure();
    Type f32Type = withElementType(op.getType(), rewriter.getF32Type());
    Value f32 = CastOp::create(rewriter, op.getLoc(), f32Type, op.getIn());
    rewriter.replaceOpWithNewOp<CastOp>(op, op.getType(), f32);
    return success();
  }
};

// f16 -> f32: rebias the exponent and widen the mantissa; subnormal halves
// are converted exactly through an f32 multiply by 2^-24.
struct ExpandF16ExtF : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    Type inType = op.getIn().getType();
    if (!isa<Float16Type>(getElementTypeOrSelf(inType)) ||
        !getElementTypeOrSelf(op.getType()).isF32())
      return failure();
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Type i16 = withElementType(inType, b.getI16Type());
    Type i32 = withElementType(inType, b.getI32Type());
    Type f32 = op.getType();
    auto c = [&](int64_t v) { return intConstant(b, loc, i32, v); };

    Value h = arith::ExtUIOp::create(
        b, loc, i32, arith::BitcastOp::create(b, loc, i16, op.getIn()));
    Value sign = arith::ShLIOp::create(
        b, loc, arith::AndIOp::create(b, loc, h, c(0x8000)), c(16));
    Value exp = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, h, c(10)), c(0x1f));
    Value mant = arith::AndIOp::create(b, loc, h, c(0x3ff));
    Value mantBits = arith::ShLIOp::create(b, loc, mant, c(13));

    // Normal: exponent bias 15 -> 127.
    Value normal = arith::OrIOp::create(
        b, loc,
        arith::ShLIOp::create(b, loc, arith::AddIOp::create(b, loc, exp, c(112)),
                              c(23)),
        mantBits);
    // Inf / NaN: all-ones exponent, payload kept.
    Value special = arith::OrIOp::create(b, loc, c(0x7f800000), mantBits);
    // Zero / subnormal: mant * 2^-24, exact in f32.
    Value subnormalF = arith::MulFOp::create(
        b, loc, arith::UIToFPOp::create(b, loc, f32, mant),
        floatConstant(b, loc, f32, 5.9604644775390625e-8));
    Value subnormal = arith::BitcastOp::create(b, loc, i32, subnormalF);

    Value isZeroExp =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, exp, c(0));
    Value isMaxExp =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, exp, c(0x1f));
    Value magnitude = arith::SelectOp::create(
        b, loc, isZeroExp, subnormal,
        arith::SelectOp::create(b, loc, isMaxExp, special, normal));
    Value bits = arith::OrIOp::create(b, loc, magnitude, sign);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, f32, bits);
    return success();
  }
};

// f32 -> f16 with round-to-nearest-even (the classic branch-free scheme):
// overflow becomes inf, NaN stays a quiet NaN, results below the smallest
// normal half are rounded by an f32 add of 0.5 that aligns the mantissa.
struct ExpandF16TruncF : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    Type inType = op.getIn().getType();
    if (!isa<Float16Type>(getElementTypeOrSelf(op.getType())) ||
        !getElementTypeOrSelf(inType).isF32())
      return failure();
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Type i16 = withElementType(inType, b.getI16Type());
    Type i32 = withElementType(inType, b.getI32Type());
    auto c = [&](int64_t v) { return intConstant(b, loc, i32, v); };
    using P = arith::CmpIPredicate;

    Value x = arith::BitcastOp::create(b, loc, i32, op.getIn());
    Value sign = arith::ShRUIOp::create(
        b, loc, arith::AndIOp::create(b, loc, x, c(0x80000000)), c(16));
    Value abs = arith::AndIOp::create(b, loc, x, c(0x7fffffff));

    // |x| >= 65536 (or inf/nan): inf, or a quiet NaN.
    Value isNan = arith::CmpIOp::create(b, loc, P::ugt, abs, c(0x7f800000));
    Value overflow = arith::SelectOp::create(b, loc, isNan, c(0x7e00), c(0x7c00));

    // |x| < 2^-14: subnormal half or zero.
    Value magic = c(126 << 23); // 0.5f
    Value absF = arith::BitcastOp::create(b, loc, op.getIn().getType(), abs);
    Value sum = arith::AddFOp::create(
        b, loc, absF,
        arith::BitcastOp::create(b, loc, op.getIn().getType(), magic));
    Value subnormal = arith::SubIOp::create(
        b, loc, arith::BitcastOp::create(b, loc, i32, sum), magic);

    // Normal: rebias exponent 127 -> 15 and round the dropped 13 bits.
    Value mantOdd = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, abs, c(13)), c(1));
    Value rounded = arith::AddIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, abs,
                              c(static_cast<int64_t>(
                                    static_cast<uint32_t>(15 - 127) << 23) +
                                0xfff)),
        mantOdd);
    Value normal = arith::ShRUIOp::create(b, loc, rounded, c(13));

    Value isOverflow = arith::CmpIOp::create(b, loc, P::uge, abs, c(0x47800000));
    Value isSubnormal = arith::CmpIOp::create(b, loc, P::ult, abs, c(113 << 23));
    Value magnitude = arith::SelectOp::create(
        b, loc, isOverflow, overflow,
        arith::SelectOp::create(b, loc, isSubnormal, subnormal, normal));
    Value bits = arith::TruncIOp::create(
        b, loc, i16, arith::OrIOp::create(b, loc, magnitude, sign));
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), bits);
    return success();
  }
};

struct HostExpandSmallFloatsPass
    : public kiln::impl::HostExpandSmallFloatsPassBase<
          HostExpandSmallFloatsPass> {
  void runOnOperation() override {
    // arith-emulate-unsupported-floats marks its conversions `contract`,
    // which lets folding drop the rounding between two emulated ops. Keep
    // it: each op on a 16-bit float rounds its result, as the IR says (and
    // as references computed op by op expect).
    auto none = arith::FastMathFlagsAttr::get(&getContext(),
                                              arith::FastMathFlags::none);
    getOperation().walk([&](arith::ExtFOp op) {
      if (isSmallFloat(op.getIn().getType()))
        op.setFastmathAttr(none);
    });
    getOperation().walk([&](arith::TruncFOp op) {
      if (isSmallFloat(op.getType()))
        op.setFastmathAttr(none);
    });
    RewritePatternSet patterns(&getContext());
    patterns.add<SplitWideCast<arith::ExtFOp>, SplitWideCast<arith::TruncFOp>,
                 ExpandF16ExtF, ExpandF16TruncF>(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // Anything left would become a libcall: report it rather than emit an
    // object that fails to load.
    WalkResult result = getOperation().walk([](Operation *op) {
      if (isa<arith::ExtFOp, arith::TruncFOp>(op) &&
          (isSmallFloat(op->getOperand(0).getType()) ||
           isSmallFloat(op->getResult(0).getType()))) {
        op->emitError() << "f16/bf16 conversion could not be expanded to "
                           "integer operations";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
