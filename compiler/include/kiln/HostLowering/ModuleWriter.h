//===- ModuleWriter.h - .vmfb module serialization --------------*- C++ -*-===//
//
// Writes a fully lowered Kiln module (kiln.executable, kiln.rodata and
// kiln.program ops) and the executables' binaries as the FlatBuffer module of
// runtime/schemas/module.fbs.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_HOSTLOWERING_MODULEWRITER_H_
#define KILN_HOSTLOWERING_MODULEWRITER_H_

#include "kiln/Target/TargetBackend.h"
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
