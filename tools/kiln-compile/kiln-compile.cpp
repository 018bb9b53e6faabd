//===- kiln-compile.cpp - Compile a tensor program to a .vmfb module ------===//
//
//   kiln-compile in.mlir --target=host -o out.vmfb
//
// Phases: input conversion -> dispatch creation -> kernel codegen per
// executable -> host lowering -> module serialization. Every failure is a
// located diagnostic and a non-zero exit status.
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/HostLowering/ModuleWriter.h"
#include "kiln/Pipelines/Pipelines.h"
#include "kiln/Target/Host/HostTarget.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
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
    target("target",
           cl::desc("Device the module is compiled for (supported: host)"),
           cl::value_desc("name"), cl::init("host"), cl::cat(kilnCategory));
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

class Compiler {
public:
  Compiler(MLIRContext &context, ModuleOp module)
      : context(context), module(module), verbose(::verbose),
        dumpDir(dumpIntermediates), hostOptions(makeHostOptions()) {}

  LogicalResult runPhase(StringRef name,
                         function_ref<void(OpPassManager &)> build);
  LogicalResult compileExecutables(kiln::HostBinaryMap &binaries);

private:
  LogicalResult dump(StringRef name);
  void progress(const Twine &message) {
    if (verbose)
      llvm::errs() << "kiln-compile: " << message << "\n";
  }

  static kiln::HostTargetOptions makeHostOptions() {
    kiln::HostTargetOptions options;
    options.cpu = hostCpu;
    options.features = hostFeatures;
    options.optLevel = hostOptLevel;
    return options;
  }

  MLIRContext &context;
  ModuleOp module;
  bool verbose;
  std::string dumpDir;
  kiln::HostTargetOptions hostOptions;
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
  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  TimingScope timingScope = timing.getRootScope();
  pm.enableTiming(timingScope);
  build(pm);
  if (failed(pm.run(module)))
    return failure();
  return dump(name);
}

LogicalResult Compiler::compileExecutables(kiln::HostBinaryMap &binaries) {
  ++phaseCount;
  for (auto executable : module.getOps<kiln::ExecutableOp>()) {
    progress("codegen " + executable.getSymName() + " for host");
    kiln::HostTargetOptions options = hostOptions;
    if (!dumpDir.empty()) {
      SmallString<256> dir(dumpDir);
      llvm::sys::path::append(dir, executable.getSymName());
      if (std::error_code ec = llvm::sys::fs::create_directories(dir))
        return executable.emitError("cannot create ")
               << dir << ": " << ec.message();
      options.dumpDir = std::string(dir);
    }
    FailureOr<kiln::HostExecutableBinary> binary =
        kiln::compileExecutableForHost(executable, options);
    if (failed(binary))
      return failure();
    binaries[executable.getSymName()] = std::move(*binary);
  }
  return success();
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
      "  kiln-compile model.mlir --target=host -o model.vmfb\n\n"
      "The input is one MLIR file of public func.func functions over "
      "static-shape tensors\n(i1, i8, i16, i32, i64, f16, bf16, f32, f64) "
      "using linalg, tensor, arith, math\nand tosa ops. Each public function "
      "becomes a module function; run it with\nkiln-run and inspect the "
      "module with kiln-dump.\n");

  if (target != "host") {
    llvm::errs() << "kiln-compile: error: unsupported target '" << target
                 << "'; supported targets: host\n";
    return 1;
  }

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
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registry.insert<kiln::KilnDialect>();
  MLIRContext context(registry);
  // Users read diagnostics against their own source; the generic form of the
  // failing op is noise unless asked for with --mlir-print-op-on-diagnostic.
  if (cl::getRegisteredOptions()["mlir-print-op-on-diagnostic"]
          ->getNumOccurrences() == 0)
    context.printOpOnDiagnostic(false);

  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  // In-process lld (host codegen) resets every cl::opt of the process to its
  // default, so option values are read before codegen runs, and codegen runs
  // after the pass pipelines that apply the pass manager options.
  std::string outputPath =
      outputFilename.empty() ? getDefaultOutputName() : outputFilename;
  bool beVerbose = verbose;

  Compiler compiler(context, *module);
  kiln::HostBinaryMap binaries;
  if (failed(compiler.runPhase("input", kiln::buildKilnInputPipeline)) ||
      failed(compiler.runPhase("dispatch-creation",
                               kiln::buildKilnDispatchCreationPipeline)) ||
      failed(compiler.runPhase("host-lowering",
                               kiln::buildKilnHostLoweringPipeline)) ||
      failed(compiler.compileExecutables(binaries)))
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
