//===- CUDATarget.h - NVIDIA GPU (PTX) executable compilation ---*- C++ -*-===//
//
// Compiles the kernels of a kiln.executable into PTX text, one per requested
// NVIDIA chip, through the shared GPU codegen pipeline (NVVM) and the NVPTX
// backend. The driver JIT-compiles the PTX when it loads the module.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TARGET_CUDA_CUDATARGET_H_
#define KILN_TARGET_CUDA_CUDATARGET_H_

#include "module_constants.h" // runtime/schemas: formats the runtime loads
#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/Target/TargetBackend.h"
#include "kiln/Target/TargetRegistry.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir::kiln {

// Binary format of CUDA variants in the module (ExecutableVariant.format).
// The binary is the PTX text followed by one NUL byte, so a driver can hand
// the bytes to cuModuleLoadData as they are.
inline constexpr llvm::StringLiteral kCUDABinaryFormat = KILN_CUDA_FORMAT;

// What the compiler knows about one NVIDIA chip.
struct CUDAChipInfo {
  llvm::StringLiteral name;      // LLVM processor name, e.g. "sm_90"
  unsigned ptxVersion;           // PTX ISA version emitted, e.g. 78 for 7.8
};

// The chips kiln-compile accepts, in a stable order.
ArrayRef<CUDAChipInfo> getKnownCUDAChips();
// Null when `chip` is not a known chip.
const CUDAChipInfo *lookupCUDAChip(StringRef chip);
// An error naming the first unknown chip and listing the known ones.
llvm::Error verifyCUDAChips(ArrayRef<std::string> chips);

struct CUDATargetOptions {
  // One PTX per chip, in this order.
  std::vector<std::string> chips = {"sm_90"};
  unsigned optLevel = 3;
  // Held rows of row kernels in shared memory: auto, always, never.
  std::string stageRows = "auto";
  // --cuda-layout-fragments: contractions read mma.sync fragments by the
  // layout table from one padded shared stage (the AMD forms' data path)
  // instead of cp.async stages and ldmatrix; for testing, slower.
  bool layoutFragments = false;
  // When non-empty, each chip's MLIR, LLVM IR, optimized IR and PTX (.s and
  // .ptx) are written under this directory as <executable>.<chip>.<what>.
  std::string dumpDir;
};

struct CUDAKernelExport {
  std::string name; // .entry name (== kernel func name)
  std::array<uint32_t, 3> workgroupCount = {1, 1, 1};
  std::array<uint32_t, 3> workgroupSize = {1, 1, 1};
  // One global pointer parameter per binding (arguments, then results).
  uint32_t bindingCount = 0;
  // Static shared memory the kernel declares.
  uint32_t sharedMemoryBytes = 0;
};

struct CUDAExecutableBinary {
  std::string chip;
  std::vector<uint8_t> ptx; // NUL-terminated PTX text
  std::vector<CUDAKernelExport> exports;
};

// Compiles every kernel of `executable` for each chip of `options`.
// `executable` is not modified. Kernels are tensor-form func.func ops or
// already lowered llvm.func NVVM kernels carrying kiln.workgroup_count/size.
// On failure a located error is emitted.
FailureOr<std::vector<CUDAExecutableBinary>>
compileExecutableForCUDA(ExecutableOp executable,
                         const CUDATargetOptions &options);

// The cuda target as a TargetBackend: one "cuda:<chip>" PTX variant per
// chip.
std::unique_ptr<TargetBackend> createCUDATargetBackend(CUDATargetOptions options);

// Registers the cuda target: --target=cuda, its flags and its backend
// factory (called by registerAllTargets).
void registerCUDATarget(TargetRegistry &registry);

} // namespace mlir::kiln

#endif // KILN_TARGET_CUDA_CUDATARGET_H_
