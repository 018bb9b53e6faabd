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

#include "kiln/Codegen/CrashContext.h"
#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/HostLowering/ModuleWriter.h"
#include "kiln/Pipelines/Frontend.h"
#include "kiln/Pipelines/Pipelines.h"
#include "kiln/Target/CUDA/CUDATarget.h"
#include "kiln/Target/Host/HostTarget.h"
#include "kiln/Target/ROCM/ROCMTarget.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ErrorHandling.h"
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
static cl::opt<std::string>
    targetList("target",
               cl::desc("Comma-separated targets the module is compiled for: "
                        "host, rocm, cuda (default: host)"),
               cl::value_desc("t1,t2"), cl::init("host"), cl::cat(kilnCategory));
static cl::opt<std::string> rocmChipList(
    "rocm-chip",
    cl::desc("Comma-separated AMD chips of --target=rocm, one HSACO each "
             "(default: gfx942)"),
    cl::value_desc("gfx942,gfx1100"), cl::init("gfx942"), cl::cat(kilnCategory));
static cl::opt<std::string> cudaChipList(
    "cuda-chip",
    cl::desc("Comma-separated NVIDIA chips of --target=cuda, one PTX each "
             "(default: sm_90)"),
    cl::value_desc("sm_80,sm_90"), cl::init("sm_90"), cl::cat(kilnCategory));
static cl::opt<std::string> rocmDeviceLibs(
    "rocm-device-libs",
    cl::desc("Directory holding AMD device-library bitcode (ocml.bc, "
             "ockl.bc); default: the usual install places"),
    cl::value_desc("DIR"), cl::cat(kilnCategory));
static cl::opt<bool> rocmMatrixCores(
    "rocm-matrix-cores",
    cl::desc("Use MFMA (gfx90a/942/950) and WMMA (gfx11) for f16 matmuls. "
             "Experimental: verified at the ISA level only"),
    cl::init(false), cl::cat(kilnCategory));
static cl::opt<unsigned> gpuOptLevel(
    "gpu-opt-level",
    cl::desc("LLVM optimization level of rocm and cuda kernels (0-3)"),
    cl::init(3), cl::cat(kilnCategory));
enum class CompileMode { Program, Executable };
static cl::opt<CompileMode> compileMode(
    "compile-mode", cl::desc("What the input holds"),
    cl::values(clEnumValN(CompileMode::Program, "program",
                          "a tensor program (default)"),
               clEnumValN(CompileMode::Executable, "executable",
                          "kiln.executable ops only, compiled as they are "
                          "(tests; kernels may be pre-lowered llvm.func)")),
    cl::init(CompileMode::Program), cl::cat(kilnCategory));
static cl::opt<std::string>
    hostCpu("host-cpu",
            cl::desc("LLVM CPU name for --target=host kernels, e.g. x86-64, "
                     "x86-64-v3, znver4, native"),
            cl::value_desc("cpu"), cl::init("x86-64"), cl::cat(kilnCategory));
static cl::opt<std::string> hostFeatures(
    "host-features", cl::desc("Extra LLVM target features for --target=host"),
    cl::value_desc("+feat,-feat"), cl::init(""), cl::cat(kilnCategory));
static cl::opt<unsigned> hostOptLevel(
    "host-opt-level", cl::desc("LLVM optimization level of host kernels (0-3)"),
    cl::init(3), cl::cat(kilnCategory));
static cl::opt<std::string> dumpIntermediates(
    "dump-intermediates",
    cl::desc("Write the program after each phase to DIR/NN-<phase>.mlir and "
             "each executable's codegen stages and binary to DIR/<executable>/"),
    cl::value_desc("DIR"), cl::cat(kilnCategory));
static cl::opt<std::string>
    moduleName("module-name",
               cl::desc("Name stored in the module (default: input stem)"),
               cl::value_desc("name"), cl::cat(kilnCategory));
static cl::opt<bool> verbose("v", cl::desc("Print progress to stderr"),
                             cl::cat(kilnCategory));

namespace {

enum class Target { Host, ROCM, CUDA };

// What to compile executables for, read from the command line before any
// codegen runs (in-process lld resets cl::opt values).
struct TargetOptions {
  SmallVector<Target> targets;
  kiln::HostTargetOptions host;
  kiln::ROCMTargetOptions rocm;
  kiln::CUDATargetOptions cuda;
};

class Compiler {
public:
  Compiler(MLIRContext &context, ModuleOp module, TargetOptions targetOptions)
      : context(context), module(module), verbose(::verbose),
        dumpDir(dumpIntermediates), options(std::move(targetOptions)) {}

  LogicalResult runPhase(StringRef name,
                         function_ref<void(OpPassManager &)> build);
  LogicalResult compileExecutables(kiln::ExecutableBinaryMap &binaries);

private:
  LogicalResult dump(StringRef name);
  void progress(const Twine &message) {
    if (verbose)
      llvm::errs() << "kiln-compile: " << message << "\n";
  }

  MLIRContext &context;
  ModuleOp module;
  bool verbose;
  std::string dumpDir;
  TargetOptions options;
  unsigned phaseCount = 0;
};

} // namespace

