//===- Compile.cpp - Compiling a program to a module ----------------------===//
#include "kiln/Driver/Compile.h"

#include "kiln/Codegen/CrashContext.h"
#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/Pipelines/Pipelines.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/IR/Threading.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {

// The message for a --target name that `registry` does not hold.
std::string unsupportedTarget(StringRef name, const TargetRegistry &registry) {
  return ("unsupported target '" + name +
          "'; supported targets: " + registry.getTargetNames())
      .str();
}

// The targets of `options`: its list, or the registry's default.
std::vector<std::string> getTargets(const CompileOptions &options,
                                    const TargetRegistry &registry) {
  if (!options.targets.empty())
    return options.targets;
  return {registry.getDefaultTarget().str()};
}

class Compiler {
public:
  Compiler(ModuleOp module, const CompileOptions &options,
           const CompileHooks &hooks,
           std::vector<std::unique_ptr<TargetBackend>> backends)
      : module(module), options(options), hooks(hooks),
        backends(std::move(backends)) {}

  LogicalResult runPhase(StringRef name,
                         function_ref<void(OpPassManager &)> build);
  LogicalResult compileExecutables(ExecutableBinaryMap &binaries);
  // Whether every target has a fused attention kernel.
  bool hasCollectiveKernels() const {
    return !backends.empty() && llvm::all_of(backends, [](const auto &backend) {
      return backend->hasCollectiveKernels();
    });
  }
  bool prefersCollectiveKernels() const {
    return !backends.empty() && llvm::all_of(backends, [](const auto &backend) {
      return backend->prefersCollectiveKernels();
    });
  }
  bool hasFusedAttention() const {
    return !backends.empty() && llvm::all_of(backends, [](const auto &backend) {
      return backend->hasFusedAttention();
    });
  }

private:
  LogicalResult dump(StringRef name);
  // Thread-safe: executables compile in parallel.
  void progress(const Twine &message) {
    if (!hooks.progress)
      return;
    std::lock_guard<std::mutex> lock(progressMutex);
    hooks.progress(message);
  }
  // Reports "<what> took N.NNN s" when progress is wanted.
  struct Timed {
    Compiler &compiler;
    std::string what;
    std::chrono::steady_clock::time_point start =
        std::chrono::steady_clock::now();
    ~Timed() {
      std::chrono::duration<double> seconds =
          std::chrono::steady_clock::now() - start;
      compiler.progress(llvm::formatv("{0} took {1:F3} s", what,
                                      seconds.count()));
    }
  };

  ModuleOp module;
  const CompileOptions &options;
  const CompileHooks &hooks;
  // One per --target, in order.
  std::vector<std::unique_ptr<TargetBackend>> backends;
  unsigned phaseCount = 0;
  std::mutex progressMutex;
};

} // namespace

LogicalResult Compiler::dump(StringRef name) {
  if (options.dumpDir.empty())
    return success();
  SmallString<256> path(options.dumpDir);
  llvm::sys::path::append(
      path, llvm::formatv("{0:D2}-{1}.mlir", phaseCount, name).str());
  std::string error;
  auto file = openOutputFile(path, &error);
  if (!file)
    return module.emitError("cannot write ") << path << ": " << error;
  module.print(file->os());
  file->keep();
  return success();
}

LogicalResult Compiler::runPhase(StringRef name,
                                 function_ref<void(OpPassManager &)> build) {
  ++phaseCount;
  progress("phase " + name);
  Timed timed{*this, ("phase " + name).str()};
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  addCrashContext(pm);
  build(pm);
  auto run = [&]() { return pm.run(module); };
  if (failed(hooks.runPhase ? hooks.runPhase(pm, run) : run()))
    return failure();
  return dump(name);
}

