//===- ModuleWriter.h - .vmfb module serialization --------------*- C++ -*-===//
//
// Writes a fully lowered Kiln module (kiln.executable, kiln.rodata and
// kiln.program ops) and the executables' binaries as the FlatBuffer module of
// runtime/schemas/module.fbs.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_HOSTLOWERING_MODULEWRITER_H_
#define KILN_HOSTLOWERING_MODULEWRITER_H_

#include "kiln/Target/Host/HostTarget.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::kiln {

struct ModuleWriterOptions {
  // Module.name; defaults to the input file's stem.
  std::string name;
  // Module.source_digest: hex SHA-256 of the source text.
  std::string sourceDigest;
  // Module.compile_flags: the command line that produced the module.
  std::string compileFlags;
};

// Binaries of the host variant, keyed by kiln.executable name.
using HostBinaryMap = llvm::StringMap<HostExecutableBinary>;

// Hex SHA-256 of `text`.
std::string computeSourceDigest(llvm::StringRef text);

// Serializes `module`. Every kiln.executable must have a binary in
// `hostBinaries` whose exports match its kernels, and every function must
// already be a kiln.program. On failure a located error is emitted.
LogicalResult writeModule(ModuleOp module, const HostBinaryMap &hostBinaries,
                          const ModuleWriterOptions &options,
                          llvm::raw_ostream &os);

} // namespace mlir::kiln

#endif // KILN_HOSTLOWERING_MODULEWRITER_H_
