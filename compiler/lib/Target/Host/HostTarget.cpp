//===- HostTarget.cpp - Host (x86-64) executable compilation --------------===//
//
// Tensor kernels of a kiln.executable -> host codegen pipeline (LLVM
// dialect) -> LLVM IR -> O3 -> x86-64 PIC object -> lld -> shared object.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/Host/HostTarget.h"

#include "SharedObjectLinker.h"
#include "kiln/Codegen/CrashContext.h"
#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/StringExtras.h"
#include "module_constants.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <mutex>

using namespace mlir;
using namespace mlir::kiln;

namespace {

constexpr llvm::StringLiteral kHostTriple = "x86_64-unknown-linux-gnu";

// Writes the numbered files of --dump-intermediates for one executable.
class DumpWriter {
public:
  DumpWriter(StringRef dir, StringRef executableName)
      : dir(dir.str()), prefix(executableName.str()) {}

  bool enabled() const { return !dir.empty(); }

  // Writes `<dir>/<executable>.<NN>.<what>` and returns failure (after a
  // diagnostic at `loc`) when the file cannot be written.
  LogicalResult write(Location loc, StringRef what,
                      llvm::function_ref<void(llvm::raw_ostream &)> print) {
    if (!enabled())
      return success();
    if (std::error_code ec = llvm::sys::fs::create_directories(dir))
      return emitError(loc) << "cannot create dump directory '" << dir
                            << "': " << ec.message();
    SmallString<256> path(dir);
    std::string number = std::to_string(counter++);
    if (number.size() < 2)
      number.insert(0, "0");
    llvm::sys::path::append(path, prefix + "." + number + "." + what.str());
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      return emitError(loc) << "cannot write '" << path << "': "
                            << ec.message();
    print(os);
    return success();
  }

private:
  std::string dir;
  std::string prefix;
  unsigned counter = 0;
};

// Rejects what the host pipeline cannot compile, at the offending op.
// A compiled collective's kernel (kiln-compile-collectives): it arrives on
// buffers, so the tile, bufferize and vectorize stages do not apply to it.
bool isCollectiveKernel(func::FuncOp func) {
  return !func.getOps<WindowCollectiveOp>().empty();
}

LogicalResult verifyKernel(func::FuncOp func) {
  auto isSupportedElement = [](Type t) {
    return t.isInteger(1) || t.isInteger(8) || t.isInteger(16) ||
           t.isInteger(32) || t.isInteger(64) ||
           isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(t);
  };
  auto checkType = [&](Location loc, Type type) -> LogicalResult {
    auto shaped = dyn_cast<ShapedType>(type);
    if (!shaped)
      return success();
    if (!shaped.hasStaticShape())
      return emitError(loc) << "host target: dynamic shapes are not "
                               "supported, found "
                            << type;
    if (!isSupportedElement(shaped.getElementType()))
      return emitError(loc) << "host target: unsupported element type "
                            << shaped.getElementType() << " in " << type
                            << " (supported: i1, i8, i16, i32, i64, f16, "
                               "bf16, f32, f64)";
    return success();
  };
  if (func.isExternal())
    return func.emitError() << "host target: kernel '" << func.getSymName()
                            << "' has no body";
  if (!func.getBody().hasOneBlock())
    return func.emitError() << "host target: kernel '" << func.getSymName()
                            << "' has control flow (more than one block)";
  // A compiled collective's kernel is on buffers already (its op verifies
  // them).
  if (isCollectiveKernel(func))
    return success();
  for (Type t : func.getArgumentTypes())
    if (failed(checkType(func.getLoc(), t)) ||
        !isa<RankedTensorType>(t))
      return isa<RankedTensorType>(t)
                 ? failure()
                 : func.emitError() << "host target: kernel arguments must be "
                                       "ranked tensors, found "
                                    << t;
  for (Type t : func.getResultTypes())
    if (failed(checkType(func.getLoc(), t)) ||
        !isa<RankedTensorType>(t))
      return isa<RankedTensorType>(t)
                 ? failure()
                 : func.emitError() << "host target: kernel results must be "
                                       "ranked tensors, found "
                                    << t;
  WalkResult walk = func.walk([&](Operation *op) {
    for (Type t : op->getResultTypes())
      if (failed(checkType(op->getLoc(), t)))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

llvm::TargetMachine *getOrCreateTargetMachine(Location loc,
                                              const HostTargetOptions &options,
                                              std::unique_ptr<llvm::TargetMachine> &owner) {
  static std::once_flag initFlag;
  std::call_once(initFlag, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    LLVMInitializeX86AsmParser();
  });
  llvm::Triple triple(kHostTriple);
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    emitError(loc) << "host target: no LLVM x86-64 backend: " << error;
    return nullptr;
  }
  llvm::CodeGenOptLevel level = llvm::CodeGenOptLevel::Aggressive;
  if (options.optLevel == 0)
    level = llvm::CodeGenOptLevel::None;
  else if (options.optLevel == 1)
    level = llvm::CodeGenOptLevel::Less;
  else if (options.optLevel == 2)
    level = llvm::CodeGenOptLevel::Default;
  llvm::TargetOptions targetOptions;
  // LLVM's x86 backend does not know "native": ask the host what it is.
  std::string cpu = options.cpu;
  std::string features = options.features;
  if (cpu == "native") {
    cpu = llvm::sys::getHostCPUName().str();
    SmallVector<std::string> hostFeatures;
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      hostFeatures.push_back((feature.second ? "+" : "-") +
                             feature.first().str());
    llvm::sort(hostFeatures);
    if (!features.empty())
      hostFeatures.push_back(features); // Explicit features win (last).
    features = llvm::join(hostFeatures, ",");
  }
  // An unknown CPU name is a fatal error deep in LLVM: check it first.
  {
    std::unique_ptr<llvm::MCSubtargetInfo> info(
        target->createMCSubtargetInfo(triple, "", ""));
    if (!info || !info->isCPUStringValid(cpu)) {
      std::string known;
      if (info)
        for (const llvm::SubtargetSubTypeKV &kv :
             info->getAllProcessorDescriptions())
          known += (known.empty() ? "" : ", ") + std::string(kv.Key);
      emitError(loc) << "host target: unknown CPU '" << options.cpu
                     << "' (--host-cpu); use 'native' for this machine or one "
                        "of: "
                     << known;
      return nullptr;
    }
  }
  owner.reset(target->createTargetMachine(triple, cpu, features, targetOptions,
                                          llvm::Reloc::PIC_, std::nullopt,
                                          level));
  if (!owner)
    emitError(loc) << "host target: cannot create a target machine for cpu '"
                   << options.cpu << "' features '" << options.features << "'";
  return owner.get();
}

// SIMD register bits to vectorize for: what the CPU has, unless its LLVM
// tuning prefers narrower vectors (e.g. AVX-512 parts that downclock).
int64_t getVectorWidth(const llvm::TargetMachine &tm,
                       const HostTargetOptions &options) {
  if (options.vectorWidth >= 0)
    return options.vectorWidth;
  const llvm::MCSubtargetInfo *sti = tm.getMCSubtargetInfo();
  if (sti->checkFeatures("+avx512f") && !sti->checkFeatures("+prefer-256-bit"))
    return 512;
  if (sti->checkFeatures("+avx"))
    return 256;
  return 128;
}

void optimizeModule(llvm::Module &module, llvm::TargetMachine &tm,
                    unsigned optLevel) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = optLevel >= 2;
  tuning.SLPVectorization = optLevel >= 2;
  llvm::PassBuilder pb(&tm, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = llvm::OptimizationLevel::O3;
  switch (optLevel) {
  case 0:
    level = llvm::OptimizationLevel::O0;
    break;
  case 1:
    level = llvm::OptimizationLevel::O1;
    break;
  case 2:
    level = llvm::OptimizationLevel::O2;
    break;
  default:
    break;
  }
  llvm::ModulePassManager mpm = level == llvm::OptimizationLevel::O0
                                    ? pb.buildO0DefaultPipeline(level)
                                    : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(module, mam);
}

LogicalResult emitFile(Location loc, llvm::Module &module,
                       llvm::TargetMachine &tm, llvm::CodeGenFileType type,
                       SmallVectorImpl<char> &out) {
  llvm::raw_svector_ostream os(out);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, type))
    return emitError(loc) << "host target: the x86-64 backend cannot emit "
                          << (type == llvm::CodeGenFileType::ObjectFile
                                  ? "an object file"
                                  : "assembly");
  pm.run(module);
  return success();
}

} // namespace

