//===- Compile.h - Compiling a program to a module ---------------*- C++
//-*-===//
//
// The compiler as a library: the options of a compile (kiln-compile's, as
// data), parsing them from kiln-compile flags, and the compile itself: a
// parsed program through input conversion, dispatch creation and host
// lowering, kernel codegen per executable, target and chip, and module
// serialization. kiln-compile and the C API (kiln/compiler.h) are both thin
// layers over it.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DRIVER_COMPILE_H_
#define KILN_DRIVER_COMPILE_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kiln/HostLowering/ModuleWriter.h"
#include "kiln/Target/TargetRegistry.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::kiln {

struct CompileOptions {
  // The registered targets (kiln/Target/TargetRegistry.h) executables are
  // compiled for, in this order; empty: the registry's default (host).
  std::vector<std::string> targets;
  // The target options given (--rocm-chip, --host-cpu, ...), by flag name;
  // each target's factory gets its own, defaults where not given.
  TargetOptionValues targetOptions;
  // Options every target may read (--gpu-opt-level).
  SharedTargetOptions shared;
  // The input holds kiln.executable ops only, compiled as they are (tests).
  bool executablesOnly = false;
  // The safetensors or .npz archive of the program's kiln.parameter
  // arguments.
  std::string parametersFile;
  // --parameter-mode=load: kiln.parameter arguments are given when the
  // module is loaded (rodata that names them) instead of bound from
  // `parametersFile`, which is then only checked against them.
  bool loadTimeParameters = false;
  // Where to write the program after each phase and each executable's
  // codegen stages ("" for nowhere).
  std::string dumpDir;
  // Module name, source digest and flags stored in the module.
  ModuleWriterOptions writer;
  // all_reduce, all_gather and reduce_scatter of at most this many bytes per
  // rank become kernels over symmetric windows; 0 keeps every collective a
  // library call. Unset: the default below where every target's driver has
  // windows (host), else 0 (the hip driver has them on logical devices
  // only).
  std::optional<int64_t> collectiveKernelMaxBytes;
  static constexpr int64_t kDefaultCollectiveKernelMaxBytes = 1 << 20;
  // Compiled all_reduces over more than 2 ranks of at least this many bytes
  // per rank run two-shot (reduce_scatter, then all_gather); 0: never, the
  // default: on one H200 (logical ranks) one-shot is faster at every size
  // up to the 1 MiB kernel limit (docs/performance.md); the multi-GPU
  // threshold waits for a machine with several GPUs.
  int64_t collectiveTwoShotMinBytes = 0;
};

// Reads kiln-compile flags into `options`, starting from the defaults: the
// driver's own ("--target=cuda,host", "--gpu-opt-level=N",
// "--collective-kernel-max-bytes=N", "--collective-two-shot-min-bytes=N",
// "--module-name=NAME",
// "--dump-intermediates=DIR", "--parameters=FILE.safetensors",
// "--parameter-mode=compile|load") and those the targets of `registry` own
// ("--rocm-chip=gfx942", "--host-cpu=CPU", ...). The selected targets'
// option values are checked (known chips). On a bad flag, returns failure
// with `error` naming it.
LogicalResult
parseCompileFlags(ArrayRef<std::string> flags, CompileOptions &options,
                  std::string &error,
                  const TargetRegistry &registry = TargetRegistry::getGlobal());

// Checks the options: registered targets, option ranges, and the values of
// the selected targets' options (known chips); `error` says what is wrong.
LogicalResult
verifyCompileOptions(const CompileOptions &options, std::string &error,
                     const TargetRegistry &registry = TargetRegistry::getGlobal());

// One backend per target of `options`, in order, through the registry's
// factories; `error` names an unregistered target.
FailureOr<std::vector<std::unique_ptr<TargetBackend>>> createTargetBackends(
    const CompileOptions &options, std::string &error,
    const TargetRegistry &registry = TargetRegistry::getGlobal());

// Hooks of a compile for its caller (kiln-compile applies its command-line
// pass manager options and prints progress).
struct CompileHooks {
  // Runs each phase: gets its built pass manager and `run`, which runs it
  // on the module (default: just `run()`). kiln-compile applies its
  // command-line pass manager and timing options around it.
  std::function<LogicalResult(PassManager &, function_ref<LogicalResult()> run)>
      runPhase;
  // Progress messages ("phase input", "codegen main_dispatch_0 for host").
  std::function<void(const Twine &)> progress;
};

// Compiles the parsed, verified `module` (modified in place) and writes
// the serialized module to `os`. Every failure is a diagnostic on the
// module's context. Executables compile in parallel when the context is
// multithreaded (the output is the same as a serial compile's).
LogicalResult compileProgram(ModuleOp module, const CompileOptions &options,
                             const CompileHooks &hooks, raw_ostream &os);

} // namespace mlir::kiln

#endif // KILN_DRIVER_COMPILE_H_
