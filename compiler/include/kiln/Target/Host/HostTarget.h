//===- HostTarget.h - Host (x86-64) executable compilation ------*- C++ -*-===//
//
// Compiles the tensor-form kernels of a kiln.executable into one ELF shared
// object following runtime/include/kiln/host_abi.h (format "elf-so-v1").
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TARGET_HOST_HOSTTARGET_H_
#define KILN_TARGET_HOST_HOSTTARGET_H_

#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/Target/TargetBackend.h"
#include "kiln/Target/TargetRegistry.h"
#include "mlir/Support/LLVM.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir::kiln {

struct HostTargetOptions {
  // LLVM CPU name and feature string of the machine that will run the code
  // ("native": the machine compiling, with all its features).
  std::string cpu = "x86-64";
  std::string features;
  // Bits of the SIMD registers kernels are vectorized for: -1 derives them
  // from the CPU (512 with AVX-512 unless LLVM prefers 256-bit vectors on
  // it, 256 with AVX, else 128: SSE2); 0 compiles scalar loops only.
  int64_t vectorWidth = -1;
  // LLVM optimization level (0-3).
  unsigned optLevel = 3;
  // When non-empty, each kernel's IR after each stage, the LLVM IR, the
  // assembly and the shared object are written under this directory.
  std::string dumpDir;
};

struct HostKernelExport {
  std::string name; // symbol in the shared object (== kernel func name)
  std::array<uint32_t, 3> workgroupCount = {1, 1, 1};
  // Bindings are the kernel's arguments followed by its results, in order.
  uint32_t bindingCount = 0;
};

struct HostExecutableBinary {
  std::vector<uint8_t> sharedObject;
  // One entry per func.func in the executable, in op order.
  std::vector<HostKernelExport> exports;
};

// Compiles every func.func in `executable`. `executable` is not modified (the
// work is done on a clone). On failure a diagnostic is emitted at the
// offending op's location and failure is returned.
FailureOr<HostExecutableBinary>
compileExecutableForHost(ExecutableOp executable,
                         const HostTargetOptions &options);

// The host target as a TargetBackend (variant "host:x86_64", format
// elf-so-v1).
std::unique_ptr<TargetBackend> createHostTargetBackend(HostTargetOptions options);

// Registers the host target: --target=host, its flags and its backend
// factory (called by registerAllTargets).
void registerHostTarget(TargetRegistry &registry);

} // namespace mlir::kiln

#endif // KILN_TARGET_HOST_HOSTTARGET_H_
