//===- kiln-compile.cpp - Compile a tensor program to a .vmfb module ------===//
//
//   kiln-compile in.mlir --target=host -o out.vmfb
//   kiln-compile in.mlir --target=rocm,cuda,host --rocm-chip=gfx942,gfx1100
//
// Phases: input conversion -> dispatch creation -> host lowering -> kernel
// codegen per executable, per target and per chip -> module serialization
// (one variant per target chip in each executable). Every failure is a
// located diagnostic and a non-zero exit status.
//
//===----------------------------------------------------------------------===//
#include <cstdlib>
#include <functional>
#include <memory>

#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/Driver/Compile.h"
#include "kiln/Target/TargetRegistry.h"
#include "kiln/version.h"
#include "llvm/Config/llvm-config.h"
#include "kiln/HostLowering/ModuleWriter.h"
#include "kiln/Pipelines/Frontend.h"
#include "kiln/Pipelines/Pipelines.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory kilnCategory("kiln-compile options");

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<input.mlir | ->"),
                                          cl::init("-"), cl::cat(kilnCategory));
static cl::opt<std::string>
    outputFilename("o",
                   cl::desc("Output module (default: the input's name with "
                            ".vmfb, or out.vmfb for stdin; '-' for stdout)"),
                   cl::value_desc("file"), cl::cat(kilnCategory));
// --target and the targets' own flags are made from the target registry
// (addTargetFlags): kiln-compile names no target.
static cl::opt<std::string> targetList("target", cl::value_desc("t1,t2"),
                                       cl::cat(kilnCategory));
static cl::opt<unsigned> gpuOptLevel(
    "gpu-opt-level",
    cl::desc("LLVM optimization level of rocm and cuda kernels (0-3)"),
    cl::init(3), cl::cat(kilnCategory));
static cl::opt<std::string> gpuStageRows(
    "gpu-stage-rows",
    cl::desc("Rows that a row kernel (softmax, layernorm) holds between its "
             "ops, in shared memory instead of registers: auto (when that "
             "lets more workgroups share an SM/CU; default), always "
             "(tests the shared-memory form), never"),
    cl::value_desc("auto|always|never"), cl::init("auto"),
    cl::cat(kilnCategory));
enum class CompileMode { Program, Executable };
static cl::opt<CompileMode> compileMode(
    "compile-mode", cl::desc("What the input holds"),
    cl::values(clEnumValN(CompileMode::Program, "program",
                          "a tensor program (default)"),
               clEnumValN(CompileMode::Executable, "executable",
                          "kiln.executable ops only, compiled as they are "
                          "(tests; kernels may be pre-lowered llvm.func)")),
    cl::init(CompileMode::Program), cl::cat(kilnCategory));
static cl::opt<int64_t> collectiveKernelMaxBytes(
    "collective-kernel-max-bytes",
    cl::desc("all_reduce, all_gather and reduce_scatter of at most N bytes "
             "per rank run as kernels over symmetric windows instead of "
             "library calls (default: 1048576 for --target=host; for rocm "
             "and cuda only the reductions NCCL/RCCL lack until their "
             "threshold is measured on several GPUs); bitwise, i1 and (on "
             "GPU targets) i16 reductions are kernels at any size; 0: no "
             "kernels at all"),
    cl::value_desc("N"), cl::init(1 << 20), cl::cat(kilnCategory));
static cl::opt<int64_t> collectiveTwoShotMinBytes(
    "collective-two-shot-min-bytes",
    cl::desc("compiled all_reduces over more than 2 ranks of at least N "
             "bytes per rank run two-shot: a reduce_scatter, then an "
             "all_gather (default 0: never; one-shot was faster at every "
             "size on one GPU)"),
    cl::value_desc("N"), cl::init(0), cl::cat(kilnCategory));
static cl::opt<std::string> dumpIntermediates(
    "dump-intermediates",
    cl::desc("Write the program after each phase to DIR/NN-<phase>.mlir and "
             "each executable's codegen stages and binary to DIR/<executable>/"),
    cl::value_desc("DIR"), cl::cat(kilnCategory));
