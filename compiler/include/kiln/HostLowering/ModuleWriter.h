//===- ModuleWriter.h - .vmfb module serialization --------------*- C++ -*-===//
//
// Writes a fully lowered Kiln module (kiln.executable, kiln.rodata and
// kiln.program ops) and the executables' binaries as the FlatBuffer module of
// runtime/schemas/module.fbs.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_HOSTLOWERING_MODULEWRITER_H_
#define KILN_HOSTLOWERING_MODULEWRITER_H_

#include "kiln/Target/CUDA/CUDATarget.h"
#include "kiln/Target/Host/HostTarget.h"
#include "kiln/Target/ROCM/ROCMTarget.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace mlir::kiln {

struct ModuleWriterOptions {
  // Module.name; defaults to the input file's stem.
  std::string name;
  // Module.source_digest: hex SHA-256 of the source text.
  std::string sourceDigest;
  // Module.compile_flags: the command line that produced the module.
  std::string compileFlags;
};

// One kernel entry point of a variant (schema: ExecutableExport).
struct VariantExport {
  std::string name;
  std::array<uint32_t, 3> workgroupCount = {1, 1, 1};
  std::array<uint32_t, 3> workgroupSize = {1, 1, 1};
  uint32_t bindingCount = 0;
  uint32_t pushConstantCount = 0;
  uint32_t sharedMemoryBytes = 0;
  uint32_t vgprCount = 0;
  uint32_t sgprCount = 0;
  uint32_t agprCount = 0;
  uint32_t scratchBytes = 0;
};

// The binary of one executable for one target (schema: ExecutableVariant).
//
// What a driver needs to launch export `e` of a GPU variant:
//   - "rocm:<chip>", format "hsaco": an amdhsa ELF code object (v5) for
//     exactly that chip (xnack/sramecc "any"). The kernel symbol is `e.name`
//     (its descriptor is `<name>.kd`). Kernel arguments: `binding_count`
//     64-bit global pointers in binding order (8 bytes each), then
//     `push_constant_count` 32-bit values (none yet); the code object's
//     .kernarg_segment_size may be larger (hidden arguments, which HIP
//     fills in itself).
//   - "cuda:<chip>", format "ptx": PTX text followed by one NUL byte (the
//     byte is part of the binary), ready for cuModuleLoadData. The .entry is
//     `e.name`; its .param list is `binding_count` .u64 global pointers.
//   In both: grid = `workgroup_count` workgroups of `workgroup_size`
//   threads; `shared_memory_bytes` is static shared memory that the binary
//   already declares, so launches pass 0 bytes of dynamic shared memory.
//   vgpr/sgpr/agpr/scratch are read back from HSACO metadata (0 for PTX).
//   The host variant ("host:x86_64", "elf-so-v1") follows host_abi.h.
struct ExecutableVariantBinary {
  std::string target; // "host:x86_64", "rocm:gfx942", "cuda:sm_90"
  std::string format; // "elf-so-v1", "hsaco", "ptx"
  std::vector<uint8_t> binary;
  std::vector<VariantExport> exports;
};

ExecutableVariantBinary makeHostVariant(HostExecutableBinary binary);
ExecutableVariantBinary makeROCMVariant(ROCMExecutableBinary binary);
ExecutableVariantBinary makeCUDAVariant(CUDAExecutableBinary binary);

// Every variant of each executable, keyed by kiln.executable name. The
// order of the variants is the order in the module.
using ExecutableBinaryMap =
    llvm::StringMap<std::vector<ExecutableVariantBinary>>;

// Hex SHA-256 of `text`.
std::string computeSourceDigest(llvm::StringRef text);

// Serializes `module`. Every kiln.executable must have at least one variant
// in `binaries`, each with distinct targets and with exports that match the
// executable's kernels (names, order, binding counts), and every function
// must already be a kiln.program. On failure a located error is emitted.
LogicalResult writeModule(ModuleOp module, const ExecutableBinaryMap &binaries,
                          const ModuleWriterOptions &options,
                          llvm::raw_ostream &os);

} // namespace mlir::kiln

#endif // KILN_HOSTLOWERING_MODULEWRITER_H_
