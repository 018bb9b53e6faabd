//===- Passes.cpp - Kiln codegen pass registration ------------------------===//

#include "kiln/Codegen/Passes.h"
#include "kiln/Codegen/GPUPipeline.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/SubsetInsertionOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/TilingInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/IR/TensorTilingInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/SubsetInsertionOpInterfaceImpl.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/PassRegistry.h"

namespace mlir::kiln {
namespace {
#define GEN_PASS_REGISTRATION
#include "kiln/Codegen/Passes.h.inc"
} // namespace

void registerHostCodegenDialects(DialectRegistry &registry) {
  registry.insert<affine::AffineDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, func::FuncDialect,
                  gpu::GPUDialect, linalg::LinalgDialect, LLVM::LLVMDialect,
                  math::MathDialect, memref::MemRefDialect, scf::SCFDialect,
                  tensor::TensorDialect, vector::VectorDialect>();
  // Tiling, fusion and bufferization see these ops through interfaces that
  // live outside the dialects.
  linalg::registerTilingInterfaceExternalModels(registry);
  tensor::registerTilingInterfaceExternalModels(registry);
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerSubsetOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerSubsetOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
}

namespace {
struct GPUCodegenPipelineOptions
    : public PassPipelineOptions<GPUCodegenPipelineOptions> {
  Option<std::string> backend{*this, "backend",
                              llvm::cl::desc("rocdl or nvvm"),
                              llvm::cl::init("rocdl")};
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("gfx942, gfx1100, sm_90, ..."),
                           llvm::cl::init("gfx942")};
  Option<unsigned> subgroupSize{
      *this, "subgroup-size",
      llvm::cl::desc("Override the chip's wave/warp size (0: from the chip)"),
      llvm::cl::init(0)};
  Option<bool> matrixCores{
      *this, "matrix-cores",
      llvm::cl::desc("MFMA/WMMA f16 and bf16 contractions on AMD chips"),
      llvm::cl::init(true)};
  Option<bool> layoutFragments{
      *this, "layout-fragments",
      llvm::cl::desc("NVIDIA: mma.sync fragments by the layout table"),
      llvm::cl::init(false)};
  Option<std::string> stageRows{
      *this, "stage-rows",
      llvm::cl::desc("Row kernels' held rows in shared memory: auto, "
                     "always, never"),
      llvm::cl::init("auto")};
};
} // namespace

void registerKilnCodegenPasses() {
  registerKilnCodegenGenPasses();
  PassPipelineRegistration<>(
      "kiln-host-codegen",
      "Lower tensor kernels to LLVM dialect host_abi.h entry points",
      [](OpPassManager &pm) {
        buildHostCodegenPipeline(pm, HostCodegenPipelineOptions());
      });
  PassPipelineRegistration<GPUCodegenPipelineOptions>(
      "kiln-gpu-codegen",
      "Lower tensor kernels to ROCDL or NVVM kernels in the LLVM dialect",
      [](OpPassManager &pm, const GPUCodegenPipelineOptions &opts) {
        GPUBackend backend = opts.backend == "nvvm" ? GPUBackend::NVVM
                                                    : GPUBackend::ROCDL;
        GPUCodegenOptions options =
            getGPUCodegenOptionsForChip(backend, opts.chip);
        if (opts.subgroupSize)
          options.subgroupSize = opts.subgroupSize;
        options.matrixCores = opts.matrixCores;
        options.layoutFragments = opts.layoutFragments;
        options.stageRows = opts.stageRows;
        buildGPUCodegenPipeline(pm, options);
      });
}

} // namespace mlir::kiln
