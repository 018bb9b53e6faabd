//===- HostPipeline.cpp - The host (x86-64) kernel codegen recipe ---------===//
//
// The whole recipe, top to bottom. Stages are named so that the host target
// can dump the IR between them (--dump-intermediates).
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::kiln {

static void addCleanup(OpPassManager &funcPm) {
  funcPm.addPass(createCanonicalizerPass());
  funcPm.addPass(createCSEPass());
}

// 1. Choose the workgroup split, then tile the result op into an scf.forall
//    over workgroups and fuse its producers (still on tensors).
static void buildTileStage(OpPassManager &pm,
                           const HostCodegenPipelineOptions &options) {
  OpPassManager &f = pm.nest<func::FuncOp>();
  HostSelectStrategyPassOptions strategy;
  strategy.maxWorkgroups = options.maxWorkgroups;
  strategy.minWorkPerWorkgroup = options.minWorkPerWorkgroup;
  f.addPass(createHostSelectStrategyPass(strategy));
  f.addPass(createHostTileAndDistributePass());
  addCleanup(f);
}

// 2. The signature becomes the bindings; results are computed in place in
//    their bindings, temporaries are tile-local stack buffers.
static void buildBufferizeStage(OpPassManager &pm,
                                const HostCodegenPipelineOptions &) {
  pm.nest<func::FuncOp>().addPass(createHostConvertToBindingsPass());
  pm.addPass(createHostBufferizePass());
  addCleanup(pm.nest<func::FuncOp>());
}

// 3. Each workgroup runs one iteration of the forall.
static void buildDistributeStage(OpPassManager &pm,
                                 const HostCodegenPipelineOptions &) {
  pm.nest<func::FuncOp>().addPass(createHostMapForallToWorkgroupsPass());
}

// 4. Loops over scalars. 16-bit floats compute in f32 with conversions
//    expanded to integer ops; math ops become arithmetic or libm calls.
static void buildScalarStage(OpPassManager &pm,
                             const HostCodegenPipelineOptions &) {
  OpPassManager &f = pm.nest<func::FuncOp>();
  f.addPass(createConvertLinalgToLoopsPass());
  f.addPass(memref::createFoldMemRefAliasOpsPass());
  f.addPass(math::createMathExtendToSupportedTypes());
  f.addPass(math::createMathExpandOpsPass());
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"f16", "bf16"};
  emulate.targetTypeStr = "f32";
  f.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
  f.addPass(createHostExpandSmallFloatsPass());
  addCleanup(f);
}

// 5. LLVM dialect: bindings are bare pointers (shapes are static), then the
//    host_abi.h entry point wraps each kernel.
static void buildLLVMStage(OpPassManager &pm,
                           const HostCodegenPipelineOptions &) {
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  // Intrinsics first: math-to-libm rejects ops it has no function for
  // (e.g. copysign from ceil's expansion); what LLVM has no intrinsic for
  // (erf, ...) then becomes a libm call.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  ConvertFuncToLLVMPassOptions funcToLLVM;
  funcToLLVM.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcToLLVM));
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createHostAddABIWrapperPass());
  pm.addPass(createCanonicalizerPass());
}

ArrayRef<HostCodegenStage> getHostCodegenStages() {
  static const HostCodegenStage stages[] = {
      {"tile", buildTileStage},
      {"bufferize", buildBufferizeStage},
      {"distribute", buildDistributeStage},
      {"scalar", buildScalarStage},
      {"llvm", buildLLVMStage},
  };
  return stages;
}

void buildHostCodegenPipeline(OpPassManager &pm,
                              const HostCodegenPipelineOptions &options) {
  for (const HostCodegenStage &stage : getHostCodegenStages())
    stage.build(pm, options);
}

} // namespace mlir::kiln
