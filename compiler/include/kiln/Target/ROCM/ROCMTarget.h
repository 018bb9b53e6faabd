//===- ROCMTarget.h - AMD GPU (HSACO) executable compilation ----*- C++ -*-===//
//
// Compiles the kernels of a kiln.executable into one HSACO code object
// (ELF, amdhsa ABI, code object v5) per requested AMD chip, through the
// shared GPU codegen pipeline (ROCDL), the AMDGPU backend and in-process lld.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TARGET_ROCM_ROCMTARGET_H_
#define KILN_TARGET_ROCM_ROCMTARGET_H_

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

// Binary format of ROCM variants in the module (ExecutableVariant.format).
inline constexpr llvm::StringLiteral kROCMBinaryFormat = KILN_ROCM_FORMAT;

// What the compiler knows about one AMD chip.
struct ROCMChipInfo {
  llvm::StringLiteral name;   // LLVM processor name, e.g. "gfx942"
  unsigned isaVersion;        // __oclc_ISA_version, e.g. 9402
  unsigned wavefrontSize;     // 64 on CDNA (gfx9), 32 on RDNA (gfx10+)
  unsigned maxSharedMemoryBytes; // LDS per workgroup
};

// The chips kiln-compile accepts, in a stable order.
ArrayRef<ROCMChipInfo> getKnownROCMChips();
// Null when `chip` is not a known chip.
const ROCMChipInfo *lookupROCMChip(StringRef chip);
// An error naming the first unknown chip of `chips` and listing the known
// ones; success when every chip is known and the list is not empty.
llvm::Error verifyROCMChips(ArrayRef<std::string> chips);

struct ROCMTargetOptions {
  // One HSACO per chip, in this order.
  std::vector<std::string> chips = {"gfx942"};
  // LLVM optimization level (0-3) of the IR optimizer and the backend.
  unsigned optLevel = 3;
  // Held rows of row kernels in shared memory: auto, always, never.
  std::string stageRows = "auto";
  // When non-empty, each chip's MLIR, LLVM IR, optimized IR, ISA (.s) and
  // HSACO are written under this directory as <executable>.<chip>.<what>.
  std::string dumpDir;
  // Directory holding ocml.bc and ockl.bc. Empty: the usual install places
  // (Debian's /usr/lib/x86_64-linux-gnu/amdgcn/bitcode, /opt/rocm, ...).
  // Only read when a kernel calls an __ocml_/__ockl_ function.
  std::string deviceLibsDir;
  // MFMA/WMMA strategies for f16 and bf16 contractions
  // (--rocm-matrix-cores=false turns them off). No AMD GPU has run them in
  // this project: they are verified at the ISA level and by running the
  // same recipe with mma.sync on NVIDIA GPUs.
  bool matrixCores = true;
};

// One kernel of an HSACO, with the resource usage read back from the code
// object's amdhsa metadata note.
struct ROCMKernelExport {
  std::string name; // kernel symbol (== kernel func name)
  std::array<uint32_t, 3> workgroupCount = {1, 1, 1};
  std::array<uint32_t, 3> workgroupSize = {1, 1, 1};
  // Bindings are the kernel's arguments followed by its results, in order;
  // the kernel takes one global pointer per binding.
  uint32_t bindingCount = 0;
  // Static LDS per workgroup (.group_segment_fixed_size).
  uint32_t sharedMemoryBytes = 0;
  uint32_t vgprCount = 0;
  uint32_t sgprCount = 0;
  uint32_t agprCount = 0;
  // Scratch per work-item (.private_segment_fixed_size).
  uint32_t scratchBytes = 0;
  uint32_t vgprSpillCount = 0;
  uint32_t sgprSpillCount = 0;
  uint32_t kernargSegmentSize = 0;
  uint32_t wavefrontSize = 0;
};

struct ROCMExecutableBinary {
  std::string chip;
  std::vector<uint8_t> hsaco;
  // One entry per kernel of the executable, in op order.
  std::vector<ROCMKernelExport> exports;
};

// Compiles every kernel of `executable` for each chip of `options`.
// `executable` is not modified. Kernels are tensor-form func.func ops (run
// through the GPU codegen pipeline) or already lowered llvm.func ROCDL
// kernels carrying kiln.workgroup_count/size. A kernel that spills to scratch
// is reported as a warning. On failure a located error is emitted.
FailureOr<std::vector<ROCMExecutableBinary>>
compileExecutableForROCM(ExecutableOp executable,
                         const ROCMTargetOptions &options);

// The rocm target as a TargetBackend: one "rocm:<chip>" HSACO variant per
// chip, with the kernels' register and scratch use from its metadata.
std::unique_ptr<TargetBackend> createROCMTargetBackend(ROCMTargetOptions options);

// Registers the rocm target: --target=rocm, its flags and its backend
// factory (called by registerAllTargets).
void registerROCMTarget(TargetRegistry &registry);

} // namespace mlir::kiln

#endif // KILN_TARGET_ROCM_ROCMTARGET_H_
