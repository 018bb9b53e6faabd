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
  f.addPass(createSplitInputAccumulatorsPass());
  HostSelectStrategyPassOptions strategy;
  strategy.maxWorkgroups = options.maxWorkgroups;
  strategy.minWorkPerWorkgroup = options.minWorkPerWorkgroup;
  strategy.vectorWidth = options.vectorWidth;
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
  // Compiled collectives arrive on buffers (the target skips the tile,
  // bufferize and vectorize stages for them).
  pm.addPass(createHostLowerWindowCollectivesPass());
  pm.nest<func::FuncOp>().addPass(createHostMapForallToWorkgroupsPass());
}

// 4. Inside each workgroup: register tiles, vectorized where the vectorizer
//    can, lowered to 1-D vector loads, stores and FMAs. The rest stays
//    linalg for the scalar stage.
static void buildVectorizeStage(OpPassManager &pm,
                                const HostCodegenPipelineOptions &options) {
  if (options.vectorWidth <= 0)
    return;
  OpPassManager &f = pm.nest<func::FuncOp>();
  f.addPass(createHostVectorizePass());
  addCleanup(f);
  f.addPass(createHostLowerVectorsPass());
  addCleanup(f);
}

// 5. Loops over scalars. 16-bit floats compute in f32 with conversions
//    expanded to integer ops; f32 exp, log, tanh, erf, ... become inline
//    polynomial approximations (vectors stay vectors), f64 transcendental
//    functions libm calls.
static void buildScalarStage(OpPassManager &pm,
                             const HostCodegenPipelineOptions &) {
  OpPassManager &f = pm.nest<func::FuncOp>();
  f.addPass(createConvertLinalgToLoopsPass());
  f.addPass(memref::createFoldMemRefAliasOpsPass());
  f.addPass(math::createMathExtendToSupportedTypes());
  f.addPass(createHostLowerMathPass());
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"f16", "bf16"};
  emulate.targetTypeStr = "f32";
  f.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
  f.addPass(createHostExpandSmallFloatsPass());
  f.addPass(createDefineIntegerDivisionPass());
  addCleanup(f);
}

// 6. LLVM dialect: bindings are bare pointers (shapes are static), then the
//    host_abi.h entry point wraps each kernel.
static void buildLLVMStage(OpPassManager &pm,
                           const HostCodegenPipelineOptions &) {
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  // Reductions may reassociate: a tree of vector adds instead of a serial
  // chain (the scalar loops were serial; results differ by rounding only).
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.reassociateFPReductions = true;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
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
      {"vectorize", buildVectorizeStage},
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
