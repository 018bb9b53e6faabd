//===- GPULowerSubgroupReducePass.cpp - subgroup_reduce to lane exchanges -===//
//
// Applies upstream's gpu.subgroup_reduce lowerings, which the GPU-to-NVVM and
// GPU-to-ROCDL conversions leave out: shuffles on NVIDIA, DPP on AMD.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/AMDGPU/Utils/Chipset.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_GPULOWERSUBGROUPREDUCEPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

struct GPULowerSubgroupReducePass
    : public kiln::impl::GPULowerSubgroupReducePassBase<
          GPULowerSubgroupReducePass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    bool any = false;
    func.walk([&](gpu::SubgroupReduceOp) { any = true; });
    if (!any)
      return;
    if (subgroupSize <= 0 || (subgroupSize & (subgroupSize - 1)) != 0) {
      func.emitError() << "kiln-gpu-lower-subgroup-reduce: subgroup size "
                       << static_cast<int64_t>(subgroupSize)
                       << " is not a power of two";
      return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    // Values wider than 32 bits are split into 32-bit pieces first.
    populateGpuBreakDownSubgroupReducePatterns(patterns,
                                               /*maxShuffleBitwidth=*/32,
                                               /*benefit=*/3);
    if (backend == "rocdl") {
      FailureOr<amdgpu::Chipset> chipset = amdgpu::Chipset::parse(chip);
      if (failed(chipset)) {
        func.emitError() << "kiln-gpu-lower-subgroup-reduce: unknown AMD chip '"
                         << chip << "'";
        return signalPassFailure();
      }
      populateGpuLowerSubgroupReduceToDPPPatterns(patterns, subgroupSize,
                                                  *chipset, /*benefit=*/2);
    } else if (backend != "nvvm") {
      func.emitError() << "kiln-gpu-lower-subgroup-reduce: unknown backend '"
                       << backend << "' (expected rocdl or nvvm)";
      return signalPassFailure();
    }
    populateGpuLowerSubgroupReduceToShufflePatterns(
        patterns, subgroupSize, /*shuffleBitwidth=*/32, /*benefit=*/1);
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      return signalPassFailure();
    WalkResult left = func.walk([&](gpu::SubgroupReduceOp op) {
      op.emitError() << "kiln-gpu-lower-subgroup-reduce: cannot lower this "
                        "gpu.subgroup_reduce for "
                     << backend;
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
