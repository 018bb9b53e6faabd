//===- GPUExpandF64MathPass.cpp - f64 exp/log as arithmetic ---------------===//
//
// Kiln compiles CUDA kernels without libdevice, so f64 transcendental
// functions must become arithmetic before convert-gpu-to-nvvm turns them
// into __nv_* calls nothing can resolve. math.exp and math.log on f64 (and
// vectors of f64) are expanded here into range reduction, a polynomial and
// exponent bit manipulation; the functions that math's expansion patterns
// derive from them (tanh, sinh, cosh, pow, ...) follow. Both stay within
// 1 ulp of the correctly rounded result over the whole f64 range (checked
// against libm in tests/compiler/unit/GPUExpandF64MathTest.cpp).
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/bit.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_GPUEXPANDF64MATHPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

// ln(2) split so that n * kLn2Hi is exact for |n| < 2^21 (kLn2Hi has 32
// significant bits) and kLn2Hi + kLn2Lo is ln(2) to about 2^-85.
const double kLn2Hi = llvm::bit_cast<double>(0x3FE62E42FEE00000ULL);
const double kLn2Lo = llvm::bit_cast<double>(0x3DEA39EF35793C76ULL);
// 1.5 * 2^52: adding it to |t| < 2^51 rounds t to an integer (to nearest
// even) in the low mantissa bits.
constexpr double kRoundMagic = 6755399441055744.0;

// Emits f64 arithmetic on scalars or vectors of the type of the value being
// expanded (`floatType`), with `intType` the i64 counterpart of the same
// shape.
class F64Emitter {
public:
  F64Emitter(ImplicitLocOpBuilder &b, Type floatType)
      : b(b), floatType(floatType), intType(b.getI64Type()) {
    if (auto vector = dyn_cast<VectorType>(floatType))
      intType = vector.clone(b.getI64Type());
  }

  Value f(double value) {
    return constant(floatType, b.getF64FloatAttr(value));
  }
  Value i(int64_t value) {
    return constant(intType, b.getI64IntegerAttr(value));
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, x, y); }
  Value fma(Value x, Value y, Value z) {
    return math::FmaOp::create(b, x, y, z);
  }
  Value cmp(arith::CmpFPredicate predicate, Value x, Value y) {
    return arith::CmpFOp::create(b, predicate, x, y);
  }
  Value select(Value condition, Value x, Value y) {
    return arith::SelectOp::create(b, condition, x, y);
  }
  Value toBits(Value x) { return arith::BitcastOp::create(b, intType, x); }
  Value fromBits(Value x) { return arith::BitcastOp::create(b, floatType, x); }

  // 2^n for integers n in [-1022, 1023] (i64), built in the exponent field.
  Value exp2i(Value n) {
    Value biased = arith::AddIOp::create(b, n, i(1023));
    return fromBits(arith::ShLIOp::create(b, biased, i(52)));
  }

  // c[0] + x * (c[1] + x * (c[2] + ...)), by Horner's rule with fmas.
  Value horner(Value x, ArrayRef<double> coefficients) {
    Value result = f(coefficients.back());
    for (double c : llvm::reverse(coefficients.drop_back()))
      result = fma(result, x, f(c));
    return result;
  }

  ImplicitLocOpBuilder &b;
  Type floatType;
  Type intType;

private:
  Value constant(Type type, TypedAttr scalar) {
    if (auto vector = dyn_cast<VectorType>(type))
      return arith::ConstantOp::create(b,
                                       DenseElementsAttr::get(vector, scalar));
    return arith::ConstantOp::create(b, scalar);
  }
};

static bool isF64(Type type) { return getElementTypeOrSelf(type).isF64(); }

