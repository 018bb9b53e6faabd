//===- LowerCollectives.cpp - shard collectives to kiln.collective --------===//
//
// A shard collective gathers, scatters, splits or concatenates along any
// tensor dimension; the runtime's collectives move contiguous per-rank
// chunks. This pass rewrites each shard collective into a kiln.collective on
// a rank-major layout (the rank dimension outermost) plus the reshapes and
// transposes that convert between the two. The transposes are ordinary
// linalg ops that dispatch creation turns into kernels; the reshapes are
// host aliases.
//
//===----------------------------------------------------------------------===//
#include "kiln/InputConversion/Passes.h"

#include "ShardSupport.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_LOWERCOLLECTIVESPASS
#include "kiln/InputConversion/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

// The channel of a collective over `gridAxes` of `gridName`; the grid is
// static (checked by verifySupportedShardOp).
static ChannelAttr getChannel(Operation *op, FlatSymbolRefAttr gridName,
                              ArrayRef<shard::GridAxis> gridAxes,
                              SymbolTableCollection &symbolTables) {
  shard::GridOp grid = shard::getGridOrNull(op, gridName, symbolTables);
  SmallVector<int64_t> axes(gridAxes.begin(), gridAxes.end());
  return ChannelAttr::get(op->getContext(), gridName, axes, grid.getShape());
}

static Value transpose(OpBuilder &builder, Location loc, Value value,
                       ArrayRef<int64_t> permutation) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape;
  for (int64_t dim : permutation)
    shape.push_back(type.getDimSize(dim));
  Value init =
      tensor::EmptyOp::create(builder, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(builder, loc, value, init, permutation)
      ->getResult(0);
}

// [N, d0, ..., dk] -> [d0, ..., N * d_axis, ..., dk]: the rank-major slices
// concatenated along `axis`.
static Value mergeRankDimInto(OpBuilder &builder, Location loc, Value value,
                              int64_t axis) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  if (axis != 0) {
    // Move the rank dimension right before dimension `axis`.
    SmallVector<int64_t> permutation;
    for (int64_t i = 1; i <= axis; ++i)
      permutation.push_back(i);
    permutation.push_back(0);
    for (int64_t i = axis + 1; i < rank; ++i)
      permutation.push_back(i);
    value = transpose(builder, loc, value, permutation);
  }
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i < rank; ++i) {
    if (i == axis + 1)
      continue;
    if (i == axis)
      groups.push_back({i, i + 1});
    else
      groups.push_back({i});
  }
  return tensor::CollapseShapeOp::create(builder, loc, value, groups);
}

// [d0, ..., d_axis, ..., dk] -> [N, d0, ..., d_axis / N, ..., dk]: chunk r
// along `axis` becomes the contiguous slice r. `axis` must divide by N.
static Value splitRankDimFrom(OpBuilder &builder, Location loc, Value value,
                              int64_t axis, int64_t n) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape;
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    int64_t next = shape.size();
    if (i == axis) {
      shape.append({n, type.getDimSize(i) / n});
      groups.push_back({next, next + 1});
    } else {
      shape.push_back(type.getDimSize(i));
      groups.push_back({next});
    }
  }
  value = tensor::ExpandShapeOp::create(
      builder, loc, RankedTensorType::get(shape, type.getElementType()), value,
      groups);
  if (axis == 0)
    return value;
  // Move the rank dimension (at `axis`) outermost.
  SmallVector<int64_t> permutation{axis};
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i)
    if (i != axis)
      permutation.push_back(i);
  return transpose(builder, loc, value, permutation);
}

static Value createCollective(OpBuilder &builder, Location loc,
                              CollectiveKind kind, ReductionKind reduction,
                              int64_t root, ChannelAttr channel, Value input,
                              Type resultType) {
  return CollectiveOp::create(builder, loc, resultType, kind, reduction, root,
                              channel, /*kernel=*/nullptr, input);
}

