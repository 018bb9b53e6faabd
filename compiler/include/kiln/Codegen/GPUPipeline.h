//===- GPUPipeline.h - Shared GPU kernel codegen (ROCDL, NVVM) --*- C++ -*-===//
//
// One GPU pipeline for AMD (ROCDL) and NVIDIA (NVVM): from the tensor-form
// kernels of a kiln.executable to LLVM-dialect kernels ready for translation
// to LLVM IR and binary emission (compiler/lib/Target/ROCM, Target/CUDA).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_GPUPIPELINE_H_
#define KILN_CODEGEN_GPUPIPELINE_H_

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace mlir::kiln {

enum class GPUBackend { ROCDL, NVVM };

// What the pipeline needs to know about the chip it generates code for.
struct GPUCodegenOptions {
  GPUBackend backend = GPUBackend::ROCDL;
  // "gfx942", "gfx1100", "sm_90", ...
  std::string chip;
  // Threads per wave/warp: 64 on CDNA (gfx9), 32 on RDNA (gfx10+) and NVIDIA.
  unsigned subgroupSize = 64;
  unsigned maxWorkgroupSize = 1024;
  // Shared memory one workgroup may use in all, and the part a kernel may
  // declare statically (NVIDIA: 48 KiB; above it, buffers move to dynamic
  // shared memory that the driver opts into at load time).
  unsigned maxSharedMemoryBytes = 65536;
  unsigned maxStaticSharedMemoryBytes = 65536;
  // One SM / CU: its 32-bit registers (all threads together), the threads
  // resident at most and its shared memory (LDS); row kernels budget
  // occupancy with them (kiln-gpu-lower-rows).
  unsigned processorRegisters = 65536;
  unsigned processorThreads = 2048;
  unsigned processorSharedMemoryBytes = 65536;
  // Rows held between the ops of a row kernel in shared memory: "auto"
  // (when it lets more workgroups share a processor), "always" (tests),
  // "never".
  std::string stageRows = "auto";
  // MFMA/WMMA strategies for f16/bf16 contractions on AMD chips.
  bool matrixCores = true;
  // NVIDIA: mma.sync fragments by the layout table (the AMD data path).
  bool layoutFragments = false;
};

// Input: a builtin.module holding func.func kernels on static-shape tensors
// (clones of one kiln.executable's kernels). Output: the same module holding
// one llvm.func per kernel, annotated as a ROCDL or NVVM kernel, whose
// arguments are one pointer per binding (kernel args, then kernel results)
// and which carries the attributes
//   kiln.workgroup_count = array<i64: x, y, z>
//   kiln.workgroup_size = array<i64: x, y, z>
//   kiln.shared_memory_bytes = <i64>
// ready for mlir::translateModuleToLLVMIR.
void buildGPUCodegenPipeline(OpPassManager &pm,
                             const GPUCodegenOptions &options);

// The options for `chip` ("gfx942", "gfx1100", "sm_90", ...): subgroup size
// from the architecture (64 on gfx9 CDNA, 32 on gfx10+ RDNA and NVIDIA) and
// the shared memory a workgroup can use without opting in to more.
GPUCodegenOptions getGPUCodegenOptionsForChip(GPUBackend backend,
                                              llvm::StringRef chip);

// Whether the recipe has a fused attention kernel for the chip (the
// "attention" strategy: NVIDIA sm_80 and later, mma.sync), so that dispatch
// creation may put an attention chain into one kernel.
bool hasFusedAttentionKernel(GPUBackend backend, llvm::StringRef chip);

// One named step of the GPU recipe (the IR between stages is what
// --dump-intermediates shows); buildGPUCodegenPipeline runs them all.
struct GPUCodegenStage {
  llvm::StringLiteral name;
  void (*build)(OpPassManager &pm, const GPUCodegenOptions &options);
};
llvm::ArrayRef<GPUCodegenStage> getGPUCodegenStages();

// Dialects and external interface models the GPU pipeline relies on.
void registerGPUCodegenDialects(DialectRegistry &registry);

} // namespace mlir::kiln

#endif // KILN_CODEGEN_GPUPIPELINE_H_
