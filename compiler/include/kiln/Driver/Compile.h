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
#include "kiln/Target/CUDA/CUDATarget.h"
#include "kiln/Target/Host/HostTarget.h"
#include "kiln/Target/ROCM/ROCMTarget.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::kiln {

enum class CompileTarget { Host, ROCM, CUDA };

struct CompileOptions {
  // What executables are compiled for, in this order (default: host).
  SmallVector<CompileTarget> targets = {CompileTarget::Host};
  HostTargetOptions host;
  ROCMTargetOptions rocm;
  CUDATargetOptions cuda;
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
  // all_reduce and all_gather of at most this many bytes per rank become
  // kernels over symmetric windows; 0 keeps every collective a library
  // call. Unset: the default below where every target's driver has windows
  // (host), else 0 (the hip driver has none yet).
  std::optional<int64_t> collectiveKernelMaxBytes;
  static constexpr int64_t kDefaultCollectiveKernelMaxBytes = 1 << 20;

  bool has(CompileTarget target) const {
    return llvm::is_contained(targets, target);
  }
};

// Reads kiln-compile flags ("--target=cuda,host", "--cuda-chip=sm_80",
// "--rocm-chip=gfx942", "--rocm-device-libs=DIR", "--rocm-matrix-cores=false",
// "--gpu-opt-level=N", "--host-cpu=CPU", "--host-features=F",
// "--host-opt-level=N", "--collective-kernel-max-bytes=N",
// "--module-name=NAME", "--dump-intermediates=DIR",
// "--parameters=FILE.safetensors", "--parameter-mode=compile|load")
// into `options`, starting from the defaults; the chips are checked. On a
// bad flag, returns failure with `error` naming it.
LogicalResult parseCompileFlags(ArrayRef<std::string> flags,
                                CompileOptions &options, std::string &error);

// Checks the target options (known chips, option ranges); `error` says
// what is wrong.
LogicalResult verifyCompileOptions(const CompileOptions &options,
                                   std::string &error);

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
