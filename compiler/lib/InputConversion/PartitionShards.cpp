//===- PartitionShards.cpp - Partition sharding-annotated functions -------===//
//
// Turns a global-view program annotated with shard.shard into the per-rank
// program with explicit collectives, using the upstream shard transforms.
//
//===----------------------------------------------------------------------===//
#include "kiln/InputConversion/Passes.h"

#include "ShardSupport.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_PARTITIONSHARDSPASS
#include "kiln/InputConversion/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
struct PartitionShardsPass
    : mlir::kiln::impl::PartitionShardsPassBase<PartitionShardsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool annotated = false;
    module.walk([&](Operation *op) {
      if (isa<shard::ShardOp, shard::ShardingOp>(op))
        annotated = true;
      return annotated ? WalkResult::interrupt() : WalkResult::advance();
    });
    if (!annotated)
      return;

    // Partitioning derives shard shapes from the grid sizes.
    bool dynamicGrid = false;
    for (auto grid : module.getOps<shard::GridOp>())
      dynamicGrid |= failed(kiln::verifyStaticGrid(grid));
    if (dynamicGrid)
      return signalPassFailure();

    OpPassManager pm(ModuleOp::getOperationName());
    OpPassManager &funcPm = pm.nest<func::FuncOp>();
    funcPm.addPass(shard::createShardingPropagation());
    funcPm.addPass(shard::createPartition());
    // Partitioning guards replicated accumulators with a select on the rank
    // (only rank 0 keeps the init value); when every rank's value is the
    // same, CSE makes both branches one value and canonicalization folds
    // the select away.
    pm.addPass(createCSEPass());
    pm.addPass(createCanonicalizerPass());
    if (failed(runPipeline(pm, module)))
      return signalPassFailure();
  }
};
} // namespace