// exp(x) = 2^n * exp(r) with n = round(x / ln2) and r = x - n * ln2 computed
// exactly in two steps (Cody-Waite), |r| <= ln2 / 2. exp(r) is its Taylor
// polynomial to degree 13 (truncation below 2^-57 relative). 2^n is
// applied as two factors 2^(n/2) and 2^(n - n/2), both normal numbers, so
// that results in the subnormal range are rounded once, correctly. x is
// clamped to [-746, 710] first: exp of either bound already rounds to 0 or
// overflows to +inf through the same computation.
struct ExpandExpF64 : OpRewritePattern<math::ExpOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::ExpOp op,
                                PatternRewriter &rewriter) const override {
    if (!isF64(op.getType()))
      return failure();
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    F64Emitter e(b, op.getType());
    using P = arith::CmpFPredicate;
    Value x = op.getOperand();
    Value isNaN = e.cmp(P::UNO, x, x);
    Value clamped = e.select(e.cmp(P::OGT, x, e.f(710.0)), e.f(710.0), x);
    clamped =
        e.select(e.cmp(P::OLT, clamped, e.f(-746.0)), e.f(-746.0), clamped);
    // NaN would reach fptosi (poison); it is put back at the end.
    clamped = e.select(isNaN, e.f(0.0), clamped);

    Value shifted = e.fma(clamped, e.f(M_LOG2E), e.f(kRoundMagic));
    Value n = e.sub(shifted, e.f(kRoundMagic));
    Value negN = arith::NegFOp::create(b, n);
    Value r = e.fma(negN, e.f(kLn2Hi), clamped);
    r = e.fma(negN, e.f(kLn2Lo), r);

    // exp(r) = 1 + r + r^2 * (1/2! + r/3! + ... + r^11/13!).
    SmallVector<double> coefficients;
    double factorial = 1.0;
    for (int k = 2; k <= 13; ++k) {
      factorial *= k;
      coefficients.push_back(1.0 / factorial);
    }
    Value q = e.horner(r, coefficients);
    Value poly = e.add(e.f(1.0), e.fma(q, e.mul(r, r), r));

    Value ni = arith::FPToSIOp::create(b, e.intType, n);
    Value half = arith::ShRSIOp::create(b, ni, e.i(1));
    Value rest = arith::SubIOp::create(b, ni, half);
    Value result = e.mul(e.mul(poly, e.exp2i(half)), e.exp2i(rest));
    rewriter.replaceOp(op, e.select(isNaN, x, result));
    return success();
  }
};

// log(x) = k * ln2 + log(1 + f) with x = 2^k * (1 + f), 1 + f in
// [sqrt(1/2), sqrt(2)) (subnormals are scaled by 2^54 first). With
// s = f / (2 + f), log(1 + f) = 2 atanh(s) = 2s + s * R(s^2),
// R(z) = sum 2 z^j / (2j + 1), |s| < 0.1716; it is evaluated as
// f - (f^2/2 - s * (f^2/2 + R)) so that the leading term f is exact, and
// k * ln2 is added in two parts (fdlibm's e_log.c arrangement).
struct ExpandLogF64 : OpRewritePattern<math::LogOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::LogOp op,
                                PatternRewriter &rewriter) const override {
    if (!isF64(op.getType()))
      return failure();
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    F64Emitter e(b, op.getType());
    using P = arith::CmpFPredicate;
    Value x = op.getOperand();

    Value subnormal = e.cmp(P::OLT, x, e.f(0x1p-1022));
    Value scaled = e.select(subnormal, e.mul(x, e.f(0x1p54)), x);
    Value bits = e.toBits(scaled);
    Value exponent = arith::AndIOp::create(
        b, arith::ShRUIOp::create(b, bits, e.i(52)), e.i(0x7ff));
    Value mantissaBits = arith::OrIOp::create(
        b, arith::AndIOp::create(b, bits, e.i((int64_t(1) << 52) - 1)),
        e.i(int64_t(1023) << 52));
    Value m = e.fromBits(mantissaBits); // in [1, 2)
    Value large = e.cmp(P::OGT, m, e.f(M_SQRT2));
    m = e.select(large, e.mul(m, e.f(0.5)), m);
    Value k = arith::SubIOp::create(b, exponent, e.i(1023));
    k = arith::AddIOp::create(b, k, e.select(large, e.i(1), e.i(0)));
    k = arith::SubIOp::create(b, k, e.select(subnormal, e.i(54), e.i(0)));
    Value kf = arith::SIToFPOp::create(b, e.floatType, k);

    Value f = e.sub(m, e.f(1.0)); // exact (Sterbenz)
    Value s = e.div(f, e.add(e.f(2.0), f));
    Value z = e.mul(s, s);
    SmallVector<double> coefficients;
    for (int j = 1; j <= 11; ++j)
      coefficients.push_back(2.0 / (2 * j + 1));
    Value r = e.mul(z, e.horner(z, coefficients));
    Value hfsq = e.mul(e.mul(e.f(0.5), f), f);
    Value tail = e.add(e.mul(s, e.add(hfsq, r)), e.mul(kf, e.f(kLn2Lo)));
    Value result = e.sub(e.mul(kf, e.f(kLn2Hi)), e.sub(e.sub(hfsq, tail), f));

    // log(+-0) = -inf, log(x < 0) = NaN, log(+inf) = +inf, log(NaN) = NaN.
    result = e.select(e.cmp(P::OEQ, x, e.f(0.0)),
                      e.f(-std::numeric_limits<double>::infinity()), result);
    result = e.select(e.cmp(P::OLT, x, e.f(0.0)),
                      e.f(std::numeric_limits<double>::quiet_NaN()), result);
    // Unordered-equal: true for +inf and for NaN.
    Value infOrNaN =
        e.cmp(P::UEQ, x, e.f(std::numeric_limits<double>::infinity()));
    result = e.select(infOrNaN, x, result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct GPUExpandF64MathPass
    : public kiln::impl::GPUExpandF64MathPassBase<GPUExpandF64MathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandExpF64, ExpandLogF64>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
