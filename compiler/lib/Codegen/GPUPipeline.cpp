//===- GPUPipeline.cpp - The GPU (ROCDL, NVVM) kernel codegen recipe ------===//
//
// The whole recipe, top to bottom, shared by the rocm and cuda targets; only
// the last conversion differs. Stages are named for --dump-intermediates.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/GPUPipeline.h"
#include "kiln/Codegen/Passes.h"

#include "CodegenUtils.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Affine/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::kiln {

GPUCodegenOptions getGPUCodegenOptionsForChip(GPUBackend backend,
                                              llvm::StringRef chip) {
  GPUCodegenOptions options;
  options.backend = backend;
  options.chip = chip.str();
  if (backend == GPUBackend::NVVM) {
    options.subgroupSize = 32;
    // Statically allocated shared memory is limited to 48 KiB per block;
    // with the opt-in, a block may use up to the chip's limit (CUDA
    // programming guide, compute capabilities table).
    options.maxStaticSharedMemoryBytes = 48 * 1024;
    // Per SM: 64K registers on all of these; shared memory 1 KiB above a
    // block's limit (the driver reserves it per block).
    unsigned sm = getNvidiaSmVersion(chip).value_or(0);
    options.processorRegisters = 65536;
    options.processorThreads = 2048;
    if (sm == 80 || sm == 87) {
      options.maxSharedMemoryBytes = 163 * 1024;
    } else if (sm == 90 || sm == 100) {
      options.maxSharedMemoryBytes = 227 * 1024;
    } else if (sm > 80) {
      options.maxSharedMemoryBytes = 99 * 1024;
      options.processorThreads = 1536;
    } else if (sm == 75) {
      options.maxSharedMemoryBytes = 64 * 1024;
      options.processorThreads = 1024;
    } else {
      options.maxSharedMemoryBytes = 48 * 1024;
    }
    options.processorSharedMemoryBytes = options.maxSharedMemoryBytes + 1024;
    return options;
  }
  // gfx9 (GCN/CDNA) runs wave64; gfx10 and later (RDNA) wave32. LDS is
  // declared statically up to its full size. Per CU: CDNA has 4 SIMDs of
  // 512 registers a lane (with the accumulation registers) and 8 waves
  // each; RDNA 2 SIMD32s of 1536 registers a lane and 16 waves each.
  bool cdna = chip.starts_with("gfx9");
  options.subgroupSize = cdna ? 64 : 32;
  options.maxSharedMemoryBytes = chip == "gfx950" ? 160 * 1024 : 64 * 1024;
  options.maxStaticSharedMemoryBytes = options.maxSharedMemoryBytes;
  options.processorSharedMemoryBytes = options.maxSharedMemoryBytes;
  options.processorRegisters = cdna ? 4 * 512 * 64 : 2 * 1536 * 32;
  options.processorThreads = cdna ? 4 * 8 * 64 : 2 * 16 * 32;
  return options;
}

bool hasFusedAttentionKernel(GPUBackend backend, llvm::StringRef chip) {
  return backend == GPUBackend::NVVM &&
         getNvidiaSmVersion(chip).value_or(0) >= 80;
}

static void addCleanup(OpPassManager &funcPm) {
  funcPm.addPass(createCanonicalizerPass());
  funcPm.addPass(createCSEPass());
}

// 1. Fuse elementwise chains, choose the strategy, tile the result op into
//    an scf.forall over workgroups and fuse its producers (on tensors).
static void buildTileStage(OpPassManager &pm,
                           const GPUCodegenOptions &options) {
  OpPassManager &f = pm.nest<func::FuncOp>();
  f.addPass(createSplitInputAccumulatorsPass());
  f.addPass(createGPUFuseElementwisePass());
  addCleanup(f);
  GPUSelectStrategyPassOptions strategy;
  strategy.subgroupSize = options.subgroupSize;
  strategy.maxWorkgroupSize = options.maxWorkgroupSize;
  strategy.chip = options.chip;
  strategy.matrixCores = options.matrixCores;
  strategy.layoutFragments = options.layoutFragments;
  strategy.maxSharedMemoryBytes = options.maxSharedMemoryBytes;
  f.addPass(createGPUSelectStrategyPass(strategy));
  f.addPass(createGPUTileToWorkgroupsPass());
  addCleanup(f);
}

// 2. The signature becomes the bindings; results are computed in place in
//    their bindings, temporaries are workgroup-shared buffers.
static void buildBufferizeStage(OpPassManager &pm,
                                const GPUCodegenOptions &) {
  pm.nest<func::FuncOp>().addPass(createHostConvertToBindingsPass());
  pm.addPass(createGPUBufferizePass());
  addCleanup(pm.nest<func::FuncOp>());
}

// 3. Every op of a workgroup is spread over its threads; foralls become
//    block and thread ids.
static void buildDistributeStage(OpPassManager &pm,
                                 const GPUCodegenOptions &options) {
  OpPassManager &f = pm.nest<func::FuncOp>();
  f.addPass(createGPULowerAttentionPass());
  f.addPass(createGPULowerContractionPass());
  GPULowerRowsPassOptions rows;
  rows.stageRows = options.stageRows;
  rows.processorRegisters = options.processorRegisters;
  rows.processorThreads = options.processorThreads;
  rows.processorSharedMemoryBytes = options.processorSharedMemoryBytes;
  rows.maxSharedMemoryBytes = options.maxSharedMemoryBytes;
  f.addPass(createGPULowerRowsPass(rows));
  f.addPass(createGPULowerWorkgroupReductionsPass());
  f.addPass(createGPUDistributeToThreadsPass());
  f.addPass(createGPUVectorizePass());
  f.addPass(createGPUMapToIdsPass());
  addCleanup(f);
}