FailureOr<HostExecutableBinary>
mlir::kiln::compileExecutableForHost(ExecutableOp executable,
                                     const HostTargetOptions &options) {
  MLIRContext *ctx = executable.getContext();
  Location loc = executable.getLoc();
  {
    DialectRegistry registry;
    registerHostCodegenDialects(registry);
    registerBuiltinDialectTranslation(registry);
    registerLLVMDialectTranslation(registry);
    ctx->appendDialectRegistry(registry);
  }

  // Work on a clone: the kernels, in op order, in a fresh builtin.module.
  HostExecutableBinary binary;
  bool collectiveKernels = false;
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc, executable.getSymName());
  OpBuilder builder(ctx);
  builder.setInsertionPointToEnd(module->getBody());
  for (Operation &op : executable.getBlock()) {
    auto func = dyn_cast<func::FuncOp>(op);
    if (!func)
      return op.emitError() << "host target: unexpected op in executable '"
                            << executable.getSymName()
                            << "' (only func.func kernels are compiled)";
    if (failed(verifyKernel(func)))
      return failure();
    if (isCollectiveKernel(func) != collectiveKernels &&
        !binary.exports.empty())
      return func.emitError()
             << "host target: executable '" << executable.getSymName()
             << "' mixes a compiled collective's kernel "
                "with tensor kernels";
    collectiveKernels = isCollectiveKernel(func);
    HostKernelExport kernel;
    kernel.name = func.getSymName().str();
    kernel.bindingCount = func.getNumArguments() + func.getNumResults();
    binary.exports.push_back(std::move(kernel));
    builder.clone(op);
  }
  if (binary.exports.empty())
    return executable.emitError() << "host target: executable '"
                                  << executable.getSymName()
                                  << "' has no kernel";

  DumpWriter dump(options.dumpDir, executable.getSymName());
  auto dumpModule = [&](StringRef stage) {
    return dump.write(loc, (stage + ".mlir").str(),
                      [&](llvm::raw_ostream &os) { module->print(os); });
  };
  if (failed(dumpModule("input")))
    return failure();

  // The target machine first: its CPU features size the vector tiles.
  std::unique_ptr<llvm::TargetMachine> tmOwner;
  llvm::TargetMachine *tm = getOrCreateTargetMachine(loc, options, tmOwner);
  if (!tm)
    return failure();

  // MLIR: the codegen recipe, stage by stage.
  HostCodegenPipelineOptions pipelineOptions;
  pipelineOptions.vectorWidth = getVectorWidth(*tm, options);
  for (const HostCodegenStage &stage : getHostCodegenStages()) {
    // A compiled collective's kernel is on buffers and has no linalg ops:
    // only kiln-host-lower-window-collectives (distribute) and the scalar
    // and LLVM stages apply; LLVM vectorizes its loops.
    StringRef name = stage.name;
    if (collectiveKernels &&
        (name == "tile" || name == "bufferize" || name == "vectorize"))
      continue;
    PassManager pm(ctx, ModuleOp::getOperationName());
    addCrashContext(pm);
    stage.build(pm, pipelineOptions);
    if (failed(pm.run(*module))) {
      return emitError(loc) << "host target: codegen stage '" << stage.name
                            << "' failed for executable '"
                            << executable.getSymName() << "'";
    }
    if (failed(dumpModule(stage.name)))
      return failure();
  }

  for (HostKernelExport &kernel : binary.exports) {
    auto wrapper = module->lookupSymbol<LLVM::LLVMFuncOp>(kernel.name);
    auto grid = wrapper ? wrapper->getAttrOfType<DenseI64ArrayAttr>(
                              kWorkgroupCountAttrName)
                        : DenseI64ArrayAttr();
    if (!grid || grid.size() != 3)
      return emitError(loc) << "host target: kernel '" << kernel.name
                            << "' has no workgroup count after codegen";
    for (unsigned i = 0; i < 3; ++i)
      kernel.workgroupCount[i] = static_cast<uint32_t>(grid[i]);
  }

  // LLVM IR, optimized for the requested CPU.
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*module, llvmContext, executable.getSymName());
  if (!llvmModule)
    return emitError(loc) << "host target: translation to LLVM IR failed for "
                             "executable '"
                          << executable.getSymName() << "'";
  // A kernel may import libm and nothing else: keep LLVM from turning loops
  // into memset/memcpy calls (libc) by declaring no library builtins.
  for (llvm::Function &fn : *llvmModule)
    if (!fn.isDeclaration())
      fn.addFnAttr("no-builtins");
  llvmModule->setTargetTriple(tm->getTargetTriple());
  llvmModule->setDataLayout(tm->createDataLayout());
  if (failed(dump.write(loc, "ll", [&](llvm::raw_ostream &os) {
        llvmModule->print(os, nullptr);
      })))
    return failure();
  optimizeModule(*llvmModule, *tm, options.optLevel);
  if (llvm::verifyModule(*llvmModule, &llvm::errs()))
    return emitError(loc) << "host target: optimized LLVM IR is invalid";
  if (failed(dump.write(loc, "opt.ll", [&](llvm::raw_ostream &os) {
        llvmModule->print(os, nullptr);
      })))
    return failure();

  if (dump.enabled()) {
    std::unique_ptr<llvm::Module> clone = llvm::CloneModule(*llvmModule);
    SmallVector<char> assembly;
    if (failed(emitFile(loc, *clone, *tm, llvm::CodeGenFileType::AssemblyFile,
                        assembly)) ||
        failed(dump.write(loc, "s", [&](llvm::raw_ostream &os) {
          os.write(assembly.data(), assembly.size());
        })))
      return failure();
  }

  // Object, then the shared object.
  SmallVector<char> object;
  if (failed(emitFile(loc, *llvmModule, *tm, llvm::CodeGenFileType::ObjectFile,
                      object)))
    return failure();
  llvm::Expected<std::vector<uint8_t>> so = linkSharedObject(object);
  if (!so)
    return emitError(loc) << "host target: " << llvm::toString(so.takeError());
  binary.sharedObject = std::move(*so);
  if (failed(dump.write(loc, "so", [&](llvm::raw_ostream &os) {
        os.write(reinterpret_cast<const char *>(binary.sharedObject.data()),
                 binary.sharedObject.size());
      })))
    return failure();

  // host_abi.h: a kernel may import libm functions and nothing else; a
  // compiled collective's kernel also sched_yield and time.
  llvm::Expected<std::vector<std::string>> imports =
      getUndefinedDynamicSymbols(binary.sharedObject);
  if (!imports)
    return emitError(loc) << "host target: cannot read the linked shared "
                             "object: "
                          << llvm::toString(imports.takeError());
  for (const std::string &name : *imports)
    if (!isAllowedLibmSymbol(name) &&
        !(collectiveKernels && (name == "sched_yield" || name == "time")))
      return emitError(loc) << "host target: executable '"
                            << executable.getSymName()
                            << "' would import '" << name
                            << "', which is not a libm function";
  return binary;
}