static RankedTensorType prependRankDim(RankedTensorType type, int64_t n) {
  SmallVector<int64_t> shape{n};
  llvm::append_range(shape, type.getShape());
  return RankedTensorType::get(shape, type.getElementType());
}

// Whether dimension `axis` of `value` splits evenly over `n` ranks; reports
// at `op` otherwise.
static LogicalResult checkDivisible(Operation *op, Value value, int64_t axis,
                                    int64_t n, StringRef what) {
  auto type = cast<RankedTensorType>(value.getType());
  if (axis < 0 || axis >= type.getRank())
    return op->emitError(what) << " " << axis << " is out of range for "
                               << type;
  if (type.getDimSize(axis) % n != 0)
    return op->emitError("dimension ")
           << axis << " of " << type << " (" << what
           << ") does not split evenly over " << n << " ranks";
  return success();
}

// Rewrites one supported shard collective; returns the value replacing its
// result, or failure after a diagnostic.
static FailureOr<Value> lowerCollective(Operation *op,
                                        SymbolTableCollection &symbolTables) {
  OpBuilder builder(op);
  Location loc = op->getLoc();
  Value input = op->getOperand(0);
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  auto channelOf = [&](auto collective) {
    return getChannel(op, collective.getGridAttr(), collective.getGridAxes(),
                      symbolTables);
  };
  FailureOr<Value> lowered =
      llvm::TypeSwitch<Operation *, FailureOr<Value>>(op)
          .Case<shard::AllReduceOp>([&](shard::AllReduceOp allReduce)
                                        -> FailureOr<Value> {
            return createCollective(
                builder, loc, CollectiveKind::AllReduce,
                convertReduction(allReduce.getReduction()), 0,
                channelOf(allReduce), input, resultType);
          })
          .Case<shard::AllGatherOp>([&](shard::AllGatherOp allGather)
                                        -> FailureOr<Value> {
            ChannelAttr channel = channelOf(allGather);
            int64_t n = channel.getGroupSize();
            int64_t axis = allGather.getGatherAxis().getSExtValue();
            auto inputType = cast<RankedTensorType>(input.getType());
            if (axis < 0 || axis >= inputType.getRank())
              return op->emitError("gather_axis ")
                     << axis << " is out of range for " << inputType;
            Value gathered = createCollective(
                builder, loc, CollectiveKind::AllGather, ReductionKind::None,
                0, channel, input, prependRankDim(inputType, n));
            return mergeRankDimInto(builder, loc, gathered, axis);
          })
          .Case<shard::ReduceScatterOp>([&](shard::ReduceScatterOp scatter)
                                            -> FailureOr<Value> {
            ChannelAttr channel = channelOf(scatter);
            int64_t n = channel.getGroupSize();
            int64_t axis = scatter.getScatterAxis().getSExtValue();
            if (failed(checkDivisible(op, input, axis, n, "scatter_axis")))
              return failure();
            Value chunks = splitRankDimFrom(builder, loc, input, axis, n);
            auto chunkType = cast<RankedTensorType>(chunks.getType());
            return createCollective(
                builder, loc, CollectiveKind::ReduceScatter,
                convertReduction(scatter.getReduction()), 0, channel, chunks,
                RankedTensorType::get(chunkType.getShape().drop_front(),
                                      chunkType.getElementType()));
          })
          .Case<shard::AllToAllOp>([&](shard::AllToAllOp allToAll)
                                       -> FailureOr<Value> {
            ChannelAttr channel = channelOf(allToAll);
            int64_t n = channel.getGroupSize();
            int64_t splitAxis = allToAll.getSplitAxis().getSExtValue();
            int64_t concatAxis = allToAll.getConcatAxis().getSExtValue();
            if (failed(checkDivisible(op, input, splitAxis, n, "split_axis")))
              return failure();
            auto inputType = cast<RankedTensorType>(input.getType());
            if (concatAxis < 0 || concatAxis >= inputType.getRank())
              return op->emitError("concat_axis ")
                     << concatAxis << " is out of range for " << inputType;
            Value chunks = splitRankDimFrom(builder, loc, input, splitAxis, n);
            Value exchanged = createCollective(
                builder, loc, CollectiveKind::AllToAll, ReductionKind::None, 0,
                channel, chunks, chunks.getType());
            return mergeRankDimInto(builder, loc, exchanged, concatAxis);
          })
          .Case<shard::BroadcastOp>([&](shard::BroadcastOp broadcast)
                                        -> FailureOr<Value> {
            ChannelAttr channel = channelOf(broadcast);
            ArrayRef<int64_t> root = broadcast.getRoot();
            ArrayRef<int64_t> axes = channel.getAxes();
            if (root.size() != axes.size())
              return op->emitError("root has ")
                     << root.size() << " indices for " << axes.size()
                     << " grid axes";
            // Row-major over the grid axes in their listed order, as the
            // channel orders its ranks.
            int64_t linear = 0;
            for (auto [index, axis] : llvm::zip(root, axes)) {
              int64_t size = channel.getShape()[axis];
              if (index < 0 || index >= size)
                return op->emitError("root index ")
                       << index << " is out of range for grid axis " << axis
                       << " of size " << size;
              linear = linear * size + index;
            }
            return createCollective(builder, loc, CollectiveKind::Broadcast,
                                    ReductionKind::None, linear, channel,
                                    input, resultType);
          });
  if (failed(lowered))
    return failure();
  if (lowered->getType() != resultType)
    return op->emitError("lowering produced ")
           << lowered->getType() << " instead of the result type "
           << resultType;
  return *lowered;
}

