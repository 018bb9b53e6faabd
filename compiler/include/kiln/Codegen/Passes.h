//===- Passes.h - Kiln kernel codegen passes --------------------*- C++ -*-===//
//
// Passes and pipelines that lower the tensor-form kernels of a
// kiln.executable to the LLVM dialect for the host (x86-64) target and, see
// GPUPipeline.h, for GPUs (ROCDL, NVVM).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_PASSES_H_
#define KILN_CODEGEN_PASSES_H_

#include "kiln/Dialect/Kiln/KilnDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir {
namespace kiln {

#define GEN_PASS_DECL
#include "kiln/Codegen/Passes.h.inc"

// Attribute names shared by the codegen passes and the host target.
inline constexpr llvm::StringLiteral kHostStrategyAttrName =
    "kiln.host_strategy";
inline constexpr llvm::StringLiteral kWorkgroupCountAttrName =
    "kiln.workgroup_count";
// GPU: the strategy chosen by kiln-gpu-select-strategy, and what a lowered
// kernel records for the runtime next to kiln.workgroup_count.
inline constexpr llvm::StringLiteral kGPUStrategyAttrName =
    "kiln.gpu_strategy";
inline constexpr llvm::StringLiteral kWorkgroupSizeAttrName =
    "kiln.workgroup_size";
inline constexpr llvm::StringLiteral kSharedMemoryBytesAttrName =
    "kiln.shared_memory_bytes";
// Optional: the workgroups of a kernel that should be resident on one SM /
// CU at once (the backends budget registers for them).
inline constexpr llvm::StringLiteral kMinWorkgroupsPerProcessorAttrName =
    "kiln.min_workgroups_per_processor";

// Upper bound on the 32-bit registers a thread of a row-fused GPU kernel
// spends on the row values it holds from one op to a later one
// (kiln-gpu-lower-rows; one buffer of f32 rows of 4096 over 128 threads takes
// 32), so that enough threads stay in flight to hide memory latency.
// kiln-gpu-select-strategy widens workgroups over long rows to fit it.
inline constexpr int64_t kGPURowRegisterBudget = 64;

struct HostCodegenPipelineOptions {
  int64_t maxWorkgroups = 256;
  int64_t minWorkPerWorkgroup = 4096;
  // SIMD register bits of the target CPU (128: SSE2, 256: AVX2, 512:
  // AVX-512); 0 turns vectorization off (scalar loops only).
  int64_t vectorWidth = 128;
};

// One named step of the host codegen recipe (the IR between stages is what
// --dump-intermediates shows).
struct HostCodegenStage {
  llvm::StringLiteral name;
  void (*build)(OpPassManager &pm, const HostCodegenPipelineOptions &options);
};
ArrayRef<HostCodegenStage> getHostCodegenStages();

// The host codegen recipe (all stages in order): tensor kernels in a
// builtin.module -> LLVM dialect with host_abi.h entry points, each carrying
// `kiln.workgroup_count`.
void buildHostCodegenPipeline(OpPassManager &pm,
                              const HostCodegenPipelineOptions &options);

// Dialects and external interface models (tiling, bufferization) that the
// host codegen passes rely on.
void registerHostCodegenDialects(DialectRegistry &registry);

// Registers every codegen pass and the `kiln-host-codegen` and
// `kiln-gpu-codegen` pipelines.
void registerKilnCodegenPasses();

} // namespace kiln
} // namespace mlir

#endif // KILN_CODEGEN_PASSES_H_