namespace {

class HostTargetBackend final : public TargetBackend {
public:
  explicit HostTargetBackend(HostTargetOptions options)
      : options(std::move(options)) {}
  std::string describe() const override { return "host"; }
  bool hasCollectiveKernels() const override { return true; }
  bool prefersCollectiveKernels() const override { return true; }
  FailureOr<std::vector<ExecutableVariantBinary>>
  compile(ExecutableOp executable, StringRef dumpDir) const override {
    HostTargetOptions withDump = options;
    withDump.dumpDir = dumpDir.str();
    FailureOr<HostExecutableBinary> binary =
        compileExecutableForHost(executable, withDump);
    if (failed(binary))
      return failure();
    ExecutableVariantBinary variant;
    variant.target = "host:x86_64";
    variant.format = KILN_HOST_FORMAT;
    variant.binary = std::move(binary->sharedObject);
    for (const HostKernelExport &kernel : binary->exports) {
      VariantExport entry;
      entry.name = kernel.name;
      entry.workgroupCount = kernel.workgroupCount;
      entry.bindingCount = kernel.bindingCount;
      variant.exports.push_back(std::move(entry));
    }
    std::vector<ExecutableVariantBinary> variants;
    variants.push_back(std::move(variant));
    return variants;
  }

private:
  HostTargetOptions options;
};

} // namespace

