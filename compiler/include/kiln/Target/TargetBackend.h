//===- TargetBackend.h - What a code generation target makes ----*- C++ -*-===//
//
// A target (host, rocm, cuda, ...) turns each kiln.executable into the
// module's variants of it: one binary per chip with its kernels' export
// table. The module writer and the compile driver know targets only through
// this interface; each target's folder provides a create*TargetBackend.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TARGET_TARGETBACKEND_H_
#define KILN_TARGET_TARGETBACKEND_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/Dialect/Kiln/KilnOps.h"
#include "mlir/Support/LLVM.h"

namespace mlir::kiln {

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

// One variant of an executable (schema: ExecutableVariant).
struct ExecutableVariantBinary {
  std::string target; // "host:x86_64", "rocm:gfx942", "cuda:sm_90"
  std::string format; // "elf-so-v1", "hsaco", "ptx"
  std::vector<uint8_t> binary;
  std::vector<VariantExport> exports;
};

// Held by a thread while it generates code for a target (any LLVM work):
// in-process lld (host shared objects, HSACO) resets the process's cl::opt
// values, which LLVM code generation reads, so a link waits until no other
// thread is inside such a scope, and scopes wait for the link. Reentrant per
// thread; a link from inside a scope steps out of it while it runs.
class CodegenScope {
public:
  CodegenScope();
  ~CodegenScope();
  CodegenScope(const CodegenScope &) = delete;
  CodegenScope &operator=(const CodegenScope &) = delete;
};

class TargetBackend {
public:
  virtual ~TargetBackend() = default;
  // What progress messages call it: "host", "rocm:gfx942,gfx1100".
  virtual std::string describe() const = 0;
  // The variants of `executable` (one per chip), compiling in place;
  // `dumpDir` ("" for none) receives each stage. Failures are diagnostics.
  virtual FailureOr<std::vector<ExecutableVariantBinary>>
  compile(ExecutableOp executable, StringRef dumpDir) const = 0;
  // Whether every chip of the target has a fused attention kernel
  // (kiln/DispatchCreation/Attention.h); dispatch creation fuses attention
  // chains only when every target of the compile has one.
  virtual bool hasFusedAttention() const { return false; }
  // Whether the target lowers kiln.window_collective (compiled collectives,
  // kiln-compile-collectives); collectives become kernels only when every
  // target of the compile does.
  virtual bool hasCollectiveKernels() const { return false; }
  // Whether they are the default for the target's small collectives: its
  // runtime driver has symmetric windows (local: yes; hip: not yet, so the
  // GPU targets compile them only on request).
  virtual bool prefersCollectiveKernels() const { return false; }
};

} // namespace mlir::kiln

#endif // KILN_TARGET_TARGETBACKEND_H_
