//===- HostLowerVectorsPass.cpp - Vector ops to 1-D vector code -----------===//
//
// Upstream progressive vector lowering, in the order the patterns expect:
// high-level ops first, then n-D transfers, then 1-D loads and stores.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_HOSTLOWERVECTORSPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

// Far more rewrites than the lowering of any register tile needs.
constexpr int64_t kMaxRewrites = 50000;

// Children each level of a reduction tree combines (see treeReductions).
constexpr int64_t kTreeFanOut = 8;

// A reduction loop that folds each step's vector into one accumulator in
// order (what a row reduction's register tiles become once their
// accumulator is carried by the loop): `%r = scf.for ... iter_args(%a =
// %init) -> vector<1xT> { ...; %s = vector.reduction <kind>, %x,
// extract(%a)[0]; yield insert(%s)[0] (or broadcast(%s)) }`, static
// bounds.
struct SerialReduction {
  scf::ForOp loop;
  vector::ExtractOp extract;
  vector::ReductionOp reduction;
  Operation *repack; // vector.insert or vector.broadcast of the sum
  int64_t lower, upper, step;
};

std::optional<SerialReduction> matchSerialReduction(scf::ForOp loop) {
  if (loop.getNumRegionIterArgs() != 1)
    return std::nullopt;
  BlockArgument acc = loop.getRegionIterArgs().front();
  auto accType = dyn_cast<VectorType>(acc.getType());
  if (!accType || accType.getShape() != ArrayRef<int64_t>{1} ||
      !acc.hasOneUse())
    return std::nullopt;
  auto extract = dyn_cast<vector::ExtractOp>(*acc.getUsers().begin());
  if (!extract || !extract->hasOneUse() ||
      extract.getStaticPosition() != ArrayRef<int64_t>{0})
    return std::nullopt;
  auto reduction = dyn_cast<vector::ReductionOp>(*extract->getUsers().begin());
  if (!reduction || reduction.getAcc() != extract.getResult() ||
      !reduction->hasOneUse() || reduction.getSourceVectorType().getRank() != 1)
    return std::nullopt;
  Operation *repack = *reduction->getUsers().begin();
  auto insert = dyn_cast<vector::InsertOp>(repack);
  bool repacks = (isa<vector::BroadcastOp>(repack) &&
                  repack->getOperand(0) == reduction.getResult()) ||
                 (insert && insert.getValueToStore() == reduction.getResult() &&
                  insert.getStaticPosition() == ArrayRef<int64_t>{0});
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  if (!repacks || !repack->hasOneUse() ||
      repack->getResult(0) != yield.getOperand(0) ||
      repack->getResult(0).getType() != accType)
    return std::nullopt;
  std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (!lower || !upper || !step || *step <= 0 || *upper <= *lower)
    return std::nullopt;
  return SerialReduction{loop,   extract, reduction, repack,
                         *lower, *upper,  *step};
}

// The identity of `kind` on `element` (NaN for the NaN-ignoring maxnum and
// minnum: an all-NaN row stays NaN), or null for a kind without one.
TypedAttr reductionIdentity(vector::CombiningKind kind, Type element,
                            OpBuilder &b, Location loc) {
  using vector::CombiningKind;
  using RMW = arith::AtomicRMWKind;
  if (kind == CombiningKind::MAXNUMF || kind == CombiningKind::MINNUMF)
    return b.getFloatAttr(
        element, APFloat::getNaN(cast<FloatType>(element).getFloatSemantics()));
  // The arith kind whose identity `kind` shares, for floats and integers.
  static constexpr struct {
    CombiningKind kind;
    RMW onFloats, onIntegers;
  } kIdentities[] = {
      {CombiningKind::ADD, RMW::addf, RMW::addi},
      {CombiningKind::MUL, RMW::mulf, RMW::muli},
      {CombiningKind::MINUI, RMW::minu, RMW::minu},
      {CombiningKind::MINSI, RMW::mins, RMW::mins},
      {CombiningKind::MAXUI, RMW::maxu, RMW::maxu},
      {CombiningKind::MAXSI, RMW::maxs, RMW::maxs},
      {CombiningKind::AND, RMW::andi, RMW::andi},
      {CombiningKind::OR, RMW::ori, RMW::ori},
      {CombiningKind::XOR, RMW::xori, RMW::xori},
      {CombiningKind::MAXIMUMF, RMW::maximumf, RMW::maximumf},
      {CombiningKind::MINIMUMF, RMW::minimumf, RMW::minimumf},
  };
  for (const auto &entry : kIdentities)
    if (entry.kind == kind)
      return arith::getIdentityValueAttr(
          isa<FloatType>(element) ? entry.onFloats : entry.onIntegers, element,
          b, loc);
  return {};
}