LogicalResult Compiler::compileExecutables(ExecutableBinaryMap &binaries) {
  ++phaseCount;
  SmallVector<ExecutableOp> executables =
      llvm::to_vector(module.getOps<ExecutableOp>());
  std::vector<std::string> dumpDirs(executables.size());
  for (auto [executable, dumpDir] : llvm::zip_equal(executables, dumpDirs)) {
    if (options.dumpDir.empty())
      continue;
    SmallString<256> dir(options.dumpDir);
    llvm::sys::path::append(dir, executable.getSymName());
    if (std::error_code ec = llvm::sys::fs::create_directories(dir))
      return executable.emitError("cannot create ")
             << dir << ": " << ec.message();
    dumpDir = std::string(dir);
  }
  // Executables compile in parallel (each is isolated; their diagnostics
  // come out in executable order) on the context's threads: the dialects
  // the targets' pass pipelines use are loaded first, as none may be loaded
  // while threads run, and every thread holds a CodegenScope so that an
  // in-process link never runs beside LLVM code generation.
  MLIRContext *context = module.getContext();
  if (context->isMultithreadingEnabled() && executables.size() > 1)
    context->loadAllAvailableDialects();
  std::vector<std::vector<ExecutableVariantBinary>> results(executables.size());
  LogicalResult compiled = failableParallelForEach(
      context, llvm::seq<size_t>(0, executables.size()), [&](size_t i) {
        CodegenScope scope;
        ExecutableOp executable = executables[i];
        for (const std::unique_ptr<TargetBackend> &backend : backends) {
          std::string what = ("codegen " + executable.getSymName() + " for " +
                              backend->describe())
                                 .str();
          progress(what);
          Timed timed{*this, what};
          FailureOr<std::vector<ExecutableVariantBinary>> variants =
              backend->compile(executable, dumpDirs[i]);
          if (failed(variants))
            return failure();
          for (ExecutableVariantBinary &variant : *variants)
            results[i].push_back(std::move(variant));
        }
        return success();
      });
  if (failed(compiled))
    return failure();
  for (auto [executable, variants] : llvm::zip_equal(executables, results))
    binaries[executable.getSymName()] = std::move(variants);
  return success();
}

LogicalResult mlir::kiln::compileProgram(ModuleOp module,
                                         const CompileOptions &options,
                                         const CompileHooks &hooks,
                                         raw_ostream &os) {
  if (!options.dumpDir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(options.dumpDir))
      return module.emitError("cannot create ")
             << options.dumpDir << ": " << ec.message();
  std::string error;
  FailureOr<std::vector<std::unique_ptr<TargetBackend>>> backends =
      createTargetBackends(options, error);
  if (failed(backends))
    return module.emitError(error);
  Compiler compiler(module, options, hooks, std::move(*backends));
  if (options.executablesOnly) {
    for (Operation &op : module.getBody()->getOperations())
      if (!isa<ExecutableOp>(op))
        return op.emitError("--compile-mode=executable expects only "
                            "kiln.executable ops, found '")
               << op.getName() << "'";
  } else {
    // Small all_reduces and all_gathers become kernels where every target
    // lowers them: by default on the host target, on request
    // (--collective-kernel-max-bytes) on GPU targets until their threshold
    // is measured on several GPUs. The reductions no library runs (bitwise,
    // i1, and 16-bit integers on NCCL/RCCL) are kernels at any size unless
    // kernels are turned off (--collective-kernel-max-bytes=0).
    int64_t collectiveKernelMaxBytes = 0;
    bool kernelsForLibraryGaps = false;
    if (compiler.hasCollectiveKernels()) {
      collectiveKernelMaxBytes = options.collectiveKernelMaxBytes.value_or(
          compiler.prefersCollectiveKernels()
              ? CompileOptions::kDefaultCollectiveKernelMaxBytes
              : 0);
      kernelsForLibraryGaps = options.collectiveKernelMaxBytes.value_or(1) != 0;
    }
    // Other collectives of modules for GPU targets run on NCCL/RCCL.
    const TargetRegistry &registry = TargetRegistry::getGlobal();
    bool gpuTargets = llvm::any_of(
        getTargets(options, registry),
        [&](StringRef name) { return registry.lookup(name)->gpu; });
    if (failed(compiler.runPhase("input",
                                 [&](OpPassManager &pm) {
                                   InputPipelineOptions input;
                                   input.gpuCollectives = gpuTargets;
                                   input.compiledReductions =
                                       kernelsForLibraryGaps;
                                   input.parametersFile = options.parametersFile;
                                   input.loadTimeParameters =
                                       options.loadTimeParameters;
                                   buildKilnInputPipeline(pm, input);
                                 })) ||
        failed(compiler.runPhase("dispatch-creation",
                                 [&](OpPassManager &pm) {
                                   DispatchCreationOptions creation;
                                   creation.fuseAttention =
                                       compiler.hasFusedAttention();
                                   creation.collectiveKernelMaxBytes =
                                       collectiveKernelMaxBytes;
                                   creation.collectiveKernelsForLibraryGaps =
                                       kernelsForLibraryGaps;
                                   creation.collectiveTwoShotMinBytes =
                                       options.collectiveTwoShotMinBytes;
                                   creation.gpuCollectiveLibraries = gpuTargets;
                                   buildKilnDispatchCreationPipeline(pm,
                                                                     creation);
                                 })) ||
        failed(
            compiler.runPhase("host-lowering", buildKilnHostLoweringPipeline)))
      return failure();
  }
  ExecutableBinaryMap binaries;
  if (failed(compiler.compileExecutables(binaries)))
    return failure();
  return writeModule(module, binaries, options.writer, os);
}

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

