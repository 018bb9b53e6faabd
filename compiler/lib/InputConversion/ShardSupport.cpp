//===- ShardSupport.cpp - Which shard ops Kiln compiles -------------------===//
#include "ShardSupport.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::kiln;

static constexpr const char *kSupportedCollectives =
    "shard.all_reduce, shard.all_gather, shard.reduce_scatter, "
    "shard.all_to_all and shard.broadcast";

LogicalResult mlir::kiln::verifyStaticGrid(shard::GridOp grid) {
  if (grid.getShape().empty() ||
      llvm::any_of(grid.getShape(), ShapedType::isDynamic))
    return grid.emitError("grid @")
           << grid.getSymName()
           << " must have a static shape: the number of ranks of a run is "
              "fixed when it starts";
  return success();
}

// i1 reductions (logical: sum and max are or, product and min are and) run
// as compiled collectives only.
static bool isCollectiveElementType(Type type, bool reducing, bool compiled) {
  if (auto intType = dyn_cast<IntegerType>(type)) {
    unsigned width = intType.getWidth();
    return intType.isSignless() &&
           ((width == 1 && (!reducing || compiled)) || width == 8 ||
            width == 16 || width == 32 || width == 64);
  }
  return isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(type);
}

// How to get what only compiled collective kernels run.
static constexpr llvm::StringLiteral kCompiledOnly =
    " runs only as a compiled collective kernel: an all_reduce or "
    "reduce_scatter, compiled with collective kernels on (the default; "
    "--collective-kernel-max-bytes=0 turns them off)";

// `compiled`: the collective may become a compiled kernel (collective
// kernels on), which takes what no library does.
static LogicalResult verifyReduction(Operation *op, shard::ReductionKind kind,
                                     Type elementType, bool gpuCollectives,
                                     bool compiled) {
  auto error = [&]() {
    return op->emitError("reduction '") << shard::stringifyReductionKind(kind)
                                        << "' of '" << op->getName() << "'";
  };
  switch (kind) {
  case shard::ReductionKind::BitwiseAnd:
  case shard::ReductionKind::BitwiseOr:
  case shard::ReductionKind::BitwiseXor:
    if (!isa<IntegerType>(elementType))
      return error() << " needs an integer element type, got " << elementType;
    if (!compiled)
      return error() << kCompiledOnly
                     << " (no collective library has bitwise reductions)";
    return success();
  default:
    break;
  }
  if (elementType.isInteger(1) && !compiled)
    return error() << " on i1" << kCompiledOnly;
  if (gpuCollectives && !compiled && elementType.isInteger(16))
    return op->emitError("reduction '")
           << shard::stringifyReductionKind(kind) << "' of '" << op->getName()
           << "' on " << elementType
           << " cannot run on the rocm and cuda targets: NCCL and RCCL have no "
              "16-bit integer type and collective kernels are off "
              "(--collective-kernel-max-bytes=0); leave them on, or extend "
              "the operand to i32 first";
  switch (kind) {
  case shard::ReductionKind::Sum:
  case shard::ReductionKind::Product:
  case shard::ReductionKind::Min:
  case shard::ReductionKind::Max:
    return success();
  case shard::ReductionKind::Average:
    if (isa<FloatType>(elementType))
      return success();
    return op->emitError("reduction 'average' of '")
           << op->getName() << "' needs a float element type, got "
           << elementType << "; reduce with 'sum' and divide instead";
  default:
    return op->emitError("reduction '")
           << shard::stringifyReductionKind(kind) << "' of '" << op->getName()
           << "' is not supported; supported: sum, product, min, max, "
              "average, bitwise_and, bitwise_or, bitwise_xor";
  }
}

