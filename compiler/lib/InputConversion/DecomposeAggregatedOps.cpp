//===- DecomposeAggregatedOps.cpp - Decompose linalg aggregates -----------===//
//
// Replaces every op implementing linalg::AggregatedOpInterface (softmax, ...)
// by the ops its decomposition produces.
//
//===----------------------------------------------------------------------===//

#include "kiln/InputConversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_DECOMPOSEAGGREGATEDOPSPASS
#include "kiln/InputConversion/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {

struct DecomposeAggregatedOpsPass
    : public kiln::impl::DecomposeAggregatedOpsPassBase<
          DecomposeAggregatedOpsPass> {
  void runOnOperation() override {
    SmallVector<linalg::AggregatedOpInterface> aggregates;
    getOperation().walk(
        [&](linalg::AggregatedOpInterface op) { aggregates.push_back(op); });

    IRRewriter rewriter(&getContext());
    for (linalg::AggregatedOpInterface op : aggregates) {
      rewriter.setInsertionPoint(op);
      FailureOr<SmallVector<Value>> values = op.decomposeOperation(rewriter);
      if (failed(values) || values->size() != op->getNumResults()) {
        op->emitError("cannot decompose '")
            << op->getName() << "' into linalg ops for code generation";
        return signalPassFailure();
      }
      rewriter.replaceOp(op, *values);
    }
  }
};

} // namespace
