//===- TileAndDistributePass.cpp - Workgroup tiling with fusion -----------===//
//
// Tiles the op producing the kernel result into an scf.forall over
// workgroups, as chosen by kiln-host-select-strategy, and fuses producers.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"

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

    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    auto consumer = dyn_cast_or_null<TilingInterface>(
        ret.getNumOperands() == 1 ? ret.getOperand(0).getDefiningOp()
                                  : nullptr);
    if (!consumer ||
        consumer.getLoopIteratorTypes().size() != tileSizes.size()) {
      func.emitError() << "the strategy's tile sizes do not match the op "
                          "producing the kernel result";
      return signalPassFailure();
    }

    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    SmallVector<OpFoldResult> sizes;
    unsigned numTiled = 0;
    for (int64_t t : tileSizes) {
      sizes.push_back(b.getIndexAttr(t));
      numTiled += t != 0;
    }
    // The innermost tiled loop is mapped to x, the next to y, then z.
    static const gpu::MappingId kIds[] = {gpu::MappingId::DimZ,
                                          gpu::MappingId::DimY,
                                          gpu::MappingId::DimX};
    SmallVector<Attribute> mapping;
    for (unsigned i = 0; i < numTiled; ++i)
      mapping.push_back(
          gpu::GPUBlockMappingAttr::get(ctx, kIds[3 - numTiled + i]));

    scf::SCFTilingOptions tilingOptions;
    tilingOptions.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp)
        .setTileSizes(sizes)
        .setMapping(mapping);
    scf::SCFTileAndFuseOptions options;
    options.setTilingOptions(tilingOptions);

    IRRewriter rewriter(ctx);
    rewriter.setInsertionPoint(consumer);
    FailureOr<scf::SCFTileAndFuseResult> result =
        scf::tileConsumerAndFuseProducersUsingSCF(rewriter, consumer, options);
    if (failed(result)) {
      consumer->emitError() << "failed to tile '" << consumer->getName()
                            << "' into workgroups";
      return signalPassFailure();
    }
    for (OpResult res : consumer->getResults()) {
      auto it = result->replacements.find(res);
      if (it != result->replacements.end())
        rewriter.replaceAllUsesWith(res, it->second);
    }
    if (consumer->use_empty())
      rewriter.eraseOp(consumer);
  }
};

} // namespace
