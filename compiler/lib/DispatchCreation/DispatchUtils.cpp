//===- DispatchUtils.cpp - Op classification for dispatch creation --------===//
#include "DispatchUtils.h"

#include "kiln/Dialect/Kiln/KilnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

bool mlir::kiln::isCheapProducer(Operation *op) {
  if (isa<tensor::EmptyOp, tensor::SplatOp>(op))
    return true;
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    return isa<RankedTensorType>(constant.getType()) &&
           isa<SplatElementsAttr>(constant.getValue());
  if (auto fill = dyn_cast<linalg::FillOp>(op)) {
    Operation *init = fill.getOutputs().front().getDefiningOp();
    return fill.hasPureTensorSemantics() && init && isCheapProducer(init);
  }
  return false;
}

bool mlir::kiln::isHostAlias(Operation *op) {
  return isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::ReshapeOp,
             tensor::BitcastOp, tensor::CastOp>(op);
}

bool mlir::kiln::isDispatchRoot(Operation *op) {
  if (isCheapProducer(op) || isHostAlias(op))
    return false;
  if (!llvm::any_of(op->getResultTypes(), llvm::IsaPred<RankedTensorType>))
    return false;
  if (isa<tensor::EmptyOp, tensor::DimOp, tensor::RankOp>(op))
    return false;
  return isa<linalg::LinalgDialect, tensor::TensorDialect>(op->getDialect());
}

bool mlir::kiln::isFusableElementwise(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || isa<linalg::FillOp>(op) ||
      !linalgOp.hasPureTensorSemantics())
    return false;
  return linalg::isElementwise(linalgOp);
}
