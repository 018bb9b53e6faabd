//===- Pipelines.cpp - Kiln compilation pipelines -------------------------===//
#include "kiln/Pipelines/Pipelines.h"

#include "kiln/DispatchCreation/Passes.h"
#include "kiln/HostLowering/Passes.h"
#include "kiln/InputConversion/Passes.h"
#include "mlir/Conversion/TosaToArith/TosaToArith.h"
#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Conversion/TosaToTensor/TosaToTensor.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::kiln::buildKilnInputPipeline(OpPassManager &pm,
                                        const InputPipelineOptions &options) {
  // Parameters from the archive first: the program is then whole.
  BindParametersPassOptions parameters;
  parameters.parametersFile = options.parametersFile;
  parameters.loadTime = options.loadTimeParameters;
  pm.addPass(createBindParametersPass(parameters));
  // Sharding annotations (if any) become per-rank functions with explicit
  // collectives; everything else is then checked first, so that errors point
  // at what the user wrote.
  pm.addPass(createPartitionShardsPass());
  VerifyInputLegalityPassOptions legality;
  legality.gpuCollectives = options.gpuCollectives;
  legality.compiledReductions = options.compiledReductions;
  pm.addPass(createVerifyInputLegalityPass(legality));
  // Collectives on rank-major layouts, with linalg transposes around them.
  pm.addPass(createLowerCollectivesPass());
  // tosa -> linalg (named and generic), then what tosa leaves to tensor and
  // arith. Validation is off: legality above is Kiln's own contract.
  tosa::addTosaToLinalgPasses(pm, TosaToLinalgOptions(),
                              TosaToLinalgNamedOptions(),
                              /*validationOptions=*/std::nullopt);
  pm.addNestedPass<func::FuncOp>(createTosaToTensorPass());
  pm.addNestedPass<func::FuncOp>(createTosaToArithPass());
  // arith/math on whole tensors become linalg.generic; aggregates such as
  // linalg.softmax become the loop nests they stand for.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  pm.addNestedPass<func::FuncOp>(createDecomposeAggregatedOpsPass());
  // f16/bf16 sums accumulate in f32 and round once.
  pm.addNestedPass<func::FuncOp>(createWidenReductionAccumulatorsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Without func.call, private functions are unreachable.
  pm.addPass(createSymbolDCEPass());
}

void mlir::kiln::buildKilnDispatchCreationPipeline(
    OpPassManager &pm, const DispatchCreationOptions &options) {
  // f16/bf16 convolutions as im2col + matmul (f32 accumulation; the
  // contraction recipe on GPUs).
  pm.addNestedPass<func::FuncOp>(createConvolutionsToMatmulsPass());
  pm.addNestedPass<func::FuncOp>(createFuseElementwiseOpsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createSplitReductionsPass());
  FormDispatchRegionsPassOptions regions;
  regions.fuseAttention = options.fuseAttention;
  pm.addNestedPass<func::FuncOp>(createFormDispatchRegionsPass(regions));
  pm.addPass(createOutlineDispatchRegionsPass());
  // Small collectives as kernels over symmetric windows.
  CompileCollectivesPassOptions collectives;
  collectives.maxBytes = options.collectiveKernelMaxBytes;
  collectives.twoShotMinBytes = options.collectiveTwoShotMinBytes;
  collectives.gpuLibraries = options.gpuCollectiveLibraries;
  collectives.libraryGaps = options.collectiveKernelsForLibraryGaps;
  pm.addPass(createCompileCollectivesPass(collectives));
  // Host-side producers cloned into kernels are now dead.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::kiln::buildKilnHostLoweringPipeline(OpPassManager &pm) {
  pm.addPass(createMoveConstantsToRodataPass());
  pm.addPass(createBuildCommandProgramsPass());
}

void mlir::kiln::registerKilnPassesAndPipelines() {
  registerKilnInputConversionPasses();
  registerKilnDispatchCreationPasses();
  registerKilnHostLoweringPasses();
  PassPipelineRegistration<>(
      "kiln-input-pipeline",
      "Checks and converts a user program to static-shape linalg/tensor",
      [](OpPassManager &pm) { buildKilnInputPipeline(pm); });
  PassPipelineRegistration<>(
      "kiln-dispatch-creation-pipeline",
      "Fuses and outlines a linalg program into executables and dispatches",
      [](OpPassManager &pm) { buildKilnDispatchCreationPipeline(pm); });
  PassPipelineRegistration<>(
      "kiln-host-lowering-pipeline",
      "Plans memory and lowers host functions to command programs",
      buildKilnHostLoweringPipeline);
}
