//===- GPULowerMathPass.cpp - Math ops for GPU backends -------------------===//
//
// Keeps math functions out of device libraries wherever MLIR can compute
// them itself: expansions and polynomial approximations for f32 (and f16 /
// bf16 through f32), LLVM intrinsics where the backend has an instruction.
// Only f64 transcendental functions are left: for ocml on ROCm, for
// kiln-gpu-expand-f64-math on CUDA.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "CodegenUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_GPULOWERMATHPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

// Replaces an f32 (or, with `allowF64`, f64) math op by the LLVM intrinsic
// op computing the same function (same operands and result type). 1-D
// vectors (from kiln-gpu-vectorize) are computed element by element:
// convert-gpu-to-rocdl only accepts the scalar intrinsics.
template <typename MathOp, typename IntrinsicOp>
struct MathToIntrinsic : OpRewritePattern<MathOp> {
  MathToIntrinsic(MLIRContext *ctx, bool allowF64)
      : OpRewritePattern<MathOp>(ctx, /*benefit=*/2), allowF64(allowF64) {}

  LogicalResult matchAndRewrite(MathOp op,
                                PatternRewriter &rewriter) const override {
    Type element = getElementTypeOrSelf(op.getType());
    if (!element.isF32() && !(element.isF64() && allowF64))
      return failure();
    auto vectorType = dyn_cast<VectorType>(op.getType());
    if (!vectorType) {
      rewriter.replaceOpWithNewOp<IntrinsicOp>(op, op.getType(),
                                               op->getOperands());
      return success();
    }
    if (vectorType.getRank() != 1 || vectorType.isScalable())
      return failure();
    Location loc = op.getLoc();
    SmallVector<Value> elements;
    for (int64_t i = 0, e = vectorType.getNumElements(); i < e; ++i) {
      SmallVector<Value> operands;
      for (Value operand : op->getOperands())
        operands.push_back(vector::ExtractOp::create(rewriter, loc, operand,
                                                     ArrayRef<int64_t>{i}));
      elements.push_back(IntrinsicOp::create(rewriter, loc, element, operands));
    }
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, vectorType,
                                                        elements);
    return success();
  }

  bool allowF64;
};

// f32 exp on NVVM through the special function unit, in one of three forms.
//
// Accurate (the default): with n = round(x log2(e)) clamped to [-149, 127]
// and r = x - n ln(2) (two FMAs, Cody-Waite), exp(x) = ex2.approx(r
// log2(e)) * ex2.approx(n). The second factor is an exact power of two,
// subnormal or normal (ex2.approx is exact at integers and, without .ftz,
// returns subnormals), and the first stays accurate where the clamp makes r
// larger than ln(2) / 2 (at the ends, where the product overflows to inf or
// rounds into the subnormals, or to 0, in its one rounding, as exp does).
// Infinite x give r infinite; NaN passes through the NaN-propagating clamp.
// At most 2.04 ulp (measured over 2^24 inputs); 10 instructions, two on the
// special function unit.
//
// Half (kernels whose every buffer holds f16 or bf16, so that what they
// compute is rounded to 11 or 8 significant bits before it leaves them):
// exp(x) = ex2.approx(x * log2(e)), one multiplication and one special
// function operation. Rounding the product to f32 moves the exponent by at
// most |x log2(e)| 2^-24, so the result is off by at most 150 * 2^-24 *
// ln(2) ~ 6.2e-6 relative (|x| <= 104: beyond, the result is 0 or inf
// either way) plus ex2.approx's own 2 ulp: below 1/150 of an f16 ulp
// (2^-10) and 1/1200 of a bf16 ulp. Infinities, NaN and zeros come out as
// exp's. With f16 buffers only (HalfFlushed), ex2.approx.ftz: the f32
// subnormal results it flushes (below 2^-126) are 2^102 times below f16's
// smallest subnormal, so they reach an f16 output only through a factor
// above 2^102 in the kernel (exp(-88) * 1e38 would), which f16 programs do
// not compute; bf16 shares f32's exponent range and keeps the subnormal
// results (ex2.approx without .ftz, a few more SASS instructions: 2.5% of
// the softmax below). Softmax over 1024x32768 f16 rows: 8 -> 2
// instructions per exp, 0.054 -> 0.048 ms on an H200 (docs/performance.md).
enum class ExpForm { Accurate, Half, HalfFlushed };

struct ExpF32ToNvvmEx2 : OpRewritePattern<math::ExpOp> {
  ExpF32ToNvvmEx2(MLIRContext *context, ExpForm form)
      : OpRewritePattern(context, /*benefit=*/2), form(form) {}