static cl::opt<std::string> parametersFile(
    "parameters",
    cl::desc("Parameter archive (safetensors, or numpy .npz as np.savez "
             "and np.savez_compressed write it) holding the tensors that "
             "function arguments marked {kiln.parameter = \"name\"} stand "
             "for; they become read-only data of the module"),
    cl::value_desc("FILE.safetensors|FILE.npz"), cl::cat(kilnCategory));
static cl::opt<std::string> parameterMode(
    "parameter-mode",
    cl::desc("When kiln.parameter arguments get their tensors: 'compile' "
             "(default: from --parameters, into the module) or 'load' (the "
             "module names them and the runtime reads them when it loads "
             "the module: kiln-run --parameters=FILE; --parameters is then "
             "only checked against them)"),
    cl::value_desc("compile|load"), cl::init("compile"),
    cl::cat(kilnCategory));
static cl::opt<std::string>
    moduleName("module-name",
               cl::desc("Name stored in the module (default: input stem)"),
               cl::value_desc("name"), cl::cat(kilnCategory));
static cl::opt<bool> verbose("v", cl::desc("Print progress and the time of each phase to stderr"),
                             cl::cat(kilnCategory));

// One flag a target owns, as a command-line option of its kind, and its
// value as kiln-compile flag text.
struct TargetFlag {
  std::unique_ptr<cl::Option> option;
  std::function<std::string()> value;
};

static std::vector<TargetFlag> &getTargetFlags() {
  static std::vector<TargetFlag> flags;
  return flags;
}

template <typename T>
static TargetFlag makeTargetFlag(const kiln::TargetOption &spec, T init,
                                 std::function<std::string(const T &)> text) {
  auto option = std::make_unique<cl::opt<T>>(
      StringRef(spec.name), cl::desc(spec.help), cl::init(init),
      cl::cat(kilnCategory));
  if (!spec.valueName.empty())
    option->setValueStr(spec.valueName);
  cl::opt<T> *raw = option.get();
  return {std::move(option), [raw, text] { return text(raw->getValue()); }};
}

// Makes --target's help and one option per flag of the registered targets.
static void addTargetFlags(const kiln::TargetRegistry &registry) {
  static std::string targetHelp =
      "Comma-separated targets the module is compiled for: " +
      registry.getTargetNames() + " (default: " +
      registry.getDefaultTarget().str() + ")";
  targetList.setDescription(targetHelp);
  for (const kiln::TargetInfo &target : registry.getTargets()) {
    for (const kiln::TargetOption &spec : target.options) {
      using Kind = kiln::TargetOption::Kind;
      const kiln::TargetOptionValue &init = spec.defaultValue;
      switch (spec.kind) {
      case Kind::StringList:
        getTargetFlags().push_back(makeTargetFlag<std::string>(
            spec, llvm::join(std::get<std::vector<std::string>>(init), ","),
            [](const std::string &value) { return value; }));
        break;
      case Kind::String:
        getTargetFlags().push_back(makeTargetFlag<std::string>(
            spec, std::get<std::string>(init),
            [](const std::string &value) { return value; }));
        break;
      case Kind::Bool:
        getTargetFlags().push_back(makeTargetFlag<bool>(
            spec, std::get<bool>(init),
            [](const bool &value) { return value ? "1" : "0"; }));
        break;
      case Kind::Level:
        getTargetFlags().push_back(makeTargetFlag<unsigned>(
            spec, std::get<unsigned>(init),
            [](const unsigned &value) { return std::to_string(value); }));
        break;
      }
    }
  }
}

