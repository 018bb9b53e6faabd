//===- GPUPipeline.h - Shared GPU kernel codegen (ROCDL, NVVM) --*- C++ -*-===//
//
// One GPU pipeline for AMD (ROCDL) and NVIDIA (NVVM): from the tensor-form
// kernels of a kiln.executable to LLVM-dialect kernels ready for translation
// to LLVM IR and binary emission (compiler/lib/Target/ROCM, Target/CUDA).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_GPUPIPELINE_H_
#define KILN_CODEGEN_GPUPIPELINE_H_

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
  unsigned maxSharedMemoryBytes = 65536;
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

} // namespace mlir::kiln

#endif // KILN_CODEGEN_GPUPIPELINE_H_
