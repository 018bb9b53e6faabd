//===- GPUTargetUtils.h - Steps shared by the ROCM and CUDA targets -*- C++ -*-===//
//
// The ROCM (HSACO) and CUDA (PTX) targets compile an executable the same way
// up to the LLVM module: clone the kernels, run the shared GPU codegen
// pipeline for one chip, read back the launch attributes, translate to LLVM
// IR, optimize. Only the device libraries and the final emission differ.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_TARGET_GPU_GPUTARGETUTILS_H_
#define KILN_LIB_TARGET_GPU_GPUTARGETUTILS_H_

#include "kiln/Codegen/GPUPipeline.h"
#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/Target/TargetBackend.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"

#include "llvm/ADT/SmallVectorExtras.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

namespace mlir::kiln::gpu_target {

// Launch facts of one kernel, common to every GPU target.
struct KernelLaunchInfo {
  std::string name;
  uint32_t bindingCount = 0;
  std::array<uint32_t, 3> workgroupCount = {1, 1, 1};
  std::array<uint32_t, 3> workgroupSize = {1, 1, 1};
  uint32_t sharedMemoryBytes = 0;
};

// A target's export entry (ROCMKernelExport, CUDAKernelExport) holding the
// launch facts of `kernel`; the target fills in its own fields.
template <typename KernelExport>
KernelExport makeKernelExport(const KernelLaunchInfo &kernel) {
  KernelExport entry;
  entry.name = kernel.name;
  entry.workgroupCount = kernel.workgroupCount;
  entry.workgroupSize = kernel.workgroupSize;
  entry.bindingCount = kernel.bindingCount;
  entry.sharedMemoryBytes = kernel.sharedMemoryBytes;
  return entry;
}

// Writes `<dir>/<executable>.<chip>.<what>` files for --dump-intermediates.
class DumpWriter {
public:
  DumpWriter(StringRef dir, StringRef executableName, StringRef chip);

  bool enabled() const { return !dir.empty(); }

