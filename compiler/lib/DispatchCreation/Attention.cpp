//===- Attention.cpp - The attention chain as one unit --------------------===//
#include "kiln/DispatchCreation/Attention.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kiln;

namespace {

using utils::IteratorType;

// The op yielding the body's single result, and the body's block
// arguments.
Operation *yieldedOp(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  Operation *terminator = body->getTerminator();
  if (terminator->getNumOperands() != 1)
    return nullptr;
  return terminator->getOperand(0).getDefiningOp();
}

bool isArg(Value value, linalg::LinalgOp op, OpOperand *operand) {
  return value == op.getMatchingBlockArgument(operand);
}

// A linalg op with one init, the given iterator types and indexing maps
// (inputs in order, then the init), over `dims` loops.
bool hasShape(linalg::LinalgOp op, ArrayRef<IteratorType> iterators,
              ArrayRef<SmallVector<unsigned>> maps) {
  if (!op || op.getNumDpsInits() != 1 ||
      op.getNumDpsInputs() + 1 != int64_t(maps.size()) ||
      op.getIteratorTypesArray() != iterators)
    return false;
  MLIRContext *context = op->getContext();
  SmallVector<AffineMap> expected;
  for (ArrayRef<unsigned> results : maps) {
    SmallVector<AffineExpr> exprs;
    for (unsigned dim : results)
      exprs.push_back(getAffineDimExpr(dim, context));
    expected.push_back(AffineMap::get(iterators.size(), 0, exprs, context));
  }
  return op.getIndexingMapsArray() == expected;
}

constexpr IteratorType P = IteratorType::parallel;
constexpr IteratorType R = IteratorType::reduction;

// A fill of the accumulator `init` reads with a constant equal to
// `expected` (-inf allowed), possibly through copies (appended to
// `copies`).
linalg::FillOp accumulatorFill(OpOperand &init, AttentionProducerFn producerOf,
                               double expected,
                               SmallVector<Operation *> &copies) {
  Operation *producer = producerOf(init);
  while (auto copy = dyn_cast_or_null<linalg::CopyOp>(producer)) {
    copies.push_back(copy);
    producer = producerOf(*copy.getDpsInputOperand(0));
  }
  auto fill = dyn_cast_or_null<linalg::FillOp>(producer);
  if (!fill)
    return nullptr;
  APFloat value(0.0);
  if (!matchPattern(fill.getDpsInputs()[0], m_ConstantFloat(&value)))
    return nullptr;
  bool lossy = false;
  value.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lossy);
  return value.convertToDouble() == expected ? fill : nullptr;
}

// S[b,m,n] = sum_d A[b,m,d] * B[b,n,d] (kTransposed) or O[b,m,d] = sum_n
// P[b,m,n] V[b,n,d]: a contraction over loops (b, m, x, r) with f32
// accumulation, its init filled with zero.
bool isBatchContraction(linalg::LinalgOp op, bool transposedB) {
  SmallVector<unsigned> a = {0, 1, 3};
  SmallVector<unsigned> b = transposedB ? SmallVector<unsigned>{0, 2, 3}
                                        : SmallVector<unsigned>{0, 3, 2};
  return hasShape(op, {P, P, P, R}, {a, b, {0, 1, 2}}) &&
         linalg::isaContractionOpInterface(op) &&
         getElementTypeOrSelf(op.getDpsInits()[0].getType()).isF32();
}

// A row reduction (loops b, m, n; input read at every point, result per
// row) whose body combines input and accumulator with `Combiner`.
template <typename... Combiner> bool isRowReduction(linalg::LinalgOp op) {
  if (!hasShape(op, {P, P, R}, {{0, 1, 2}, {0, 1}}))
    return false;
  Operation *combine = yieldedOp(op);
  if (!combine || !isa<Combiner...>(combine))
    return false;
  Value in = op.getMatchingBlockArgument(op.getDpsInputOperand(0));
  Value acc = op.getMatchingBlockArgument(op.getDpsInitOperand(0));
  return (combine->getOperand(0) == in && combine->getOperand(1) == acc) ||
         (combine->getOperand(0) == acc && combine->getOperand(1) == in);
}

// yield truncf(x) over identical maps, f32 -> elementType.
bool isTruncation(linalg::LinalgOp op, Type elementType) {
  if (!hasShape(op, {P, P, P}, {{0, 1, 2}, {0, 1, 2}}))
    return false;
  auto trunc = dyn_cast_or_null<arith::TruncFOp>(yieldedOp(op));
  return trunc && isArg(trunc.getIn(), op, op.getDpsInputOperand(0)) &&
         trunc.getIn().getType().isF32() && trunc.getType() == elementType;
}

