//===- Frontend.h - Reading a Kiln program ----------------------*- C++ -*-===//
//
// What kiln-compile does before its pipelines, shared with the compiler's
// fuzz harness (tests/fuzz/compile_fuzzer.cc): the dialects a program may
// use, and parsing with the checks that must come before upstream verifiers.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PIPELINES_FRONTEND_H_
#define KILN_PIPELINES_FRONTEND_H_

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

namespace mlir::kiln {

// Every dialect, extension and LLVM IR translation kiln-compile's input and
// pipelines use, and the Kiln dialect.
void registerKilnCompilerDialects(DialectRegistry &registry);

// Parses the main buffer of `sourceMgr` as a module: unverified first,
// then shard grids with an empty axis are refused with a located error
// (some upstream verifiers divide by grid extents), then the module is
// verified. Diagnostics go to `context`'s handlers; null on failure.
OwningOpRef<ModuleOp> parseKilnProgram(llvm::SourceMgr &sourceMgr,
                                       MLIRContext &context);

// LLVM 22's linalg.reduce / broadcast / transpose parsers use their
// `dimensions = [...]` / `permutation = [...]` list after failing to parse
// it (a null attribute: a crash). kiln-compile stops the process at the
// first parse error, before that happens; in-process callers (the C API,
// the fuzz harness) check the text first. Returns the offset of the first
// `dimensions` or `permutation` keyword in `text` (outside `//` comments
// and identifiers) not followed by `= [` integers `]`, or npos.
size_t findMalformedIndexList(llvm::StringRef text);

} // namespace mlir::kiln

#endif // KILN_PIPELINES_FRONTEND_H_
