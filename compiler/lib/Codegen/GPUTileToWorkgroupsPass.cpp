//===- GPUTileToWorkgroupsPass.cpp - Workgroup tiling for GPUs ------------===//
//
// Tiles the op producing the kernel result into an scf.forall over
// workgroups, as chosen by kiln-gpu-select-strategy, and fuses producers.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "CodegenUtils.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_GPUTILETOWORKGROUPSPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

// Linear mapping ids go up to linear_dim_9.
constexpr unsigned kMaxLinearDims = 10;

struct GPUTileToWorkgroupsPass
    : public kiln::impl::GPUTileToWorkgroupsPassBase<GPUTileToWorkgroupsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    FailureOr<GPUStrategyAttr> strategy = readGPUStrategy(func);
    if (failed(strategy))
      return signalPassFailure();
    ArrayRef<int64_t> tileSizes = strategy->getWorkgroupTile();
    unsigned numTiled = llvm::count_if(tileSizes, [](int64_t t) { return t; });
    if (numTiled == 0)
      return; // One workgroup computes everything.
    if (numTiled > kMaxLinearDims) {
      func.emitError() << "cannot distribute " << numTiled
                       << " loops over workgroups (at most "
                       << kMaxLinearDims << ")";
      return signalPassFailure();
    }
    // Tiles are linearized onto the grid's x dimension; linear_dim_0 is the
    // innermost tiled loop so that neighbouring workgroups touch
    // neighbouring memory.
    SmallVector<Attribute> mapping;
    for (unsigned i = 0; i < numTiled; ++i)
      mapping.push_back(gpu::GPUBlockMappingAttr::get(
          &getContext(),
          static_cast<gpu::MappingId>(
              static_cast<unsigned>(gpu::MappingId::LinearDim0) + numTiled -
              1 - i)));
    if (failed(tileResultIntoForall(func, tileSizes, mapping)))
      return signalPassFailure();
  }
};

} // namespace