// The compile options of the command line, as kiln-compile flags for the
// library's parser (one parser and one set of messages for the tool and the
// C API); options left at their defaults are not passed.
static FailureOr<kiln::CompileOptions> parseCompileOptions() {
  std::vector<std::string> flags;
  auto add = [&](cl::Option &option, std::string value) {
    if (option.getNumOccurrences())
      flags.push_back(("--" + option.ArgStr + "=").str() + value);
  };
  add(targetList, targetList);
  for (TargetFlag &flag : getTargetFlags())
    add(*flag.option, flag.value());
  add(gpuOptLevel, std::to_string(gpuOptLevel));
  add(gpuStageRows, gpuStageRows);
  add(collectiveKernelMaxBytes, std::to_string(collectiveKernelMaxBytes));
  add(collectiveTwoShotMinBytes, std::to_string(collectiveTwoShotMinBytes));
  add(dumpIntermediates, dumpIntermediates);
  add(parametersFile, parametersFile);
  add(parameterMode, parameterMode);
  kiln::CompileOptions options;
  std::string error;
  if (failed(kiln::parseCompileFlags(flags, options, error))) {
    llvm::errs() << "kiln-compile: error: " << error << "\n";
    return failure();
  }
  options.executablesOnly = compileMode == CompileMode::Executable;
  return options;
}

static std::string getDefaultOutputName() {
  if (inputFilename == "-")
    return "out.vmfb";
  SmallString<256> path(inputFilename);
  llvm::sys::path::replace_extension(path, "vmfb");
  return std::string(path);
}

static std::string getCompileFlags(int argc, char **argv) {
  std::string flags;
  for (int i = 1; i < argc; ++i) {
    if (i > 1)
      flags += ' ';
    flags += argv[i];
  }
  return flags;
}

