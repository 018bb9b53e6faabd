//===- DefineIntegerDivisionPass.cpp - Division results for every input ---===//
//
// Integer division by zero and INT_MIN / -1 are undefined in LLVM IR, and on
// x86-64 the instructions trap (SIGFPE kills the process that runs the
// kernel). Kiln defines them instead, the same on every target (the RISC-V
// rules): x / 0 = -1 (all bits set, signed and unsigned), x % 0 = x,
// INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0. The divisor is replaced by 1
// where the instruction would trap, and the result selected afterwards.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_DEFINEINTEGERDIVISIONPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {

// A constant of `type` (an integer or a vector of integers) with every
// element `value`.
static Value constantLike(OpBuilder &b, Location loc, Type type,
                          const APInt &value) {
  Type element = getElementTypeOrSelf(type);
  TypedAttr attr = b.getIntegerAttr(element, value);
  if (auto vector = dyn_cast<VectorType>(type))
    attr = DenseElementsAttr::get(vector, attr);
  return arith::ConstantOp::create(b, loc, attr);
}

// Whether the divisor of `op` is a constant that can neither be zero nor,
// for signed ops, -1 (index arithmetic, mostly): nothing to define then.
static bool hasSafeConstantDivisor(Operation *op) {
  APInt value;
  bool isSigned = isa<arith::DivSIOp, arith::RemSIOp>(op);
  if (!matchPattern(op->getOperand(1), m_ConstantInt(&value)))
    return false;
  return !value.isZero() && !(isSigned && value.isAllOnes());
}

static void define(Operation *op) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  Type type = lhs.getType();
  Type element = getElementTypeOrSelf(type);
  unsigned width = isa<IndexType>(element) ? IndexType::kInternalStorageBitWidth
                                           : element.getIntOrFloatBitWidth();
  bool isSigned = isa<arith::DivSIOp, arith::RemSIOp>(op);
  bool isDivision = isa<arith::DivSIOp, arith::DivUIOp>(op);

  Value zero = constantLike(b, loc, type, APInt::getZero(width));
  Value one = constantLike(b, loc, type, APInt(width, 1));
  Value byZero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rhs, zero);
  Value unsafe = byZero;
  if (isSigned) {
    Value min = constantLike(b, loc, type, APInt::getSignedMinValue(width));
    Value minusOne = constantLike(b, loc, type, APInt::getAllOnes(width));
    Value overflow = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lhs, min),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rhs,
                              minusOne));
    unsafe = arith::OrIOp::create(b, loc, byZero, overflow);
  }
  // INT_MIN / 1 = INT_MIN and INT_MIN % 1 = 0: the defined overflow results.
  Value divisor = arith::SelectOp::create(b, loc, unsafe, one, rhs);
  op->setOperand(1, divisor);
  b.setInsertionPointAfter(op);
  Value byZeroResult =
      isDivision ? constantLike(b, loc, type, APInt::getAllOnes(width)) : lhs;
  auto select = arith::SelectOp::create(b, loc, byZero, byZeroResult,
                                        op->getResult(0));
  op->getResult(0).replaceAllUsesExcept(select, select);
}

struct DefineIntegerDivisionPass
    : public kiln::impl::DefineIntegerDivisionPassBase<
          DefineIntegerDivisionPass> {
  void runOnOperation() override {
    // ceildiv / floordiv become plain divisions first.
    RewritePatternSet patterns(&getContext());
    arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    SmallVector<Operation *> divisions;
    getOperation()->walk([&](Operation *op) {
      if (isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp>(
              op) &&
          !hasSafeConstantDivisor(op))
        divisions.push_back(op);
    });
    for (Operation *op : divisions)
      define(op);
  }
};

} // namespace