// An elementwise op over (b, m, n) with two inputs, one read at every
// point (`full`) and one per row (`row`), in either order.
bool hasFullAndRowInputs(linalg::LinalgOp op, OpOperand *&full,
                         OpOperand *&row) {
  if (op.getNumDpsInputs() != 2)
    return false;
  full = op.getDpsInputOperand(0);
  row = op.getDpsInputOperand(1);
  if (op.getMatchingIndexingMap(full).getNumResults() != 3)
    std::swap(full, row);
  SmallVector<SmallVector<unsigned>> maps(3, {0, 1, 2});
  maps[row->getOperandNumber()] = {0, 1};
  return hasShape(op, {P, P, P}, maps);
}

// S' = n > m ? -inf : S over (b, m, n): select(cmpi(index 2 > index 1),
// -inf, s) (or index 1 < index 2), keys after the query masked.
bool isCausalMask(linalg::LinalgOp op) {
  if (!hasShape(op, {P, P, P}, {{0, 1, 2}, {0, 1, 2}}))
    return false;
  auto select = dyn_cast_or_null<arith::SelectOp>(yieldedOp(op));
  if (!select || !isArg(select.getFalseValue(), op, op.getDpsInputOperand(0)))
    return false;
  APFloat masked(0.0);
  if (!matchPattern(select.getTrueValue(), m_ConstantFloat(&masked)) ||
      !masked.isInfinity() || !masked.isNegative())
    return false;
  auto cmp = select.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!cmp)
    return false;
  auto dimOf = [](Value v) -> int64_t {
    auto index = v.getDefiningOp<linalg::IndexOp>();
    return index ? int64_t(index.getDim()) : -1;
  };
  int64_t lhs = dimOf(cmp.getLhs()), rhs = dimOf(cmp.getRhs());
  using Pred = arith::CmpIPredicate;
  Pred pred = cmp.getPredicate();
  return ((pred == Pred::ugt || pred == Pred::sgt) && lhs == 2 && rhs == 1) ||
         ((pred == Pred::ult || pred == Pred::slt) && lhs == 1 && rhs == 2);
}

// P = exp((S - mx) * c): inputs S (identity) and mx (per row), in either
// order; the multiply by a constant optional, its operands in either order.
bool isScaledExp(linalg::LinalgOp op, OpOperand *&scores, OpOperand *&rowMax,
                 double &scale) {
  if (!hasFullAndRowInputs(op, scores, rowMax))
    return false;
  auto exp = dyn_cast_or_null<math::ExpOp>(yieldedOp(op));
  if (!exp || !exp.getType().isF32())
    return false;
  Value x = exp.getOperand();
  scale = 1.0;
  if (auto mul = x.getDefiningOp<arith::MulFOp>()) {
    APFloat c(0.0);
    Value other;
    if (matchPattern(mul.getRhs(), m_ConstantFloat(&c)))
      other = mul.getLhs();
    else if (matchPattern(mul.getLhs(), m_ConstantFloat(&c)))
      other = mul.getRhs();
    else
      return false;
    bool lossy = false;
    c.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lossy);
    scale = c.convertToDouble();
    if (!std::isfinite(scale))
      return false;
    x = other;
  }
  auto sub = x.getDefiningOp<arith::SubFOp>();
  return sub && isArg(sub.getLhs(), op, scores) &&
         isArg(sub.getRhs(), op, rowMax);
}

// out = truncf(O / l): inputs O (identity) and l (per row).
bool isNormalization(linalg::LinalgOp op, OpOperand *&values,
                     OpOperand *&rowSum) {
  if (!hasFullAndRowInputs(op, values, rowSum))
    return false;
  auto trunc = dyn_cast_or_null<arith::TruncFOp>(yieldedOp(op));
  if (!trunc)
    return false;
  auto div = trunc.getIn().getDefiningOp<arith::DivFOp>();
  return div && div.getType().isF32() && isArg(div.getLhs(), op, values) &&
         isArg(div.getRhs(), op, rowSum);
}

// Static shape [b, rows, cols] of `value` with element type `type` (any
// when null).
bool hasStaticShape(Value value, ArrayRef<int64_t> shape, Type type) {
  auto shaped = dyn_cast<ShapedType>(value.getType());
  return shaped && shaped.hasStaticShape() && shaped.getShape() == shape &&
         (!type || shaped.getElementType() == type);
}

} // namespace

