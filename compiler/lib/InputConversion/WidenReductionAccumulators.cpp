//===- WidenReductionAccumulators.cpp - f16/bf16 sums in f32 --------------===//
//
// Rewrites additive reductions with an f16/bf16 result to accumulate in f32
// and round once (see the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//

#include "kiln/InputConversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_WIDENREDUCTIONACCUMULATORSPASS
#include "kiln/InputConversion/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {

bool isNarrowFloat(Type type) { return type.isF16() || type.isBF16(); }

// The reduction to widen: one init of f16/bf16 elements, reduction loops,
// and a body that yields `acc + x` (or `x + acc`) for its accumulator `acc`.
bool isAdditiveNarrowReduction(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0 ||
      !op.hasPureTensorSemantics())
    return false;
  Type element = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  if (!isNarrowFloat(element))
    return false;
  Block *body = op.getBlock();
  Value acc = body->getArgument(body->getNumArguments() - 1);
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  return add && (add.getLhs() == acc || add.getRhs() == acc);
}

// Ops whose f16/bf16 results the body rewrite recomputes in f32 from f32
// operands: arith and math ops on floats (and selects and comparisons of
// them).
bool canWiden(Operation *op) {
  Dialect *dialect = op->getDialect();
  if (!dialect || !isa<arith::ArithDialect, math::MathDialect>(dialect))
    return false;
  if (isa<arith::BitcastOp, arith::FPToSIOp, arith::FPToUIOp>(op))
    return false;
  return op->getNumRegions() == 0;
}