// Reductions in a tree. A serial reduction (above) combines a row's
// elements one after the other: every step waits for the previous one, and
// a float sum's rounding error grows with the row's length. It becomes
// nested loops over the same steps in the same order: the innermost
// combines at most kTreeFanOut steps' vectors into a vector accumulator
// (starting from the identity), each outer level at most kTreeFanOut of its
// inner level's results, and the top vector's lanes are combined pairwise
// onto the initial value at the end. In a float sum (or product) an element
// then passes through at most kTreeFanOut operations on each of
// ceil(log8(steps)) levels, plus log2(lanes) + 1 (the error grows with
// log n); the other kinds are exact in any order (integers wrap; minima
// and maxima, NaN-propagating or not, pick the same value) and only gain
// the independent chains. The body's effects keep their order (every step
// runs once, in increasing order).
void treeReductions(func::FuncOp func) {
  SmallVector<SerialReduction> serials;
  func.walk([&](scf::ForOp loop) {
    if (std::optional<SerialReduction> serial = matchSerialReduction(loop))
      serials.push_back(*serial);
  });
  for (SerialReduction &serial : serials) {
    scf::ForOp loop = serial.loop;
    Location loc = loop.getLoc();
    OpBuilder b(loop);
    VectorType partType = serial.reduction.getSourceVectorType();
    vector::CombiningKind kind = serial.reduction.getKind();
    TypedAttr identity =
        reductionIdentity(kind, partType.getElementType(), b, loc);
    if (!identity)
      continue;
    int64_t steps = llvm::divideCeil(serial.upper - serial.lower, serial.step);
    int64_t levels = 1;
    for (int64_t covered = kTreeFanOut; covered < steps; covered *= kTreeFanOut)
      ++levels;
    auto index = [&](OpBuilder &builder, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(builder, loc, v);
    };
    Value neutral = arith::ConstantOp::create(
        b, loc, partType, DenseElementsAttr::get(partType, identity));
    Value upper = index(b, serial.upper);
    // The sum of the steps [start, min(start + the span of `level`, upper)):
    // a loop over its (at most kTreeFanOut) children.
    std::function<Value(OpBuilder &, int64_t, Value)> buildLevel =
        [&](OpBuilder &builder, int64_t level, Value start) -> Value {
      int64_t childSpan = serial.step;
      for (int64_t l = 0; l < level; ++l)
        childSpan *= kTreeFanOut;
      Value end = upper;
      if (level + 1 < levels)
        end = arith::MinSIOp::create(
            builder, loc,
            arith::AddIOp::create(builder, loc, start,
                                  index(builder, childSpan * kTreeFanOut)),
            upper);
      auto children = scf::ForOp::create(
          builder, loc, start, end, index(builder, childSpan),
          ValueRange{neutral},
          [&](OpBuilder &inner, Location, Value iv, ValueRange args) {
            Value child;
            if (level == 0) {
              IRMapping mapping;
              mapping.map(loop.getInductionVar(), iv);
              for (Operation &op : loop.getBody()->without_terminator()) {
                if (&op == serial.extract.getOperation() ||
                    &op == serial.reduction.getOperation() ||
                    &op == serial.repack)
                  continue;
                inner.clone(op, mapping);
              }
              child = mapping.lookupOrDefault(serial.reduction.getVector());
            } else {
              child = buildLevel(inner, level - 1, iv);
            }
            scf::YieldOp::create(inner, loc,
                                 ValueRange{vector::makeArithReduction(
                                     inner, loc, kind, child, args[0],
                                     serial.reduction.getFastmathAttr())});
          });
      return children.getResult(0);
    };
    Value top = buildLevel(b, levels - 1, index(b, serial.lower));
    Value init = vector::ExtractOp::create(b, loc, loop.getInitArgs()[0],
                                           ArrayRef<int64_t>{0});
    auto total =
        vector::ReductionOp::create(b, loc, kind, top, init,
                                    isa<FloatType>(partType.getElementType())
                                        ? arith::FastMathFlags::reassoc
                                        : arith::FastMathFlags::none);
    loop.getResult(0).replaceAllUsesWith(vector::BroadcastOp::create(
        b, loc, loop.getResult(0).getType(), total));
    loop.erase();
  }
}

