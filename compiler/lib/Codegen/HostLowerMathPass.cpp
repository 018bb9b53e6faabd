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