namespace {

// Splits a comma-separated option value; an empty or repeated item is an
// error naming the option.
LogicalResult splitList(StringRef option, StringRef value,
                        std::vector<std::string> &items, std::string &error) {
  items.clear();
  SmallVector<StringRef> parts;
  value.split(parts, ',');
  for (StringRef part : parts) {
    StringRef item = part.trim();
    if (item.empty()) {
      error = ("--" + option + "='" + value + "' has an empty item").str();
      return failure();
    }
    if (llvm::is_contained(items, item)) {
      error = ("--" + option + " lists '" + item + "' twice").str();
      return failure();
    }
    items.push_back(item.str());
  }
  return success();
}

LogicalResult parseLevel(StringRef flag, StringRef value, unsigned &level,
                         std::string &error) {
  if (value.getAsInteger(10, level) || level > 3) {
    error = ("--" + flag + " must be 0 to 3, not '" + value + "'").str();
    return failure();
  }
  return success();
}

// Parses the value of `option`, a target's flag, into `values`.
LogicalResult parseTargetOption(const TargetOption &option, StringRef value,
                                bool hasValue, TargetOptionValues &values,
                                std::string &error) {
  StringRef name = option.name;
  if (option.kind != TargetOption::Kind::Bool && !hasValue) {
    error = ("--" + name + " needs a value (--" + name + "=...)").str();
    return failure();
  }
  switch (option.kind) {
  case TargetOption::Kind::StringList: {
    std::vector<std::string> items;
    if (failed(splitList(name, value, items, error)))
      return failure();
    values.set(name, std::move(items));
    return success();
  }
  case TargetOption::Kind::String:
    values.set(name, value.str());
    return success();
  case TargetOption::Kind::Bool:
    values.set(name, !hasValue || value == "true" || value == "1");
    return success();
  case TargetOption::Kind::Level: {
    unsigned level = 0;
    if (failed(parseLevel(name, value, level, error)))
      return failure();
    values.set(name, level);
    return success();
  }
  }
  llvm_unreachable("unknown option kind");
}

} // namespace