// 4. Scalar loops per thread. 16-bit floats compute in f32; math functions
//    become arithmetic or instructions; subgroup reductions become lane
//    exchanges.
static void buildScalarStage(OpPassManager &pm,
                             const GPUCodegenOptions &options) {
  OpPassManager &f = pm.nest<func::FuncOp>();
  f.addPass(createConvertLinalgToLoopsPass());
  f.addPass(memref::createFoldMemRefAliasOpsPass());
  f.addPass(math::createMathExtendToSupportedTypes());
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"f16", "bf16"};
  emulate.targetTypeStr = "f32";
  f.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
  GPULowerMathPassOptions math;
  math.backend = options.backend == GPUBackend::ROCDL ? "rocdl" : "nvvm";
  f.addPass(createGPULowerMathPass(math));
  // Cross-lane reductions of the workgroup reductions.
  GPULowerSubgroupReducePassOptions subgroupReduce;
  subgroupReduce.backend = math.backend;
  subgroupReduce.chip = options.chip;
  subgroupReduce.subgroupSize = options.subgroupSize;
  f.addPass(createGPULowerSubgroupReducePass(subgroupReduce));
  // ROCm links ocml for f64 transcendentals; Kiln's PTX has no libdevice.
  if (options.backend == GPUBackend::NVVM)
    f.addPass(createGPUExpandF64MathPass());
  // bf16 conversions as integer ops (neither backend needs a libcall then);
  // ceildiv/floordiv as plain arithmetic.
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  f.addPass(arith::createArithExpandOpsPass(expand));
  // Division by zero gives the same results as on the host.
  f.addPass(createDefineIntegerDivisionPass());
  addCleanup(f);
  f.addPass(createGPUAlignVectorAccessesPass());
}

// 5. gpu.func kernels lowered by upstream ROCDL / NVVM conversions with
//    bare-pointer bindings, then hoisted into a plain LLVM module.
static void buildLLVMStage(OpPassManager &pm,
                           const GPUCodegenOptions &options) {
  GPUWrapKernelsPassOptions wrap;
  wrap.maxSharedMemoryBytes = options.maxSharedMemoryBytes;
  wrap.maxStaticSharedMemoryBytes = options.maxStaticSharedMemoryBytes;
  pm.addPass(createGPUWrapKernelsPass(wrap));
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  OpPassManager &g = pm.nest<gpu::GPUModuleOp>();
  if (options.backend == GPUBackend::ROCDL) {
    ConvertGpuOpsToROCDLOpsOptions rocdl;
    rocdl.chipset = options.chip;
    rocdl.indexBitwidth = 64;
    rocdl.useBarePtrCallConv = true;
    g.addPass(createConvertGpuOpsToROCDLOps(rocdl));
  } else {
    // nvgpu ops (ldmatrix of the contraction recipe) first: the gpu
    // conversion leaves them unconverted without an error.
    g.addPass(createConvertNVGPUToNVVMPass());
    ConvertGpuOpsToNVVMOpsOptions nvvm;
    nvvm.indexBitwidth = 64;
    nvvm.useBarePtrCallConv = true;
    g.addPass(createConvertGpuOpsToNVVMOps(nvvm));
    // NVVM ops without an LLVM intrinsic (wgmma.mma_async) become inline
    // PTX.
    g.addPass(createConvertNVVMToLLVMPass());
  }
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createGPUUnwrapKernelsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

ArrayRef<GPUCodegenStage> getGPUCodegenStages() {
  static const GPUCodegenStage stages[] = {
      {"tile", buildTileStage},
      {"bufferize", buildBufferizeStage},
      {"distribute", buildDistributeStage},
      {"scalar", buildScalarStage},
      {"llvm", buildLLVMStage},
  };
  return stages;
}

void buildGPUCodegenPipeline(OpPassManager &pm,
                             const GPUCodegenOptions &options) {
  for (const GPUCodegenStage &stage : getGPUCodegenStages())
    stage.build(pm, options);
}

void registerGPUCodegenDialects(DialectRegistry &registry) {
  registerHostCodegenDialects(registry);
  // Shared-memory temporaries of partial tiles are sized from bounds on
  // affine.min / arith ops.
  affine::registerValueBoundsOpInterfaceExternalModels(registry);
  arith::registerValueBoundsOpInterfaceExternalModels(registry);
  memref::registerValueBoundsOpInterfaceExternalModels(registry);
  scf::registerValueBoundsOpInterfaceExternalModels(registry);
  tensor::registerValueBoundsOpInterfaceExternalModels(registry);
  registry.insert<amdgpu::AMDGPUDialect, NVVM::NVVMDialect,
                  nvgpu::NVGPUDialect,
                  ROCDL::ROCDLDialect, vector::VectorDialect>();
}

} // namespace mlir::kiln