LogicalResult Compiler::dump(StringRef name) {
  if (dumpDir.empty())
    return success();
  SmallString<256> path(dumpDir);
  llvm::sys::path::append(path,
                          llvm::formatv("{0:D2}-{1}.mlir", phaseCount, name).str());
  std::string error;
  auto file = openOutputFile(path, &error);
  if (!file)
    return emitError(UnknownLoc::get(&context))
           << "cannot write " << path << ": " << error;
  module.print(file->os());
  file->keep();
  return success();
}

LogicalResult Compiler::runPhase(StringRef name,
                                 function_ref<void(OpPassManager &)> build) {
  ++phaseCount;
  progress("phase " + name);
  PassManager pm(&context, ModuleOp::getOperationName());
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  kiln::addCrashContext(pm);
  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  TimingScope timingScope = timing.getRootScope();
  pm.enableTiming(timingScope);
  build(pm);
  if (failed(pm.run(module)))
    return failure();
  return dump(name);
}

LogicalResult Compiler::compileExecutables(kiln::ExecutableBinaryMap &binaries) {
  ++phaseCount;
  for (auto executable : module.getOps<kiln::ExecutableOp>()) {
    std::string executableDumpDir;
    if (!dumpDir.empty()) {
      SmallString<256> dir(dumpDir);
      llvm::sys::path::append(dir, executable.getSymName());
      if (std::error_code ec = llvm::sys::fs::create_directories(dir))
        return executable.emitError("cannot create ")
               << dir << ": " << ec.message();
      executableDumpDir = std::string(dir);
    }
    std::vector<kiln::ExecutableVariantBinary> &variants =
        binaries[executable.getSymName()];
    for (Target target : options.targets) {
      switch (target) {
      case Target::Host: {
        progress("codegen " + executable.getSymName() + " for host");
        kiln::HostTargetOptions hostOptions = options.host;
        hostOptions.dumpDir = executableDumpDir;
        FailureOr<kiln::HostExecutableBinary> binary =
            kiln::compileExecutableForHost(executable, hostOptions);
        if (failed(binary))
          return failure();
        variants.push_back(kiln::makeHostVariant(std::move(*binary)));
        break;
      }
      case Target::ROCM: {
        progress("codegen " + executable.getSymName() + " for rocm:" +
                 llvm::join(options.rocm.chips, ","));
        kiln::ROCMTargetOptions rocmOptions = options.rocm;
        rocmOptions.dumpDir = executableDumpDir;
        FailureOr<std::vector<kiln::ROCMExecutableBinary>> chipBinaries =
            kiln::compileExecutableForROCM(executable, rocmOptions);
        if (failed(chipBinaries))
          return failure();
        for (kiln::ROCMExecutableBinary &binary : *chipBinaries)
          variants.push_back(kiln::makeROCMVariant(std::move(binary)));
        break;
      }
      case Target::CUDA: {
        progress("codegen " + executable.getSymName() + " for cuda:" +
                 llvm::join(options.cuda.chips, ","));
        kiln::CUDATargetOptions cudaOptions = options.cuda;
        cudaOptions.dumpDir = executableDumpDir;
        FailureOr<std::vector<kiln::CUDAExecutableBinary>> chipBinaries =
            kiln::compileExecutableForCUDA(executable, cudaOptions);
        if (failed(chipBinaries))
          return failure();
        for (kiln::CUDAExecutableBinary &binary : *chipBinaries)
          variants.push_back(kiln::makeCUDAVariant(std::move(binary)));
        break;
      }
      }
    }
  }
  return success();
}

// Splits a comma-separated option value; an empty item (",," or a trailing
// comma) or a repeated one is an error naming the option.
static FailureOr<std::vector<std::string>> splitList(StringRef option,
                                                     StringRef value) {
  std::vector<std::string> items;
  SmallVector<StringRef> parts;
  value.split(parts, ',');
  for (StringRef part : parts) {
    StringRef item = part.trim();
    if (item.empty()) {
      llvm::errs() << "kiln-compile: error: --" << option << "='" << value
                   << "' has an empty item\n";
      return failure();
    }
    if (llvm::is_contained(items, item)) {
      llvm::errs() << "kiln-compile: error: --" << option << " lists '"
                   << item << "' twice\n";
      return failure();
    }
    items.push_back(item.str());
  }
  return items;
}