// IREE users' flags get a pointer to Kiln's equivalents instead of LLVM's
// "Unknown command line argument".
static bool reportIreeFlags(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    StringRef arg(argv[i]);
    if (!arg.starts_with("--iree-") && !arg.starts_with("-iree-"))
      continue;
    llvm::errs()
        << "kiln-compile: error: '" << arg
        << "' is an IREE flag; kiln-compile's own: --target=rocm,cuda,host "
           "(for --iree-hal-target-backends / --iree-hal-target-device), "
           "--rocm-chip=gfx942 (for --iree-hip-target / "
           "--iree-rocm-target-chip), --cuda-chip=sm_90 (for "
           "--iree-cuda-target); see kiln-compile --help\n";
    return true;
  }
  return false;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  if (reportIreeFlags(argc, argv))
    return 1;
  // A crash is Kiln's bug, not the user's: say so first, then LLVM's stack
  // dump for the report.
  llvm::setBugReportMsg(
      "kiln-compile: internal compiler error (a crash in Kiln or in MLIR/LLVM "
      "code it called), not a problem with your program's syntax. Please "
      "report it with the input file and the command line below.\n");
  addTargetFlags(kiln::TargetRegistry::getGlobal());
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  // libLLVM registers hundreds of backend options; --help shows only Kiln's
  // and MLIR's (IR printing, pass timing, ...). --help-hidden shows all.
  static cl::OptionCategory mlirCategory("MLIR options");
  for (auto &entry : cl::getRegisteredOptions())
    if (entry.first.starts_with("mlir-"))
      entry.second->addCategory(mlirCategory);
  cl::HideUnrelatedOptions({&kilnCategory, &mlirCategory});
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << KILN_VERSION_TEXT << "\nLLVM " << LLVM_VERSION_STRING << "\n";
  });
  cl::ParseCommandLineOptions(
      argc, argv,
      "Kiln compiler: compiles an MLIR tensor program to a .vmfb module\n\n"
      "  kiln-compile model.mlir --target=host -o model.vmfb\n"
      "  kiln-compile model.mlir --target=rocm,cuda,host "
      "--rocm-chip=gfx942,gfx1100 --cuda-chip=sm_90\n\n"
      "The input is one MLIR file of public func.func functions over "
      "static-shape tensors\n(i1, i8, i16, i32, i64, f16, bf16, f32, f64) "
      "using linalg, tensor, arith, math\nand tosa ops. Each public function "
      "becomes a module function; run it with\nkiln-run and inspect the "
      "module with kiln-dump.\n");

  FailureOr<kiln::CompileOptions> options = parseCompileOptions();
  if (failed(options))
    return 1;

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << "kiln-compile: error: " << error << "\n";
    return 1;
  }
  kiln::ModuleWriterOptions &writerOptions = options->writer;
  writerOptions.sourceDigest = kiln::computeSourceDigest(input->getBuffer());
  writerOptions.compileFlags = getCompileFlags(argc, argv);
  writerOptions.name =
      !moduleName.empty()
          ? std::string(moduleName)
          : (inputFilename == "-"
                 ? std::string("module")
                 : std::string(llvm::sys::path::stem(inputFilename)));

  DialectRegistry registry;
  kiln::registerKilnCompilerDialects(registry);
  MLIRContext context(registry);
  // Users read diagnostics against their own source; the generic form of the
  // failing op is noise unless asked for with --mlir-print-op-on-diagnostic.
  if (cl::getRegisteredOptions()["mlir-print-op-on-diagnostic"]
          ->getNumOccurrences() == 0)
    context.printOpOnDiagnostic(false);

  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  // SourceMgrDiagnosticHandler with its printing reachable from the handler
  // below.
  struct Diagnostics : SourceMgrDiagnosticHandler {
    using SourceMgrDiagnosticHandler::SourceMgrDiagnosticHandler;
    void print(Diagnostic &diagnostic) { emitDiagnostic(diagnostic); }
  } diagnostics(sourceMgr, &context);

  // The parser stops at its first error, but some upstream op parsers go on
  // to use what failed to parse (LLVM 22: linalg.reduce with a malformed
  // `dimensions =` dereferences a null attribute). The first parse error is
  // therefore the end of this compile: printed, then exit status 1.
  bool parsing = true;
  DiagnosticEngine::HandlerID stopAtParseError =
      context.getDiagEngine().registerHandler([&](Diagnostic &diagnostic) {
        if (!parsing || diagnostic.getSeverity() != DiagnosticSeverity::Error)
          return failure(); // the source manager handler prints it
        diagnostics.print(diagnostic);
        llvm::errs().flush();
        std::_Exit(1);
      });
  OwningOpRef<ModuleOp> module = kiln::parseKilnProgram(sourceMgr, context);
  parsing = false;
  context.getDiagEngine().eraseHandler(stopAtParseError);
  if (!module)
    return 1;

  // In-process lld (host codegen) resets every cl::opt of the process to its
  // default, so option values are read before codegen runs, and codegen runs
  // after the pass pipelines that apply the pass manager options.
  std::string outputPath =
      outputFilename.empty() ? getDefaultOutputName() : outputFilename;
  bool beVerbose = verbose;

  kiln::CompileHooks hooks;
  hooks.runPhase = [](PassManager &pm, function_ref<LogicalResult()> run) {
    if (failed(applyPassManagerCLOptions(pm)))
      return failure();
    DefaultTimingManager timing;
    applyDefaultTimingManagerCLOptions(timing);
    TimingScope timingScope = timing.getRootScope();
    pm.enableTiming(timingScope);
    return run();
  };
  if (beVerbose)
    hooks.progress = [](const Twine &message) {
      llvm::errs() << "kiln-compile: " << message << "\n";
    };
  // Written once the whole compile succeeded: a failed compile leaves no
  // output file.
  std::string bytes;
  llvm::raw_string_ostream stream(bytes);
  if (failed(kiln::compileProgram(*module, *options, hooks, stream)))
    return 1;

  auto output = openOutputFile(outputPath, &error);
  if (!output) {
    llvm::errs() << "kiln-compile: error: " << error << "\n";
    return 1;
  }
  output->os() << bytes;
  output->keep();
  if (beVerbose)
    llvm::errs() << "kiln-compile: wrote " << outputPath << "\n";
  return 0;
}
