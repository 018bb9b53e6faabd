//===- GPUThreadUtils.cpp - Helpers of the passes that spread work over threads
//-===//

#include "GPUThreadUtils.h"

#include "kiln/Codegen/Passes.h"

#include "CodegenUtils.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::kiln;

FailureOr<SmallVector<linalg::LinalgOp>>
mlir::kiln::getBufferizedOps(func::FuncOp func) {
  SmallVector<linalg::LinalgOp> ops;
  func.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
  for (linalg::LinalgOp op : ops)
    if (!op.hasPureBufferSemantics())
      return op.emitError()
             << "expected a bufferized op; run kiln-gpu-bufferize first";
  return ops;
}

void mlir::kiln::insertBarriersAfter(RewriterBase &rewriter,
                                     ArrayRef<Operation *> done) {
  for (Operation *op : done) {
    bool needed = false;
    for (Operation *next = op->getNextNode(); next && !needed;
         next = next->getNextNode()) {
      if (isa<gpu::BarrierOp>(next))
        break;
      needed = !next->hasTrait<OpTrait::IsTerminator>() &&
               !isMemoryEffectFree(next) &&
               !isa<memref::AllocOp, memref::DeallocOp>(next);
    }
    if (!needed)
      continue;
    rewriter.setInsertionPointAfter(op);
    gpu::BarrierOp::create(rewriter, op->getLoc());
  }
}

// The indices of the point at linear position `index` of a row-major space
// of `sizes` (one dimension: `index` itself).
SmallVector<Value> mlir::kiln::delinearize(OpBuilder &b, Location loc,
                                           Value index, ArrayRef<Value> sizes) {
  if (sizes.size() == 1)
    return {index};
  auto delin = affine::AffineDelinearizeIndexOp::create(
      b, loc, index, getAsOpFoldResult(sizes));
  return SmallVector<Value>(delin.getResults());
}

// Combines two partial results with a clone of the reduction's combiner.
Value mlir::kiln::combine(OpBuilder &b, Operation *combiner, Value lhs,
                          Value rhs) {
  IRMapping mapping;
  mapping.map(combiner->getOperand(0), lhs);
  mapping.map(combiner->getOperand(1), rhs);
  return b.clone(*combiner, mapping)->getResult(0);
}

// The gpu.subgroup_reduce operation of a reduction combiner over 32-bit
// scalars (what the shuffle and DPP lowerings take in one step), if any.
std::optional<gpu::AllReduceOperation>
mlir::kiln::getSubgroupReduceKind(Operation *combiner, Type type) {
  if (!type.isIntOrFloat() || type.getIntOrFloatBitWidth() != 32)
    return std::nullopt;
  using K = gpu::AllReduceOperation;
  return llvm::TypeSwitch<Operation *, std::optional<K>>(combiner)
      .Case<arith::AddFOp, arith::AddIOp>([](auto) { return K::ADD; })
      .Case<arith::MulFOp, arith::MulIOp>([](auto) { return K::MUL; })
      .Case<arith::MaxNumFOp>([](auto) { return K::MAXNUMF; })
      .Case<arith::MinNumFOp>([](auto) { return K::MINNUMF; })
      .Case<arith::MaximumFOp>([](auto) { return K::MAXIMUMF; })
      .Case<arith::MinimumFOp>([](auto) { return K::MINIMUMF; })
      .Case<arith::MaxSIOp>([](auto) { return K::MAXSI; })
      .Case<arith::MinSIOp>([](auto) { return K::MINSI; })
      .Case<arith::MaxUIOp>([](auto) { return K::MAXUI; })
      .Case<arith::MinUIOp>([](auto) { return K::MINUI; })
      .Case<arith::AndIOp>([](auto) { return K::AND; })
      .Case<arith::OrIOp>([](auto) { return K::OR; })
      .Case<arith::XOrIOp>([](auto) { return K::XOR; })
      .Default([](Operation *) { return std::nullopt; });
}

ChunkRead mlir::kiln::classifyChunkRead(linalg::LinalgOp op, OpOperand &operand,
                                        unsigned reducedDim) {
  auto type = dyn_cast<MemRefType>(operand.get().getType());
  if (!type)
    return ChunkRead::Scalar; // a scalar operand
  AffineMap map = op.getMatchingIndexingMap(&operand);
  bool uses = llvm::any_of(map.getResults(), [&](AffineExpr e) {
    return e.isFunctionOfDim(reducedDim);
  });
  if (!uses)
    return ChunkRead::Scalar; // the same value for the whole chunk
  SmallVector<int64_t> strides;
  int64_t offset;
  bool innermostContiguous =
      succeeded(type.getStridesAndOffset(strides, offset)) &&
      !strides.empty() && strides.back() == 1;
  Type element = type.getElementType();
  bool vectorType =
      element.isIntOrFloat() && element.getIntOrFloatBitWidth() >= 8;
  bool lastOnly =
      map.getNumResults() > 0 &&
      map.getResults().back() ==
          getAffineDimExpr(reducedDim, op.getContext()) &&
      llvm::none_of(map.getResults().drop_back(), [&](AffineExpr e) {
        return e.isFunctionOfDim(reducedDim);
      });
  return innermostContiguous && vectorType && lastOnly ? ChunkRead::Vector
                                                       : ChunkRead::Elementwise;
}

void mlir::kiln::publishSubgroupTotal(OpBuilder &b, Location loc, Value total,
                                      Value lane, Value shared, Value slot) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value leader =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, zero);
  scf::IfOp::create(b, loc, leader, [&](OpBuilder &ib, Location l) {
    memref::StoreOp::create(ib, l, total, shared, slot);
    scf::YieldOp::create(ib, l);
  });
  gpu::BarrierOp::create(b, loc);
}