  LogicalResult matchAndRewrite(math::ExpOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    auto vectorType = dyn_cast<VectorType>(type);
    if (!getElementTypeOrSelf(type).isF32() ||
        (vectorType && (vectorType.getRank() != 1 || vectorType.isScalable())))
      return failure();
    Location loc = op.getLoc();
    auto expand = [&](Value x) {
      return form == ExpForm::Accurate
                 ? expandAccurate(rewriter, loc, x)
                 : ex2(rewriter, loc,
                       arith::MulFOp::create(
                           rewriter, loc, x,
                           constant(rewriter, loc, 1.44269504088896341f)),
                       form == ExpForm::HalfFlushed);
    };
    if (!vectorType) {
      rewriter.replaceOp(op, expand(op.getOperand()));
      return success();
    }
    SmallVector<Value> elements;
    for (int64_t i = 0, e = vectorType.getNumElements(); i < e; ++i)
      elements.push_back(expand(vector::ExtractOp::create(
          rewriter, loc, op.getOperand(), ArrayRef<int64_t>{i})));
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, vectorType,
                                                        elements);
    return success();
  }

  static Value constant(OpBuilder &b, Location loc, float v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  static Value ex2(OpBuilder &b, Location loc, Value v, bool flush = false) {
    return LLVM::CallIntrinsicOp::create(
               b, loc, b.getF32Type(),
               b.getStringAttr(flush ? "llvm.nvvm.ex2.approx.ftz.f32"
                                     : "llvm.nvvm.ex2.approx.f32"),
               ValueRange{v})
        .getResult(0);
  }

  static Value expandAccurate(OpBuilder &b, Location loc, Value x) {
    // Round to nearest by adding and subtracting 1.5 * 2^23.
    Value magic = constant(b, loc, 12582912.0f);
    Value n = arith::SubFOp::create(
        b, loc,
        LLVM::FMAOp::create(b, loc, x, constant(b, loc, 1.44269504088896341f),
                            magic),
        magic);
    n = LLVM::MinimumOp::create(b, loc, n, constant(b, loc, 127.0f));
    n = LLVM::MaximumOp::create(b, loc, n, constant(b, loc, -149.0f));
    Value r = LLVM::FMAOp::create(b, loc, n,
                                  constant(b, loc, -0.693145751953125f), x);
    r = LLVM::FMAOp::create(b, loc, n,
                            constant(b, loc, -1.428606765330187e-06f), r);
    Value e = ex2(b, loc,
                  arith::MulFOp::create(
                      b, loc, r, constant(b, loc, 1.44269504088896341f)));
    return arith::MulFOp::create(b, loc, e, ex2(b, loc, n));
  }

  ExpForm form;
};

// The exp form for `func`: Half when every buffer holds f16 or bf16 (and it
// has one), HalfFlushed when they all hold f16.
static ExpForm expFormFor(func::FuncOp func) {
  bool any = false, bf16 = false;
  for (Type type : func.getArgumentTypes()) {
    auto memref = dyn_cast<MemRefType>(type);
    if (!memref)
      continue;
    if (!isa<Float16Type, BFloat16Type>(memref.getElementType()))
      return ExpForm::Accurate;
    bf16 |= isa<BFloat16Type>(memref.getElementType());
    any = true;
  }
  if (!any)
    return ExpForm::Accurate;
  return bf16 ? ExpForm::Half : ExpForm::HalfFlushed;
}

// f32 divisions of a block that share one divisor (a softmax's row sum,
// a mean's count) become multiplications by its reciprocal, computed once:
// x / s = (x * (1 / (s * k))) * k, with k = 2^64 when |s| < 2^-100, 2^-64
// when |s| > 2^100, else 1, so that the reciprocal is neither infinite nor
// subnormal for finite nonzero s (zero, infinite and NaN divisors give
// the division's infinities, zeros and NaNs). Each division becomes one or
// two multiplications (the second by a power of two, exact unless the
// result overflows or underflows) instead of a correctly rounded division
// (div.rn.f32: about ten instructions; AMD's div_scale / div_fmas /
// div_fixup sequence): at most 1 ulp beyond the division's rounding. A
// divisor of a vector division counts when it is a broadcast scalar.
static void shareReciprocals(Operation *root) {
  llvm::MapVector<std::pair<Block *, Value>, SmallVector<arith::DivFOp>> groups;
  root->walk([&](arith::DivFOp div) {
    if (!getElementTypeOrSelf(div.getType()).isF32())
      return;
    Value divisor = div.getRhs();
    if (auto broadcast = divisor.getDefiningOp<vector::BroadcastOp>())
      divisor = broadcast.getSource();
    if (!divisor.getType().isF32())
      return;
    groups[{div->getBlock(), divisor}].push_back(div);
  });
  for (auto &[key, divisions] : groups) {
    if (divisions.size() < 2)
      continue;
    Value s = key.second;
    // The first division of the block comes first (walk order).
    OpBuilder b(divisions.front());
    Location loc = divisions.front().getLoc();
    auto constant = [&](float v) -> Value {
      return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
    };
    Value magnitude = math::AbsFOp::create(b, loc, s);
    Value tiny = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                       magnitude, constant(0x1p-100f));
    Value huge = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                       magnitude, constant(0x1p100f));
    Value k = arith::SelectOp::create(
        b, loc, tiny, constant(0x1p64f),
        arith::SelectOp::create(b, loc, huge, constant(0x1p-64f),
                                constant(1.0f)));
    Value reciprocal = arith::DivFOp::create(
        b, loc, constant(1.0f), arith::MulFOp::create(b, loc, s, k));
    for (arith::DivFOp div : divisions) {
      b.setInsertionPoint(div);
      Value r = reciprocal, scale = k;
      if (auto vectorType = dyn_cast<VectorType>(div.getType())) {
        r = vector::BroadcastOp::create(b, div.getLoc(), vectorType, r);
        scale = vector::BroadcastOp::create(b, div.getLoc(), vectorType, k);
      }
      Value product = arith::MulFOp::create(b, div.getLoc(), div.getLhs(), r,
                                            div.getFastmathAttr());
      Value quotient = arith::MulFOp::create(b, div.getLoc(), product, scale,
                                             div.getFastmathAttr());
      div.getResult().replaceAllUsesWith(quotient);
      div.erase();
    }
  }
}

