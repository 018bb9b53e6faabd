//===- SplitInputAccumulatorsPass.cpp - C += A*B on a kernel input ---------===//
//
// A contraction whose accumulator (init) is one of the kernel's inputs reads
// and writes a read-only binding. Bufferization then copies the whole input
// into a temporary in every workgroup and copies the temporary out whole,
// so workgroups overwrite each other's tiles. Splitting it into a
// contraction from zero followed by an elementwise add of the input keeps
// every access tile-local (the add and the fill fuse into each tile), and
// gives the GPU contraction recipe its fill + matmul + epilogue shape.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_SPLITINPUTACCUMULATORSPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {

// Rewrites `op` (a contraction with a single tensor init that is a block
// argument of the kernel) into fill(0) + op + add.
static LogicalResult split(RewriterBase &rewriter, linalg::LinalgOp op) {
  Value init = op.getDpsInits()[0];
  auto type = cast<RankedTensorType>(init.getType());
  Type element = type.getElementType();
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  TypedAttr zeroAttr = rewriter.getZeroAttr(element);
  if (!zeroAttr)
    return op.emitError() << "cannot accumulate into an input of element type "
                          << element;
  Value zero = arith::ConstantOp::create(rewriter, loc, zeroAttr);
  Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(), element);
  Value filled =
      linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);
  Operation *fromZero = rewriter.clone(*op.getOperation());
  fromZero->setOperand(op.getDpsInitOperand(0)->getOperandNumber(), filled);

  AffineMap identity = rewriter.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  Value empty2 =
      tensor::EmptyOp::create(rewriter, loc, type.getShape(), element);
  auto add = linalg::GenericOp::create(
      rewriter, loc, type, ValueRange{fromZero->getResult(0), init},
      ValueRange{empty2}, ArrayRef<AffineMap>{identity, identity, identity},
      iterators, [&](OpBuilder &b, Location nested, ValueRange args) {
        Value sum = isa<FloatType>(element)
                        ? arith::AddFOp::create(b, nested, args[0], args[1])
                              .getResult()
                        : arith::AddIOp::create(b, nested, args[0], args[1])
                              .getResult();
        linalg::YieldOp::create(b, nested, sum);
      });
  rewriter.replaceOp(op, add.getResults());
  return success();
}

struct SplitInputAccumulatorsPass
    : public kiln::impl::SplitInputAccumulatorsPassBase<
          SplitInputAccumulatorsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<linalg::LinalgOp> candidates;
    func.walk([&](linalg::LinalgOp op) {
      if (!linalg::isaContractionOpInterface(op) || op.getNumDpsInits() != 1 ||
          !op.hasPureTensorSemantics())
        return;
      auto argument = dyn_cast<BlockArgument>(op.getDpsInits()[0]);
      if (argument && argument.getOwner()->isEntryBlock() &&
          argument.getOwner()->getParentOp() == func.getOperation())
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : candidates)
      if (failed(split(rewriter, op)))
        return signalPassFailure();
  }
};

} // namespace