  // Returns failure (after a diagnostic at `loc`) when the file cannot be
  // written; does nothing when dumping is disabled.
  LogicalResult write(Location loc, StringRef what,
                      function_ref<void(raw_ostream &)> print) const;
  LogicalResult writeBytes(Location loc, StringRef what,
                           ArrayRef<char> bytes) const;

private:
  std::string dir;
  std::string prefix;
};

// Clones the kernels of `executable`, in op order, into a fresh module and
// runs the GPU codegen pipeline on it when they are tensor-form func.func
// kernels. Kernels that are already LLVM-dialect functions (llvm.func carrying
// the kiln.workgroup_* attributes, e.g. hand-written tests) are taken as the
// pipeline's output for `options.backend` and are not lowered again.
// `targetName` ("rocm", "cuda") prefixes diagnostics.
FailureOr<OwningOpRef<ModuleOp>>
lowerKernels(ExecutableOp executable, const GPUCodegenOptions &options,
             StringRef targetName, const DumpWriter &dump,
             SmallVectorImpl<KernelLaunchInfo> &kernels);

// One executable lowered for one chip and translated to LLVM IR.
struct TranslatedExecutable {
  std::unique_ptr<llvm::Module> module;
  SmallVector<KernelLaunchInfo> kernels;
};

// The first steps of every GPU target for one chip: the GPU codegen
// pipeline (lowerKernels), translation for `tm`, the target's own kernel
// annotations (`annotate`: launch bounds, calling convention checks) and
// the "ll" dump.
FailureOr<TranslatedExecutable> lowerAndTranslate(
    ExecutableOp executable, const GPUCodegenOptions &options,
    llvm::TargetMachine &tm, llvm::LLVMContext &context, StringRef targetName,
    const DumpWriter &dump,
    function_ref<LogicalResult(llvm::Module &, ArrayRef<KernelLaunchInfo>)>
        annotate);

// Makes everything but the kernels internal (device-library functions and
// helpers may then be inlined, specialized or dropped), optimizes at
// `optLevel` and verifies the result.
LogicalResult internalizeAndOptimize(Location loc, llvm::Module &module,
                                     ArrayRef<KernelLaunchInfo> kernels,
                                     llvm::TargetMachine &tm,
                                     unsigned optLevel, StringRef targetName,
                                     StringRef executableName);

// Translates the lowered module to LLVM IR for `tm`'s triple and data layout.
std::unique_ptr<llvm::Module> translateToLLVMIR(ModuleOp module,
                                                llvm::LLVMContext &context,
                                                llvm::TargetMachine &tm,
                                                StringRef targetName);

// Runs the new pass manager's default pipeline at `optLevel` (0-3) with the
// target's own passes.
void optimizeModule(llvm::Module &module, llvm::TargetMachine &tm,
                    unsigned optLevel);

// Runs the backend on `module` (consumed by codegen) into `out`.
LogicalResult emitFile(Location loc, llvm::Module &module,
                       llvm::TargetMachine &tm, llvm::CodeGenFileType type,
                       StringRef targetName, SmallVectorImpl<char> &out);

// Emits assembly of a clone of `module` into the dump (the module itself is
// left for object emission).
LogicalResult dumpAssembly(Location loc, const llvm::Module &module,
                           llvm::TargetMachine &tm, StringRef targetName,
                           const DumpWriter &dump);

// Transcendental math intrinsics (llvm.exp, llvm.tanh, ...) that GPU
// backends may have no instruction or expansion for: for those they would
// need a library call, which the AMDGPU and NVPTX backends cannot make (they
// stop with a fatal error). Returns the function's base name ("exp",
// "tanh", ...) or an empty string when `fn` is no such intrinsic.
StringRef getTranscendentalName(const llvm::Function &fn);

// Fails with a located error naming the first call of a transcendental
// intrinsic for which `isLowerable(name, scalar type)` is false, so the
// backend never sees one it cannot compile.
LogicalResult checkTranscendentals(
    Location loc, const llvm::Module &module, StringRef targetName,
    StringRef chip,
    function_ref<bool(StringRef name, llvm::Type *scalarType)> isLowerable);

llvm::CodeGenOptLevel getCodeGenOptLevel(unsigned optLevel);

// The LLVM backend one GPU target compiles with.
struct LLVMBackend {
  StringRef targetName;  // "rocm", "cuda": prefixes diagnostics
  StringRef backendName; // "AMDGPU", "NVPTX": names the backend in diagnostics
  StringRef triple;
  std::optional<llvm::Reloc::Model> relocModel;
  // Registers the backend with LLVM (its LLVMInitialize* functions). Called
  // once per process, through `initialized`, before the first target machine.
  void (*initialize)();
  std::once_flag initialized;
};

// A target machine of `backend` for `chip` (an LLVM processor name) with
// the subtarget `features`, generating code at `optLevel` (0-3). Emits an
// error at `loc` and returns null when LLVM has no such backend or it
// rejects the chip.
std::unique_ptr<llvm::TargetMachine>
createTargetMachine(Location loc, LLVMBackend &backend, StringRef chip,
                    StringRef features, unsigned optLevel);

// The entry of `chips` (ROCMChipInfo, CUDAChipInfo) named `chip`, or null.
template <typename ChipInfo>
const ChipInfo *lookupChip(ArrayRef<ChipInfo> chips, StringRef chip) {
  for (const ChipInfo &info : chips)
    if (info.name == chip)
      return &info;
  return nullptr;
}

// Success when `chips` is not empty and each of them is one of `known`;
// otherwise an error saying that no chip was given or naming the first
// unknown one, and listing the known ones. `vendor` ("ROCm", "CUDA") names
// the kind of chip in the message.
llvm::Error verifyChipNames(ArrayRef<StringRef> known,
                            ArrayRef<std::string> chips, StringRef vendor);

// verifyChipNames with the names of `knownChips` (ROCMChipInfo,
// CUDAChipInfo).
template <typename ChipInfo>
llvm::Error verifyChipList(ArrayRef<ChipInfo> knownChips,
                           ArrayRef<std::string> chips, StringRef vendor) {
  SmallVector<StringRef> known = llvm::map_to_vector(
      knownChips, [](const ChipInfo &info) -> StringRef { return info.name; });
  return verifyChipNames(known, chips, vendor);
}

// Prints `names` as "a, b, c" for diagnostics that list valid values.
std::string joinNames(ArrayRef<StringRef> names);

// A GPU variant whose exports carry the launch facts every GPU target
// reports (`KernelExport`: ROCMKernelExport or CUDAKernelExport); the caller
// adds what its target reports beyond them.
template <typename KernelExport>
ExecutableVariantBinary makeGPUVariant(std::string target, std::string format,
                                       std::vector<uint8_t> binary,
                                       ArrayRef<KernelExport> exports) {
  ExecutableVariantBinary variant;
  variant.target = std::move(target);
  variant.format = std::move(format);
  variant.binary = std::move(binary);
  for (const KernelExport &kernel : exports) {
    VariantExport entry;
    entry.name = kernel.name;
    entry.workgroupCount = kernel.workgroupCount;
    entry.workgroupSize = kernel.workgroupSize;
    entry.bindingCount = kernel.bindingCount;
    entry.sharedMemoryBytes = kernel.sharedMemoryBytes;
    variant.exports.push_back(std::move(entry));
  }
  return variant;
}

} // namespace mlir::kiln::gpu_target

#endif // KILN_LIB_TARGET_GPU_GPUTARGETUTILS_H_