// Clones `op` into a generic that accumulates in f32; returns the f32
// result, or null when the body holds an op this rewrite does not know.
Value widen(RewriterBase &rewriter, linalg::GenericOp op) {
  Location loc = op.getLoc();
  Type f32 = rewriter.getF32Type();
  Value init = op.getDpsInits()[0];
  auto initType = cast<RankedTensorType>(init.getType());
  auto wideType = initType.clone(f32);
  Block *body = op.getBlock();
  for (Operation &inner : body->without_terminator())
    if (llvm::any_of(inner.getResultTypes(), isNarrowFloat) &&
        !canWiden(&inner) && !isa<arith::TruncFOp>(inner))
      return nullptr;

  // init -> f32
  SmallVector<AffineMap> identity(
      2, rewriter.getMultiDimIdentityMap(initType.getRank()));
  SmallVector<utils::IteratorType> parallel(initType.getRank(),
                                            utils::IteratorType::parallel);
  Value empty = tensor::EmptyOp::create(rewriter, loc, initType.getShape(), f32);
  Value wideInit =
      linalg::GenericOp::create(
          rewriter, loc, wideType, init, empty, identity, parallel,
          [&](OpBuilder &b, Location loc, ValueRange args) {
            linalg::YieldOp::create(
                b, loc, arith::ExtFOp::create(b, loc, f32, args[0]).getResult());
          })
          .getResult(0);

  // The reduction in f32.
  auto wide = linalg::GenericOp::create(
      rewriter, loc, wideType, op.getDpsInputs(), wideInit,
      op.getIndexingMapsArray(), op.getIteratorTypesArray(),
      [&](OpBuilder &b, Location loc, ValueRange args) {
        // f32 counterparts of the body's f16/bf16 values.
        IRMapping same;
        DenseMap<Value, Value> wideOf;
        for (auto [old, now] : llvm::zip(body->getArguments(), args)) {
          same.map(old, now);
          if (now.getType() == f32 && isNarrowFloat(old.getType()))
            wideOf[old] = now; // the accumulator
        }
        auto toWide = [&](Value old) -> Value {
          if (Value w = wideOf.lookup(old))
            return w;
          Value now = same.lookupOrDefault(old);
          if (isNarrowFloat(now.getType()))
            return arith::ExtFOp::create(b, loc, f32, now);
          return now;
        };
        for (Operation &inner : body->without_terminator()) {
          bool narrowIn = llvm::any_of(inner.getOperands(), [&](Value v) {
            return isNarrowFloat(v.getType());
          });
          bool narrowOut = llvm::any_of(inner.getResultTypes(), isNarrowFloat);
          if (auto ext = dyn_cast<arith::ExtFOp>(inner);
              ext && ext.getType() == f32) {
            same.map(ext.getResult(), toWide(ext.getIn()));
            continue;
          }
          if (auto trunc = dyn_cast<arith::TruncFOp>(inner);
              trunc && isNarrowFloat(trunc.getType())) {
            // Kept in f32 for what follows; narrow users see the rounding.
            Value in = same.lookupOrDefault(trunc.getIn());
            wideOf[trunc.getResult()] = in;
            same.map(trunc.getResult(),
                     arith::TruncFOp::create(b, loc, trunc.getType(), in));
            continue;
          }
          if (!narrowIn && !narrowOut) {
            b.clone(inner, same);
            continue;
          }
          // Recreated on f32 operands, f16/bf16 results made f32.
          SmallVector<Value> operands;
          for (Value v : inner.getOperands())
            operands.push_back(isNarrowFloat(v.getType()) ? toWide(v)
                                                          : same.lookupOrDefault(v));
          SmallVector<Type> types;
          for (Type t : inner.getResultTypes())
            types.push_back(isNarrowFloat(t) ? f32 : t);
          OperationState state(loc, inner.getName(), operands, types,
                               inner.getAttrs());
          Operation *now = b.create(state);
          for (auto [old, result] :
               llvm::zip(inner.getResults(), now->getResults())) {
            if (isNarrowFloat(old.getType())) {
              wideOf[old] = result;
              same.map(old, arith::TruncFOp::create(b, loc, old.getType(),
                                                    result));
            } else {
              same.map(old, result);
            }
          }
        }
        Value yielded = body->getTerminator()->getOperand(0);
        linalg::YieldOp::create(b, loc, toWide(yielded));
      });

  // Rounded once.
  Value narrowEmpty = tensor::EmptyOp::create(rewriter, loc, initType.getShape(),
                                              initType.getElementType());
  return linalg::GenericOp::create(
             rewriter, loc, initType, wide.getResult(0), narrowEmpty, identity,
             parallel,
             [&](OpBuilder &b, Location loc, ValueRange args) {
               linalg::YieldOp::create(
                   b, loc,
                   arith::TruncFOp::create(b, loc, initType.getElementType(),
                                           args[0])
                       .getResult());
             })
      .getResult(0);
}

struct WidenReductionAccumulatorsPass
    : public kiln::impl::WidenReductionAccumulatorsPassBase<
          WidenReductionAccumulatorsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // linalg.reduce is a generic in disguise.
    SmallVector<linalg::ReduceOp> reduces;
    getOperation().walk([&](linalg::ReduceOp op) {
      if (op.getNumDpsInits() != 1 ||
          !isNarrowFloat(getElementTypeOrSelf(op.getDpsInits()[0].getType())))
        return;
      Block &body = op.getCombiner().front();
      Value acc = body.getArgument(body.getNumArguments() - 1);
      auto add =
          body.getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
      if (add && (add.getLhs() == acc || add.getRhs() == acc))
        reduces.push_back(op);
    });
    for (linalg::ReduceOp op : reduces) {
      rewriter.setInsertionPoint(op);
      (void)linalg::generalizeNamedOp(rewriter, op);
    }
    SmallVector<linalg::GenericOp> candidates;
    getOperation().walk([&](linalg::GenericOp op) {
      if (isAdditiveNarrowReduction(op))
        candidates.push_back(op);
    });
    for (linalg::GenericOp op : candidates) {
      rewriter.setInsertionPoint(op);
      if (Value rounded = widen(rewriter, op))
        rewriter.replaceOp(op, rounded);
    }
  }
};

} // namespace