LogicalResult mlir::kiln::parseCompileFlags(ArrayRef<std::string> flags,
                                            CompileOptions &options,
                                            std::string &error,
                                            const TargetRegistry &registry) {
  // The flags whose value is kept as it is written.
  auto textFlag = [&](StringRef name) -> std::string * {
    return llvm::StringSwitch<std::string *>(name)
        .Case("module-name", &options.writer.name)
        .Case("dump-intermediates", &options.dumpDir)
        .Case("parameters", &options.parametersFile)
        .Default(nullptr);
  };
  for (StringRef flag : flags) {
    StringRef name = flag, value;
    if (!name.consume_front("--") && !name.consume_front("-")) {
      error = ("'" + flag + "' is not a flag (expected --name=value)").str();
      return failure();
    }
    std::tie(name, value) = name.split('=');
    bool hasValue = flag.contains('=');
    auto needValue = [&]() {
      if (!hasValue)
        error = ("--" + name + " needs a value (--" + name + "=...)").str();
      return hasValue;
    };
    const TargetOption *targetOption = nullptr;
    if (name == "target") {
      if (!needValue() ||
          failed(splitList("target", value, options.targets, error)))
        return failure();
      for (const std::string &target : options.targets) {
        if (registry.lookup(target))
          continue;
        error = unsupportedTarget(target, registry);
        return failure();
      }
    } else if (registry.lookupOption(name, &targetOption)) {
      if (failed(parseTargetOption(*targetOption, value, hasValue,
                                   options.targetOptions, error)))
        return failure();
    } else if (std::string *text = textFlag(name)) {
      if (!needValue())
        return failure();
      *text = value.str();
    } else if (name == "gpu-opt-level") {
      if (!needValue() ||
          failed(parseLevel(name, value, options.shared.gpuOptLevel, error)))
        return failure();
    } else if (name == "gpu-stage-rows") {
      if (!needValue())
        return failure();
      if (value != "auto" && value != "always" && value != "never") {
        error = ("--gpu-stage-rows must be auto, always or never, not '" +
                 value + "'")
                    .str();
        return failure();
      }
      options.shared.gpuStageRows = value.str();
    } else if (name == "collective-kernel-max-bytes" ||
               name == "collective-two-shot-min-bytes") {
      int64_t bytes = 0;
      if (!needValue())
        return failure();
      if (value.getAsInteger(10, bytes) || bytes < 0 || bytes > (1ll << 30)) {
        error = ("--" + name + " must be 0 to 1073741824, not '" + value + "'")
                    .str();
        return failure();
      }
      if (name == "collective-kernel-max-bytes")
        options.collectiveKernelMaxBytes = bytes;
      else
        options.collectiveTwoShotMinBytes = bytes;
    } else if (name == "parameter-mode") {
      if (!needValue())
        return failure();
      if (value != "compile" && value != "load") {
        error = ("--parameter-mode must be 'compile' or 'load', not '" + value +
                 "'")
                    .str();
        return failure();
      }
      options.loadTimeParameters = value == "load";
    } else {
      std::string known = "--target";
      for (const TargetInfo &target : registry.getTargets())
        for (const TargetOption &option : target.options)
          known += ", --" + option.name;
      error = ("unknown flag '--" + name + "' (known: " + known +
               ", --gpu-opt-level, --gpu-stage-rows, "
               "--collective-kernel-max-bytes, "
               "--collective-two-shot-min-bytes, "
               "--module-name, --dump-intermediates, --parameters, "
               "--parameter-mode)")
                  .str();
      return failure();
    }
  }
  // A target's flags that mean nothing without it.
  std::vector<std::string> targets = getTargets(options, registry);
  for (const TargetInfo &target : registry.getTargets()) {
    if (llvm::is_contained(targets, target.name))
      continue;
    for (const TargetOption &option : target.options) {
      if (option.needsTarget && options.targetOptions.contains(option.name)) {
        error = "--" + option.name + " needs --target=" + target.name;
        return failure();
      }
    }
  }
  return verifyCompileOptions(options, error, registry);
}

LogicalResult mlir::kiln::verifyCompileOptions(const CompileOptions &options,
                                               std::string &error,
                                               const TargetRegistry &registry) {
  std::vector<std::string> targets = getTargets(options, registry);
  for (const std::string &target : targets) {
    if (registry.lookup(target))
      continue;
    error = unsupportedTarget(target, registry);
    return failure();
  }
  if (options.shared.gpuOptLevel > 3) {
    error = "optimization levels must be 0 to 3";
    return failure();
  }
  // The given values of the selected targets' options, in registry order.
  for (const TargetInfo &target : registry.getTargets()) {
    if (!llvm::is_contained(targets, target.name))
      continue;
    for (const TargetOption &option : target.options) {
      if (!options.targetOptions.contains(option.name))
        continue;
      const TargetOptionValue &value = options.targetOptions.get(option.name);
      if (option.kind == TargetOption::Kind::Level &&
          std::get<unsigned>(value) > 3) {
        error = "optimization levels must be 0 to 3";
        return failure();
      }
      if (!option.verify)
        continue;
      if (llvm::Error e = option.verify(value)) {
        error = "--" + option.name + ": " + llvm::toString(std::move(e));
        return failure();
      }
    }
  }
  return success();
}

FailureOr<std::vector<std::unique_ptr<TargetBackend>>>
mlir::kiln::createTargetBackends(const CompileOptions &options,
                                 std::string &error,
                                 const TargetRegistry &registry) {
  std::vector<std::unique_ptr<TargetBackend>> backends;
  for (const std::string &name : getTargets(options, registry)) {
    const TargetInfo *target = registry.lookup(name);
    if (!target) {
      error = unsupportedTarget(name, registry);
      return failure();
    }
    backends.push_back(target->create(
        registry.getOptionValues(*target, options.targetOptions),
        options.shared));
  }
  return backends;
}
