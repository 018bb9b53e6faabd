//===- TileAndDistributePass.cpp - Workgroup tiling with fusion -----------===//
//
// Tiles the op producing the kernel result into an scf.forall over
// workgroups, as chosen by kiln-host-select-strategy, and fuses producers.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"
#include "kiln/Dialect/Kiln/KilnOps.h"

#include "CodegenUtils.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_HOSTTILEANDDISTRIBUTEPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

struct HostTileAndDistributePass
    : public kiln::impl::HostTileAndDistributePassBase<
          HostTileAndDistributePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    auto strategy =
        func->getAttrOfType<HostStrategyAttr>(kHostStrategyAttrName);
    if (!strategy) {
      func.emitError() << "kernel '" << func.getSymName() << "' has no "
                       << kHostStrategyAttrName
                       << " (a #kiln.host_strategy); run "
                          "kiln-host-select-strategy first";
      return signalPassFailure();
    }
    ArrayRef<int64_t> tileSizes = strategy.getTileSizes();
    if (llvm::all_of(tileSizes, [](int64_t t) { return t == 0; }))
      return; // One workgroup computes everything.

    MLIRContext *ctx = &getContext();
    // At most three (the attribute's verifier saw to it).
    unsigned numTiled = llvm::count_if(tileSizes, [](int64_t t) { return t; });
    // The innermost tiled loop is mapped to x, the next to y, then z.
    static const gpu::MappingId kIds[] = {gpu::MappingId::DimZ,
                                          gpu::MappingId::DimY,
                                          gpu::MappingId::DimX};
    SmallVector<Attribute> mapping;
    for (unsigned i = 0; i < numTiled; ++i)
      mapping.push_back(
          gpu::GPUBlockMappingAttr::get(ctx, kIds[3 - numTiled + i]));
    if (failed(tileResultIntoForall(func, tileSizes, mapping)))
      return signalPassFailure();
  }
};

} // namespace