struct GPULowerMathPass
    : public kiln::impl::GPULowerMathPassBase<GPULowerMathPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    bool rocdl = backend == "rocdl";
    if (!rocdl && backend != "nvvm") {
      getOperation().emitError()
          << "unknown GPU backend '" << backend << "' (expected rocdl or nvvm)";
      return signalPassFailure();
    }

    // 1. Expand compound functions (tan, sinh, tanh, powf, exp2, rsqrt,
    //    ceil, round, ...) into exp, log, sin, cos, sqrt and arithmetic.
    {
      RewritePatternSet patterns(ctx);
      math::populateExpansionPatterns(patterns);
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
    }

    // On NVVM f32 log and log2 come from the polynomial approximations
    // below, which need denormal inputs scaled (AMD's v_log_f32 lowering
    // handles them itself).
    if (!rocdl)
      scaleDenormalLogInputs(getOperation());

    // 2. Instructions first, where convert-gpu-to-rocdl accepts the
    //    intrinsic: AMD GPUs have v_exp_f32 / v_log_f32, v_sqrt, ... (Other
    //    single-instruction functions, and all of them on NVVM, come back
    //    from device-library calls in kiln-gpu-unwrap-kernels.) Then
    //    polynomial approximations for the remaining f32 functions.
    {
      RewritePatternSet patterns(ctx);
      if (rocdl) {
        patterns.add<MathToIntrinsic<math::SqrtOp, LLVM::SqrtOp>>(ctx, true);
        patterns.add<MathToIntrinsic<math::AbsFOp, LLVM::FAbsOp>>(ctx, true);
        patterns.add<MathToIntrinsic<math::FmaOp, LLVM::FMAOp>>(ctx, true);
        patterns.add<MathToIntrinsic<math::CopySignOp, LLVM::CopySignOp>>(
            ctx, true);
        patterns.add<MathToIntrinsic<math::ExpOp, LLVM::ExpOp>>(ctx, false);
        patterns.add<MathToIntrinsic<math::LogOp, LLVM::LogOp>>(ctx, false);
      } else {
        patterns.add<ExpF32ToNvvmEx2>(ctx, expFormFor(getOperation()));
        // f32 maxima and minima as LLVM's intrinsics, which have their
        // semantics (NaN-propagating maximum / minimum, NaN-ignoring maxnum
        // / minnum) and become one max.NaN.f32 / max.f32 on sm_80 and later;
        // arith-expand would spell maximumf as compare-and-selects (four
        // instructions, per element of a softmax's row max).
        patterns.add<MathToIntrinsic<arith::MaximumFOp, LLVM::MaximumOp>>(
            ctx, false);
        patterns.add<MathToIntrinsic<arith::MinimumFOp, LLVM::MinimumOp>>(
            ctx, false);
        patterns.add<MathToIntrinsic<arith::MaxNumFOp, LLVM::MaxNumOp>>(ctx,
                                                                        false);
        patterns.add<MathToIntrinsic<arith::MinNumFOp, LLVM::MinNumOp>>(ctx,
                                                                        false);
      }
      auto approximate = [](StringRef) { return true; };
      populateMathF32ExpansionPatterns(patterns, approximate);
      populateMathPolynomialApproximationPatterns(patterns, approximate);
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
    }

    // 3. Divisions by a shared divisor (see shareReciprocals).
    shareReciprocals(getOperation());

    // 4. LLVM's fpext/fptrunc take no fast-math flags, but the arith-to-LLVM
    //    conversion would carry extf/truncf flags over as an attribute that
    //    translation to LLVM IR rejects.
    getOperation()->walk([](Operation *op) {
      if (isa<arith::ExtFOp, arith::TruncFOp>(op))
        op->removeAttr("fastmath");
    });
  }
};

} // namespace