std::optional<AttentionChain>
mlir::kiln::matchAttention(Operation *normalizeOp,
                           AttentionProducerFn producerOf) {
  AttentionChain chain;
  auto linalgOf = [&](OpOperand &operand) {
    return dyn_cast_or_null<linalg::LinalgOp>(producerOf(operand));
  };
  chain.normalize = dyn_cast_or_null<linalg::LinalgOp>(normalizeOp);
  OpOperand *valuesOperand, *rowSumOperand;
  if (!chain.normalize ||
      !isNormalization(chain.normalize, valuesOperand, rowSumOperand))
    return std::nullopt;
  chain.values = linalgOf(*valuesOperand);
  chain.rowSum = linalgOf(*rowSumOperand);
  if (!chain.values || !isBatchContraction(chain.values, false) ||
      !chain.rowSum || !isRowReduction<arith::AddFOp>(chain.rowSum))
    return std::nullopt;
  chain.truncate = linalgOf(*chain.values.getDpsInputOperand(0));
  chain.elementType = getElementTypeOrSelf(chain.values.getDpsInputs()[0]);
  if (!chain.elementType.isF16() && !chain.elementType.isBF16())
    return std::nullopt;
  if (!chain.truncate || !isTruncation(chain.truncate, chain.elementType))
    return std::nullopt;
  chain.exp = linalgOf(*chain.truncate.getDpsInputOperand(0));
  if (!chain.exp || chain.exp != linalgOf(*chain.rowSum.getDpsInputOperand(0)))
    return std::nullopt;
  OpOperand *scoresOperand, *rowMaxOperand;
  if (!isScaledExp(chain.exp, scoresOperand, rowMaxOperand, chain.scale))
    return std::nullopt;
  chain.scores = linalgOf(*scoresOperand);
  chain.rowMax = linalgOf(*rowMaxOperand);
  if (!chain.scores || !chain.rowMax ||
      !isRowReduction<arith::MaximumFOp, arith::MaxNumFOp>(chain.rowMax) ||
      chain.scores != linalgOf(*chain.rowMax.getDpsInputOperand(0)))
    return std::nullopt;
  if (isCausalMask(chain.scores)) {
    chain.causalMask = chain.scores;
    chain.scores = linalgOf(*chain.causalMask.getDpsInputOperand(0));
  }
  if (!chain.scores || !isBatchContraction(chain.scores, true))
    return std::nullopt;

  auto fillOf = [&](linalg::LinalgOp op, double value) {
    return accumulatorFill(*op.getDpsInitOperand(0), producerOf, value,
                           chain.accumulatorCopies);
  };
  chain.scoresFill = fillOf(chain.scores, 0.0);
  chain.valuesFill = fillOf(chain.values, 0.0);
  chain.rowSumFill = fillOf(chain.rowSum, 0.0);
  chain.rowMaxFill = fillOf(chain.rowMax, -INFINITY);
  if (!chain.scoresFill || !chain.valuesFill || !chain.rowSumFill ||
      !chain.rowMaxFill)
    return std::nullopt;

  chain.q = chain.scores.getDpsInputs()[0];
  chain.k = chain.scores.getDpsInputs()[1];
  chain.v = chain.values.getDpsInputs()[1];
  chain.out = chain.normalize.getDpsInits()[0];
  auto qType = dyn_cast<ShapedType>(chain.q.getType());
  auto kType = dyn_cast<ShapedType>(chain.k.getType());
  if (!qType || !kType || !qType.hasStaticShape() || !kType.hasStaticShape() ||
      qType.getRank() != 3 || kType.getRank() != 3)
    return std::nullopt;
  chain.batch = qType.getDimSize(0);
  chain.m = qType.getDimSize(1);
  chain.d = qType.getDimSize(2);
  chain.n = kType.getDimSize(1);
  Type e = chain.elementType;
  if (!hasStaticShape(chain.q, {chain.batch, chain.m, chain.d}, e) ||
      !hasStaticShape(chain.k, {chain.batch, chain.n, chain.d}, e) ||
      !hasStaticShape(chain.v, {chain.batch, chain.n, chain.d}, e) ||
      !hasStaticShape(chain.out, {chain.batch, chain.m, chain.d}, e))
    return std::nullopt;
  return chain;
}

std::optional<AttentionChain>
mlir::kiln::matchAttentionOnTensors(Operation *normalize) {
  return matchAttention(normalize, [](OpOperand &operand) {
    return operand.get().getDefiningOp();
  });
}

bool mlir::kiln::isFusableAttention(const AttentionChain &chain) {
  return (chain.d == 64 || chain.d == 128) && chain.m % 64 == 0 &&
         chain.n % 64 == 0 && chain.batch > 0;
}
