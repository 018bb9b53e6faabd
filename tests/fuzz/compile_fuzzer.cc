// libFuzzer harness of the compiler's input path: MLIR text through
// kiln-compile's frontend (parse unverified, shard-grid check, verify), its
// three program phases (input conversion, dispatch creation, host lowering)
// and host kernel codegen of every executable (the MLIR stages, LLVM and the
// shared object), as `kiln-compile --target=host` runs them. Diagnostics are
// the expected answer to bad input and are dropped; a crash, a sanitizer
// report, an LLVM fatal error or a hang is a finding.
//
// Built with libFuzzer under KILN_BUILD_FUZZERS (clang), and in every build
// with the compiler as a replay tool over the seeds and regressions
// (replay_main.cc; ctest compiler.fuzz.compile).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/Pipelines/Frontend.h"
#include "kiln/Pipelines/Pipelines.h"
#include "kiln/Target/Host/HostTarget.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

namespace {

// Programs beyond this are not "small" (and only slow the search down).
constexpr size_t kMaxSourceBytes = 16 * 1024;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mlir;
  if (size > kMaxSourceBytes) return 0;
  static const bool verbose = std::getenv("KILN_FUZZ_VERBOSE") != nullptr;
  llvm::StringRef text(reinterpret_cast<const char*>(data), size);
  // Inputs that would only find LLVM 22's index-list parser bug again
  // (kiln::findMalformedIndexList) are skipped.
  if (kiln::findMalformedIndexList(text) != llvm::StringRef::npos) {
    if (verbose)
      std::fprintf(stderr, "compile_fuzzer: skipped (malformed index list)\n");
    return 0;
  }
  // A fresh context per input: nothing one input uniques or loads changes
  // how the next one compiles.
  static DialectRegistry* registry = [] {
    auto* r = new DialectRegistry();
    kiln::registerKilnCompilerDialects(*r);
    return r;
  }();
  MLIRContext context(*registry, MLIRContext::Threading::DISABLED);
  context.printOpOnDiagnostic(false);
  ScopedDiagnosticHandler drop(&context,
                               [](Diagnostic&) { return success(); });

  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz.mlir"),
      llvm::SMLoc());
  OwningOpRef<ModuleOp> module = kiln::parseKilnProgram(sourceMgr, context);
  if (!module) {
    if (verbose) std::fprintf(stderr, "compile_fuzzer: not a valid program\n");
    return 0;
  }

  PassManager pm(&context, ModuleOp::getOperationName());
  kiln::buildKilnInputPipeline(pm);
  kiln::buildKilnDispatchCreationPipeline(pm);
  kiln::buildKilnHostLoweringPipeline(pm);
  if (failed(pm.run(*module))) {
    if (verbose) std::fprintf(stderr, "compile_fuzzer: refused by a phase\n");
    return 0;
  }

  kiln::HostTargetOptions host;
  host.optLevel = 1;  // LLVM's own passes are not what is fuzzed here
  int compiled = 0, refused = 0;
  for (kiln::ExecutableOp executable : module->getOps<kiln::ExecutableOp>())
    ++(succeeded(kiln::compileExecutableForHost(executable, host)) ? compiled
                                                                   : refused);
  // KILN_FUZZ_VERBOSE=1: how far each input got (seeds should compile).
  if (verbose)
    std::fprintf(stderr, "compile_fuzzer: %d executables compiled, %d refused\n",
                 compiled, refused);
  return 0;
}
