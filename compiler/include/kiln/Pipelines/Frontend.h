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

} // namespace mlir::kiln

#endif // KILN_PIPELINES_FRONTEND_H_
