//===- HostLowerMathPass.cpp - Inline f32 math for the host ---------------===//
//
// x86 has no instruction for exp, log, tanh or erf: LLVM lowers these math
// functions on vectors to one libm call per lane (extract, call, insert),
// which makes a vectorized softmax slower than scalar code. MLIR's polynomial
// approximations compute them with vector arithmetic instead. Only f32
// functions whose approximation holds over the whole f32 range are replaced;
// f64 stays on libm.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "CodegenUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::kiln {
#define GEN_PASS_DEF_HOSTLOWERMATHPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

// Functions replaced by their approximation, in two rounds: the compound
// ones first (their approximations and expansions create exp and log), then
// exp and log themselves, once every log exists and has had its denormal
// inputs scaled. Left out on purpose: sin and cos (range reduction in f32
// only, wrong for large arguments), atan/atan2, asin/acos, cbrt and erfc
// (not measured to be within a few ulp), rsqrt (needs AVX2).
bool isApproximatedCompound(StringRef name) {
  return llvm::is_contained(
      {math::ExpM1Op::getOperationName(), math::Log1pOp::getOperationName(),
       math::TanhOp::getOperationName(), math::ErfOp::getOperationName()},
      name);
}

bool isApproximatedElementary(StringRef name) {
  return llvm::is_contained({math::ExpOp::getOperationName(),
                             math::LogOp::getOperationName(),
                             math::Log2Op::getOperationName()},
                            name);
}

// Every upstream expansion (math-expand-ops) except fma, which is turned
// into a contractable multiply-add below.
constexpr StringRef kExpandedOps[] = {
    "ctlz", "sinh", "cosh", "tan",   "tanh",  "asinh",     "acosh", "atanh",
    "ceil", "exp2", "powf", "fpowi", "round", "roundeven", "rsqrt", "clampf"};

Value f32Splat(OpBuilder &b, Location loc, Type type, float value) {
  Attribute attr = b.getF32FloatAttr(value);
  if (auto shaped = dyn_cast<ShapedType>(type))
    attr = DenseElementsAttr::get(shaped, attr);
  return arith::ConstantOp::create(b, loc, type, cast<TypedAttr>(attr));
}

// x86 before SSE4.1 (the default --host-cpu=x86-64) has no vector floor
// instruction, so LLVM calls libm's floorf per lane; the exp approximation
// needs a floor. Below 2^23 in magnitude, truncate through i32 (cvttps2dq
// since SSE2) and subtract one where that rounded up; copysign keeps -0.
// Larger magnitudes, infinities and NaN are their own floor.
struct ExpandF32Floor : OpRewritePattern<math::FloorOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::FloorOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return failure();
    Location loc = op.getLoc();
    Type intType = IntegerType::get(op.getContext(), 32);
    if (auto shaped = dyn_cast<ShapedType>(type))
      intType = shaped.clone(intType);
    Value x = op.getOperand();
    Value truncated = arith::SIToFPOp::create(
        rewriter, loc, type, arith::FPToSIOp::create(rewriter, loc, intType, x));
    Value roundedUp = arith::CmpFOp::create(
        rewriter, loc, arith::CmpFPredicate::OGT, truncated, x);
    Value minusOne = arith::SubFOp::create(rewriter, loc, truncated,
                                           f32Splat(rewriter, loc, type, 1.0f));
    Value floor =
        arith::SelectOp::create(rewriter, loc, roundedUp, minusOne, truncated);
    floor = math::CopySignOp::create(rewriter, loc, floor, x);
    Value small = arith::CmpFOp::create(
        rewriter, loc, arith::CmpFPredicate::OLT,
        math::AbsFOp::create(rewriter, loc, x),
        f32Splat(rewriter, loc, type, 0x1p23f));
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, small, floor, x);
    return success();
  }
};