// Checks the operand and result of a collective: static tensors of a
// supported element type, the same one on both sides.
static LogicalResult verifyCollectiveTypes(Operation *op, bool reducing,
                                           bool compiled = false) {
  Type inputType = op->getOperand(0).getType();
  Type resultType = op->getResult(0).getType();
  for (Type type : {inputType, resultType}) {
    auto tensorType = dyn_cast<RankedTensorType>(type);
    if (!tensorType || !tensorType.hasStaticShape())
      return op->emitError("'")
             << op->getName()
             << "' needs static-shape ranked tensors, got " << type;
    if (!isCollectiveElementType(tensorType.getElementType(), reducing,
                                 compiled))
      return op->emitError("element type ")
             << tensorType.getElementType() << " of '" << op->getName()
             << "' is not supported; supported: "
             << (reducing && !compiled ? "" : "i1, ")
             << "i8, i16, i32, i64, f16, bf16, f32, f64"
             << (reducing && !compiled
                     ? " (i1 reductions run as compiled collective kernels)"
                     : "");
  }
  if (getElementTypeOrSelf(inputType) != getElementTypeOrSelf(resultType))
    return op->emitError("'")
           << op->getName() << "' converts " << getElementTypeOrSelf(inputType)
           << " to " << getElementTypeOrSelf(resultType)
           << "; convert the operand first (collectives keep the element "
              "type)";
  return success();
}

LogicalResult mlir::kiln::verifySupportedShardOp(
    Operation *op, SymbolTableCollection &symbolTables, bool gpuCollectives,
    bool compiledReductions) {
  if (auto grid = dyn_cast<shard::GridOp>(op))
    return verifyStaticGrid(grid);
  if (isa<shard::ShardingOp, shard::ShardOp>(op))
    return op->emitError("sharding annotation '")
           << op->getName()
           << "' must be partitioned first (kiln-partition-shards)";

  auto checkGrid = [&](FlatSymbolRefAttr gridName) -> LogicalResult {
    shard::GridOp grid = shard::getGridOrNull(op, gridName, symbolTables);
    if (!grid)
      return op->emitError("no shard.grid named ") << gridName;
    if (failed(verifyStaticGrid(grid)))
      return op->emitError("'")
             << op->getName() << "' runs on grid " << gridName
             << ", which has a dynamic shape";
    return success();
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<shard::AllReduceOp, shard::ReduceScatterOp>(
          [&](auto collective) -> LogicalResult {
            bool compiled = compiledReductions;
            if (failed(checkGrid(collective.getGridAttr())) ||
                failed(verifyCollectiveTypes(op, /*reducing=*/true, compiled)))
              return failure();
            return verifyReduction(
                op, collective.getReduction(),
                getElementTypeOrSelf(collective.getResult().getType()),
                gpuCollectives, compiled);
          })
      .Case<shard::AllGatherOp, shard::AllToAllOp>(
          [&](auto collective) -> LogicalResult {
            if (failed(checkGrid(collective.getGridAttr())))
              return failure();
            return verifyCollectiveTypes(op, /*reducing=*/false);
          })
      .Case<shard::BroadcastOp>(
          [&](shard::BroadcastOp broadcast) -> LogicalResult {
            if (failed(checkGrid(broadcast.getGridAttr())))
              return failure();
            if (!broadcast.getRootDynamic().empty())
              return op->emitError("'shard.broadcast' needs a static root; the "
                                   "root must be known when compiling");
            return verifyCollectiveTypes(op, /*reducing=*/false);
          })
      .Default([&](Operation *other) {
        return other->emitError("shard op '")
               << other->getName()
               << "' is not supported; Kiln lowers static shard.grid and "
               << kSupportedCollectives
               << " (ops that need the rank at run time, point-to-point and "
                  "rooted gathers/scatters/reduces are not supported)";
      });
}

ReductionKind mlir::kiln::convertReduction(shard::ReductionKind kind) {
  switch (kind) {
  case shard::ReductionKind::Sum:
    return ReductionKind::Sum;
  case shard::ReductionKind::Product:
    return ReductionKind::Prod;
  case shard::ReductionKind::Min:
    return ReductionKind::Min;
  case shard::ReductionKind::Max:
    return ReductionKind::Max;
  case shard::ReductionKind::Average:
    return ReductionKind::Avg;
  case shard::ReductionKind::BitwiseAnd:
    return ReductionKind::And;
  case shard::ReductionKind::BitwiseOr:
    return ReductionKind::Or;
  case shard::ReductionKind::BitwiseXor:
    return ReductionKind::Xor;
  default:
    llvm_unreachable("unsupported reduction passed verifySupportedShardOp");
  }
}