// Whether a collective over `channel` is the identity: a group of one rank
// gathers, scatters and reduces nothing.
static bool isSingleRank(Operation *op, SymbolTableCollection &symbolTables) {
  shard::GridOp grid = shard::getGridOrNull(
      op, op->getAttrOfType<FlatSymbolRefAttr>("grid"), symbolTables);
  auto axes = op->getAttrOfType<DenseI16ArrayAttr>("grid_axes");
  int64_t size = 1;
  if (axes)
    for (int16_t axis : axes.asArrayRef())
      size *= grid.getShape()[axis];
  return size == 1;
}

namespace {
struct LowerCollectivesPass
    : kiln::impl::LowerCollectivesPassBase<LowerCollectivesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbolTables;
    SmallVector<Operation *> collectives;
    bool failed = false;
    module.walk([&](Operation *op) {
      if (op->getDialect() == nullptr ||
          op->getDialect()->getNamespace() != "shard")
        return;
      // What the lowering can represent; which targets and libraries can
      // run it is kiln-verify-input-legality's to say.
      if (mlir::failed(verifySupportedShardOp(op, symbolTables,
                                              /*gpuCollectives=*/false,
                                              /*compiledReductions=*/true)))
        failed = true;
      else if (!isa<shard::GridOp>(op))
        collectives.push_back(op);
    });
    if (failed)
      return signalPassFailure();

    for (Operation *op : collectives) {
      Value replacement;
      if (isSingleRank(op, symbolTables) &&
          op->getOperand(0).getType() == op->getResult(0).getType()) {
        replacement = op->getOperand(0);
      } else {
        FailureOr<Value> lowered = lowerCollective(op, symbolTables);
        if (mlir::failed(lowered)) {
          failed = true;
          continue;
        }
        replacement = *lowered;
      }
      op->getResult(0).replaceAllUsesWith(replacement);
      op->erase();
    }
    if (failed)
      return signalPassFailure();
    // Channels carry the grid shapes; nothing refers to the grids anymore.
    for (auto grid : llvm::make_early_inc_range(module.getOps<shard::GridOp>()))
      grid.erase();
  }
};
} // namespace