// f32 exp (scalars and vectors): n = round(x log2(e)) (by adding and
// subtracting 1.5 * 2^23), Cody-Waite r = x - n c1 - n c2 with c1 exact in
// 9 bits (so n c1 is exact), Cephes's degree-7 polynomial for exp(r) on
// |r| <= ln(2) / 2, and 2^n as two exponent fields 2^(n - h) * 2^h (h = n
// >> 1, both normal for the clamped x), so that the last product rounds once
// into the subnormals or to inf as exp does. x is clamped to [-104, 89]
// first (NaN passes the comparisons). About 1 ulp; upstream's approximation
// (which this replaces) flushed results below 2^-126 to zero and overflowed
// late. Multiplies and adds may contract into FMAs where the CPU has them.
struct ExpF32WithGradualUnderflow : OpRewritePattern<math::ExpOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::ExpOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    auto vectorType = dyn_cast<VectorType>(type);
    if (!getElementTypeOrSelf(type).isF32() ||
        (vectorType && vectorType.isScalable()))
      return failure();
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    auto contract = arith::FastMathFlagsAttr::get(
        op.getContext(), arith::FastMathFlags::contract);
    auto constant = [&](float v) { return f32Splat(b, loc, type, v); };
    Type intType = IntegerType::get(op.getContext(), 32);
    if (vectorType)
      intType = vectorType.clone(intType);
    auto integer = [&](int32_t v) -> Value {
      Attribute attr = b.getI32IntegerAttr(v);
      if (vectorType)
        attr = DenseElementsAttr::get(cast<ShapedType>(intType), attr);
      return arith::ConstantOp::create(b, loc, intType, cast<TypedAttr>(attr));
    };
    auto mul = [&](Value a, Value c) -> Value {
      return arith::MulFOp::create(b, loc, a, c, contract);
    };
    auto add = [&](Value a, Value c) -> Value {
      return arith::AddFOp::create(b, loc, a, c, contract);
    };
    auto clampTo = [&](Value v, float bound, arith::CmpFPredicate beyond) {
      Value limit = constant(bound);
      Value out = arith::CmpFOp::create(b, loc, beyond, v, limit);
      return arith::SelectOp::create(b, loc, out, limit, v).getResult();
    };
    Value x = clampTo(op.getOperand(), 89.0f, arith::CmpFPredicate::OGT);
    x = clampTo(x, -104.0f, arith::CmpFPredicate::OLT);
    Value magic = constant(12582912.0f);
    // The rounding must not contract (it relies on the sum's rounding).
    Value n = arith::SubFOp::create(
        b, loc,
        arith::AddFOp::create(
            b, loc,
            arith::MulFOp::create(b, loc, x, constant(1.44269504088896341f)),
            magic),
        magic);
    Value r = arith::SubFOp::create(
        b, loc, x, arith::MulFOp::create(b, loc, n, constant(0.693359375f)));
    r = arith::SubFOp::create(
        b, loc, r, arith::MulFOp::create(b, loc, n, constant(-2.12194440e-4f)));
    Value p = constant(1.9875691500e-4f);
    for (float c : {1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f,
                    1.6666665459e-1f, 5.0000001201e-1f})
      p = add(mul(p, r), constant(c));
    Value y = add(add(mul(p, mul(r, r)), r), constant(1.0f));
    Value k = arith::FPToSIOp::create(b, loc, intType, n);
    Value h = arith::ShRSIOp::create(b, loc, k, integer(1));
    auto power = [&](Value exponent) -> Value {
      Value biased = arith::AddIOp::create(b, loc, exponent, integer(127));
      Value bits = arith::ShLIOp::create(b, loc, biased, integer(23));
      return arith::BitcastOp::create(b, loc, type, bits);
    };
    Value scaled = arith::MulFOp::create(
        b, loc, y, power(arith::SubIOp::create(b, loc, k, h)));
    rewriter.replaceOpWithNewOp<arith::MulFOp>(op, scaled, power(h));
    return success();
  }
};

struct HostLowerMathPass
    : public kiln::impl::HostLowerMathPassBase<HostLowerMathPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    func::FuncOp func = getOperation();

    // 1. Compound functions. Approximations first (benefit 2): f32 tanh is
    //    approximated, not expanded into exp. Constant powers become
    //    multiplications before the powf expansion (same benefit, added
    //    first) makes them exp(log). The rest expands to exp and log (and
    //    integer conversions for ceil, round, ...).
    {
      RewritePatternSet patterns(ctx);
      populateMathPolynomialApproximationPatterns(
          patterns, isApproximatedCompound, /*benefit=*/2);
      populateMathAlgebraicSimplificationPatterns(patterns);
      math::populateExpansionPatterns(patterns, kExpandedOps);
      if (failed(applyPatternsGreedily(func, std::move(patterns))))
        return signalPassFailure();
    }

    // 2. exp and log, the program's and those created above; exp's floor
    //    becomes integer conversions.
    scaleDenormalLogInputs(func);
    {
      RewritePatternSet patterns(ctx);
      populateMathPolynomialApproximationPatterns(patterns,
                                                  isApproximatedElementary);
      patterns.add<ExpF32WithGradualUnderflow>(ctx, /*benefit=*/3);
      patterns.add<ExpandF32Floor>(ctx);
      if (failed(applyPatternsGreedily(func, std::move(patterns))))
        return signalPassFailure();
    }

    // 3. fma. Without FMA hardware (the default --host-cpu=x86-64) LLVM
    //    computes an fma with a libm `fmaf` call per lane, and the
    //    approximations are written with fma. A multiply and an add that
    //    LLVM may contract give a single rounding where the CPU has FMA and
    //    two (as upstream's fma expansion did) where it has not.
    auto contract =
        arith::FastMathFlagsAttr::get(ctx, arith::FastMathFlags::contract);
    func.walk([&](math::FmaOp op) {
      OpBuilder b(op);
      Value product = arith::MulFOp::create(b, op.getLoc(), op.getA(),
                                            op.getB(), contract);
      Value sum = arith::AddFOp::create(b, op.getLoc(), product, op.getC(),
                                        contract);
      op.replaceAllUsesWith(sum);
      op.erase();
    });
  }
};

} // namespace
