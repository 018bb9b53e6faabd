//===- CrashContext.h - Name the running pass in crash reports --*- C++ -*-===//
//
// Every PassManager kiln-compile runs (its phases and the targets' codegen
// stages) gets an instrumentation that keeps "running pass 'X' on 'op'" on
// LLVM's pretty stack trace while the pass runs, so the internal-compiler-
// error report printed on a crash names the pass that crashed (per thread:
// passes running in parallel on different functions each name their own).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_CRASHCONTEXT_H_
#define KILN_CODEGEN_CRASHCONTEXT_H_

#include "mlir/Pass/PassManager.h"

namespace mlir {
namespace kiln {

// Adds the instrumentation to |pm|. Also honours the hidden option
// --kiln-debug-crash-before-pass=ARG, which crashes (a trap) just before a
// pass whose argument is ARG runs: how the crash report is tested.
void addCrashContext(PassManager &pm);

} // namespace kiln
} // namespace mlir

#endif // KILN_CODEGEN_CRASHCONTEXT_H_