// Reads every target option; prints the error and fails on an unknown
// target or chip.
static FailureOr<TargetOptions> parseTargetOptions() {
  TargetOptions options;
  FailureOr<std::vector<std::string>> targets = splitList("target", targetList);
  if (failed(targets))
    return failure();
  for (const std::string &name : *targets) {
    std::optional<Target> target =
        llvm::StringSwitch<std::optional<Target>>(name)
            .Case("host", Target::Host)
            .Case("rocm", Target::ROCM)
            .Case("cuda", Target::CUDA)
            .Default(std::nullopt);
    if (!target) {
      llvm::errs() << "kiln-compile: error: unsupported target '" << name
                   << "'; supported targets: host, rocm, cuda\n";
      return failure();
    }
    options.targets.push_back(*target);
  }
  options.host.cpu = hostCpu;
  options.host.features = hostFeatures;
  options.host.optLevel = hostOptLevel;
  if (gpuOptLevel > 3) {
    llvm::errs() << "kiln-compile: error: --gpu-opt-level must be 0 to 3\n";
    return failure();
  }
  bool wantsROCM = llvm::is_contained(options.targets, Target::ROCM);
  bool wantsCUDA = llvm::is_contained(options.targets, Target::CUDA);
  if (!wantsROCM && rocmChipList.getNumOccurrences()) {
    llvm::errs() << "kiln-compile: error: --rocm-chip needs --target=rocm\n";
    return failure();
  }
  if (!wantsCUDA && cudaChipList.getNumOccurrences()) {
    llvm::errs() << "kiln-compile: error: --cuda-chip needs --target=cuda\n";
    return failure();
  }
  FailureOr<std::vector<std::string>> rocmChips =
      splitList("rocm-chip", rocmChipList);
  FailureOr<std::vector<std::string>> cudaChips =
      splitList("cuda-chip", cudaChipList);
  if (failed(rocmChips) || failed(cudaChips))
    return failure();
  options.rocm.chips = std::move(*rocmChips);
  options.rocm.optLevel = gpuOptLevel;
  options.rocm.deviceLibsDir = rocmDeviceLibs;
  options.rocm.matrixCores = rocmMatrixCores;
  options.cuda.chips = std::move(*cudaChips);
  options.cuda.optLevel = gpuOptLevel;
  if (llvm::Error error = kiln::verifyROCMChips(options.rocm.chips)) {
    llvm::errs() << "kiln-compile: error: --rocm-chip: "
                 << llvm::toString(std::move(error)) << "\n";
    return failure();
  }
  if (llvm::Error error = kiln::verifyCUDAChips(options.cuda.chips)) {
    llvm::errs() << "kiln-compile: error: --cuda-chip: "
                 << llvm::toString(std::move(error)) << "\n";
    return failure();
  }
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

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  // A crash is Kiln's bug, not the user's: say so first, then LLVM's stack
  // dump for the report.
  llvm::setBugReportMsg(
      "kiln-compile: internal compiler error (a crash in Kiln or in MLIR/LLVM "
      "code it called), not a problem with your program's syntax. Please "
      "report it with the input file and the command line below.\n");
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

  FailureOr<TargetOptions> targetOptions = parseTargetOptions();
  if (failed(targetOptions))
    return 1;

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << "kiln-compile: error: " << error << "\n";
    return 1;
  }
  kiln::ModuleWriterOptions writerOptions;
  writerOptions.sourceDigest = kiln::computeSourceDigest(input->getBuffer());
  writerOptions.compileFlags = getCompileFlags(argc, argv);
  writerOptions.name =
      !moduleName.empty()
          ? std::string(moduleName)
          : (inputFilename == "-"
                 ? std::string("module")
                 : std::string(llvm::sys::path::stem(inputFilename)));

  if (!dumpIntermediates.empty())
    if (std::error_code ec =
            llvm::sys::fs::create_directories(dumpIntermediates)) {
      llvm::errs() << "kiln-compile: error: cannot create "
                   << dumpIntermediates << ": " << ec.message() << "\n";
      return 1;
    }

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

  // Collectives of modules for GPU targets run on NCCL/RCCL.
  bool gpuTargets = llvm::any_of(targetOptions->targets, [](Target target) {
    return target == Target::ROCM || target == Target::CUDA;
  });
  Compiler compiler(context, *module, std::move(*targetOptions));
  kiln::ExecutableBinaryMap binaries;
  if (compileMode == CompileMode::Executable) {
    for (Operation &op : module->getBody()->getOperations())
      if (!isa<kiln::ExecutableOp>(op)) {
        op.emitError("--compile-mode=executable expects only kiln.executable "
                     "ops, found '")
            << op.getName() << "'";
        return 1;
      }
  } else if (failed(compiler.runPhase(
                 "input",
                 [&](OpPassManager &pm) {
                   kiln::InputPipelineOptions input;
                   input.gpuCollectives = gpuTargets;
                   kiln::buildKilnInputPipeline(pm, input);
                 })) ||
             failed(compiler.runPhase(
                 "dispatch-creation",
                 kiln::buildKilnDispatchCreationPipeline)) ||
             failed(compiler.runPhase("host-lowering",
                                      kiln::buildKilnHostLoweringPipeline))) {
    return 1;
  }
  if (failed(compiler.compileExecutables(binaries)))
    return 1;

  auto output = openOutputFile(outputPath, &error);
  if (!output) {
    llvm::errs() << "kiln-compile: error: " << error << "\n";
    return 1;
  }
  if (failed(kiln::writeModule(*module, binaries, writerOptions, output->os())))
    return 1;
  output->keep();
  if (beVerbose)
    llvm::errs() << "kiln-compile: wrote " << outputPath << "\n";
  return 0;
}