std::unique_ptr<TargetBackend>
mlir::kiln::createHostTargetBackend(HostTargetOptions options) {
  return std::make_unique<HostTargetBackend>(std::move(options));
}

void mlir::kiln::registerHostTarget(TargetRegistry &registry) {
  TargetInfo target;
  target.name = "host";
  target.description = "x86-64 CPUs: one ELF shared object per executable";
  // Runs everywhere (the local driver is built into the runtime).
  target.isDefault = true;
  target.options = {
      {"host-cpu", TargetOption::Kind::String, std::string("x86-64"),
       "LLVM CPU name for --target=host kernels, e.g. x86-64, x86-64-v3, "
       "znver4, native",
       "cpu"},
      {"host-features", TargetOption::Kind::String, std::string(),
       "Extra LLVM target features for --target=host", "+feat,-feat"},
      {"host-opt-level", TargetOption::Kind::Level, 3u,
       "LLVM optimization level of host kernels (0-3)", ""},
  };
  target.create = [](const TargetOptionValues &values,
                     const SharedTargetOptions &) {
    HostTargetOptions options;
    options.cpu = values.getString("host-cpu");
    options.features = values.getString("host-features");
    options.optLevel = values.getLevel("host-opt-level");
    return createHostTargetBackend(std::move(options));
  };
  registry.add(std::move(target));
}