struct HostLowerVectorsPass
    : public kiln::impl::HostLowerVectorsPassBase<HostLowerVectorsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *ctx = &getContext();

    // 0. Reductions over outer dims only (column sums) are elementwise ops
    //    between whole registers; the inner-reduction lowering below would
    //    transpose them into horizontal reductions of scattered elements.
    {
      SmallVector<Operation *> outerReductions;
      func.walk([&](vector::MultiDimReductionOp op) {
        ArrayRef<int64_t> dims = op.getReductionDims();
        bool outerOnly =
            !dims.empty() && static_cast<int64_t>(dims.size()) <
                                 op.getSourceVectorType().getRank();
        for (auto [i, dim] : llvm::enumerate(dims))
          outerOnly &= dim == static_cast<int64_t>(i);
        if (outerOnly)
          outerReductions.push_back(op);
      });
      RewritePatternSet patterns(ctx);
      vector::populateVectorMultiReductionLoweringPatterns(
          patterns, vector::VectorMultiReductionLowering::InnerParallel);
      GreedyRewriteConfig config;
      config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
      if (!outerReductions.empty() &&
          failed(applyOpPatternsGreedily(outerReductions, std::move(patterns),
                                         config)))
        return signalPassFailure();
    }

    // 1. Contractions, reductions, transposes, broadcasts and masks to
    //    operations on 1-D vectors; transfers to minor-identity maps. The
    //    unit dims that register tiles of size 1 leave are cast away first,
    //    so an elementwise tile is a plain vector<Nxf32>.
    {
      RewritePatternSet patterns(ctx);
      vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
      vector::populateVectorContractLoweringPatterns(
          patterns, vector::VectorContractLowering::OuterProduct);
      vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
      vector::populateVectorMultiReductionLoweringPatterns(
          patterns, vector::VectorMultiReductionLowering::InnerReduction);
      vector::populateVectorTransposeLoweringPatterns(
          patterns, vector::VectorTransposeLowering::EltWise);
      vector::populateVectorBroadcastLoweringPatterns(patterns);
      vector::populateVectorShapeCastLoweringPatterns(patterns);
      vector::populateVectorMaskOpLoweringPatterns(patterns);
      vector::populateVectorToVectorCanonicalizationPatterns(patterns);
      // Unit-dim removal and broadcast lowering can undo each other on n-D
      // vectors that cross a block boundary (kernels have none: every
      // vector here comes from a transfer in the same block); bound the
      // rewrites so such input is an error instead of a hang.
      GreedyRewriteConfig config;
      config.setMaxNumRewrites(kMaxRewrites);
      if (failed(applyPatternsGreedily(func, std::move(patterns), config))) {
        func.emitError() << "vector lowering of '" << func.getSymName()
                         << "' did not converge (n-D vectors crossing a "
                            "block or function boundary are not supported)";
        return signalPassFailure();
      }
    }

    // 2. n-D transfers become unrolled 1-D transfers.
    {
      RewritePatternSet patterns(ctx);
      populateVectorToSCFConversionPatterns(
          patterns, VectorTransferToSCFOptions().enableFullUnroll());
      if (failed(applyPatternsGreedily(func, std::move(patterns))))
        return signalPassFailure();
    }

    // 3. Keep the accumulators of reduction loops (the matmul K loop) in
    //    registers, one 1-D vector per row: a read/write pair of the same
    //    loop-invariant slice moves out of the loop and the value is carried
    //    by the loop. The hoisting matches the pair by base memref and index
    //    values and gives up on (chains of) subviews, so subviews are folded
    //    into the transfers and index computations hoisted and deduplicated
    //    first.
    {
      RewritePatternSet patterns(ctx);
      memref::populateFoldMemRefAliasOpPatterns(patterns);
      (void)applyPatternsGreedily(func, std::move(patterns));
    }
    func.walk([](LoopLikeOpInterface loop) { moveLoopInvariantCode(loop); });
    IRRewriter rewriter(ctx);
    DominanceInfo dominance(func);
    eliminateCommonSubExpressions(rewriter, dominance, func);
    linalg::hoistRedundantVectorTransfers(func);

    // 4. 1-D transfers on contiguous memory become vector.load/store (the
    //    others stay transfers: convert-vector-to-llvm emits masked or
    //    element-wise accesses for them).
    {
      RewritePatternSet patterns(ctx);
      vector::populateVectorTransferLoweringPatterns(patterns,
                                                     /*maxTransferRank=*/1);
      vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
      vector::populateVectorShapeCastLoweringPatterns(patterns);
      vector::populateVectorToVectorCanonicalizationPatterns(patterns);
      if (failed(applyPatternsGreedily(func, std::move(patterns))))
        return signalPassFailure();
    }

    // 5. Reductions carried serially by loops become trees (treeReductions).
    treeReductions(func);
  }
};

} // namespace
