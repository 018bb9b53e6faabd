//===- TileAndDistributePass.cpp - Workgroup tiling with fusion -----------===//
//
// Tiles the op producing the kernel result into an scf.forall over
// workgroups, as chosen by kiln-host-select-strategy, and fuses producers.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

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
    auto strategy = func->getAttrOfType<DictionaryAttr>(kHostStrategyAttrName);
    if (!strategy) {
      func.emitError() << "kernel '" << func.getSymName()
                       << "' has no " << kHostStrategyAttrName
                       << " attribute; run kiln-host-select-strategy first";
      return signalPassFailure();
    }
    auto tileSizesAttr = strategy.getAs<DenseI64ArrayAttr>("tile_sizes");
    if (!tileSizesAttr) {
      func.emitError() << kHostStrategyAttrName
                       << " is missing 'tile_sizes'";
      return signalPassFailure();
    }
    ArrayRef<int64_t> tileSizes = tileSizesAttr.asArrayRef();
    if (llvm::all_of(tileSizes, [](int64_t t) { return t == 0; }))
      return; // One workgroup computes everything.

    MLIRContext *ctx = &getContext();
    unsigned numTiled = llvm::count_if(tileSizes, [](int64_t t) { return t; });
    if (numTiled > 3) {
      func.emitError() << "a host strategy tiles at most three loops";
      return signalPassFailure();
    }
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
