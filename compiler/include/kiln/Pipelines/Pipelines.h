//===- Pipelines.h - Kiln compilation pipelines -----------------*- C++ -*-===//
//
// The phases of kiln-compile as pass pipelines, one place each, so that
// kiln-compile and kiln-opt run exactly the same recipe.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PIPELINES_PIPELINES_H_
#define KILN_PIPELINES_PIPELINES_H_

#include "mlir/Pass/PassManager.h"

namespace mlir::kiln {

// User program (linalg/tensor/arith/math/tosa) -> checked linalg/tensor
// program with static shapes.
struct InputPipelineOptions {
  // The module is also compiled for GPU targets (rocm, cuda), whose
  // collectives run on NCCL/RCCL: reject what those cannot run.
  bool gpuCollectives = false;
  // Compiled collectives are on: all_reduces and reduce_scatters that no
  // library runs (bitwise, i1, and 16-bit integers on NCCL/RCCL) are
  // accepted (they become kernels).
  bool compiledReductions = false;
  // The safetensors or .npz archive of the program's kiln.parameter
  // arguments ("" for none).
  std::string parametersFile;
  // The parameters are given when the module is loaded: they stay
  // arguments until host lowering makes them rodata that names them (the
  // archive, if any, is only checked against them).
  bool loadTimeParameters = false;
};

void buildKilnInputPipeline(OpPassManager &pm,
                            const InputPipelineOptions &options);
inline void buildKilnInputPipeline(OpPassManager &pm) {
  buildKilnInputPipeline(pm, InputPipelineOptions());
}

struct DispatchCreationOptions {
  // Every target of the compile has a fused attention kernel: attention
  // chains become one dispatch (kiln-form-dispatch-regions).
  bool fuseAttention = false;
  // Every target of the compile lowers kiln.window_collective: all_reduce,
  // all_gather and reduce_scatter of at most this many bytes per rank become
  // kernels over symmetric windows (kiln-compile-collectives; 0: none).
  int64_t collectiveKernelMaxBytes = 0;
  // All_reduce kernels over more than 2 ranks of at least this many bytes
  // per rank run two-shot (0: never).
  int64_t collectiveTwoShotMinBytes = 0;
  // Library collectives are NCCL/RCCL's: with collective kernels on, an
  // all_reduce of a type they lack (16-bit integers) becomes a kernel at any
  // size.
  bool gpuCollectiveLibraries = false;
  // Every target lowers kiln.window_collective and kernels are not turned
  // off: the reductions no library runs (bitwise, i1; 16-bit integers with
  // gpuCollectiveLibraries) become kernels at any size, even with
  // collectiveKernelMaxBytes 0.
  bool collectiveKernelsForLibraryGaps = false;
};

// Linalg program -> host functions of kiln.dispatch over kiln.executable
// kernels.
void buildKilnDispatchCreationPipeline(OpPassManager &pm,
                                       const DispatchCreationOptions &options);
inline void buildKilnDispatchCreationPipeline(OpPassManager &pm) {
  buildKilnDispatchCreationPipeline(pm, DispatchCreationOptions());
}

// Host functions -> kiln.program command programs and kiln.rodata, ready for
// serialization (runs after codegen, which only reads the executables).
void buildKilnHostLoweringPipeline(OpPassManager &pm);

// Registers every Kiln pass and the pipelines above as
// kiln-input-pipeline, kiln-dispatch-creation-pipeline and
// kiln-host-lowering-pipeline.
void registerKilnPassesAndPipelines();

} // namespace mlir::kiln

#endif // KILN_PIPELINES_PIPELINES_H_
