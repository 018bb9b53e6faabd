//===- GPUTargetUtils.cpp - Steps shared by the ROCM and CUDA targets -----===//

#include "GPUTargetUtils.h"

#include "kiln/Codegen/CrashContext.h"
#include "kiln/Codegen/Passes.h"
#include "kiln/Dialect/Kiln/KilnOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/ROCDL/ROCDLToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Verifier.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/IPO/Internalize.h"
#include "llvm/Transforms/Utils/Cloning.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::gpu_target;

// Attributes the GPU codegen pipeline leaves on each kernel (GPUPipeline.h).
static constexpr StringLiteral kWorkgroupCountAttr = "kiln.workgroup_count";
static constexpr StringLiteral kWorkgroupSizeAttr = "kiln.workgroup_size";
static constexpr StringLiteral kSharedMemoryAttr = "kiln.shared_memory_bytes";

DumpWriter::DumpWriter(StringRef dir, StringRef executableName, StringRef chip)
    : dir(dir.str()), prefix((executableName + "." + chip).str()) {}

LogicalResult DumpWriter::write(Location loc, StringRef what,
                                function_ref<void(raw_ostream &)> print) const {
  if (!enabled())
    return success();
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return emitError(loc) << "cannot create dump directory '" << dir
                          << "': " << ec.message();
  SmallString<256> path(dir);
  llvm::sys::path::append(path, prefix + "." + what);
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return emitError(loc) << "cannot write '" << path << "': " << ec.message();
  print(os);
  return success();
}

LogicalResult DumpWriter::writeBytes(Location loc, StringRef what,
                                     ArrayRef<char> bytes) const {
  return write(loc, what, [&](raw_ostream &os) {
    os.write(bytes.data(), bytes.size());
  });
}

static StringRef getBackendName(GPUBackend backend) {
  return backend == GPUBackend::ROCDL ? "ROCDL" : "NVVM";
}

static StringRef getKernelAttrName(GPUBackend backend) {
  return backend == GPUBackend::ROCDL ? "rocdl.kernel" : "nvvm.kernel";
}

static bool isGPUKernel(LLVM::LLVMFuncOp func) {
  return func->hasAttr("rocdl.kernel") || func->hasAttr("nvvm.kernel");
}

// Reads a 3-element kiln.workgroup_* attribute of a lowered kernel.
static LogicalResult readTriple(LLVM::LLVMFuncOp func, StringRef attrName,
                                StringRef targetName,
                                std::array<uint32_t, 3> &out) {
  auto attr = func->getAttrOfType<DenseI64ArrayAttr>(attrName);
  if (!attr || attr.size() != 3)
    return func.emitError() << targetName << " target: kernel '"
                            << func.getSymName() << "' has no " << attrName
                            << " = array<i64: x, y, z> after GPU codegen";
  for (unsigned i = 0; i < 3; ++i) {
    if (attr[i] < 1 || attr[i] > UINT32_MAX)
      return func.emitError() << targetName << " target: kernel '"
                              << func.getSymName() << "' has " << attrName
                              << " entry " << attr[i]
                              << ", expected a positive 32-bit value";
    out[i] = static_cast<uint32_t>(attr[i]);
  }
  return success();
}

static LogicalResult readLaunchInfo(LLVM::LLVMFuncOp func,
                                    const GPUCodegenOptions &options,
                                    StringRef targetName,
                                    KernelLaunchInfo &kernel) {
  if (failed(readTriple(func, kWorkgroupCountAttr, targetName,
                        kernel.workgroupCount)) ||
      failed(readTriple(func, kWorkgroupSizeAttr, targetName,
                        kernel.workgroupSize)))
    return failure();
  uint64_t threads = uint64_t(kernel.workgroupSize[0]) *
                     kernel.workgroupSize[1] * kernel.workgroupSize[2];
  if (threads > options.maxWorkgroupSize)
    return func.emitError() << targetName << " target: kernel '"
                            << func.getSymName() << "' uses " << threads
                            << " threads per workgroup; " << options.chip
                            << " allows at most " << options.maxWorkgroupSize;
  if (Attribute attr = func->getAttr(kSharedMemoryAttr)) {
    auto bytes = dyn_cast<IntegerAttr>(attr);
    if (!bytes || bytes.getValue().isNegative() ||
        bytes.getValue().getZExtValue() > options.maxSharedMemoryBytes)
      return func.emitError()
             << targetName << " target: kernel '" << func.getSymName()
             << "' has " << kSharedMemoryAttr << " = " << attr << "; "
             << options.chip << " allows 0 to " << options.maxSharedMemoryBytes
             << " bytes";
    kernel.sharedMemoryBytes =
        static_cast<uint32_t>(bytes.getValue().getZExtValue());
  }
  if (func.getNumArguments() != kernel.bindingCount)
    return func.emitError() << targetName << " target: kernel '"
                            << func.getSymName() << "' takes "
                            << func.getNumArguments()
                            << " arguments after GPU codegen, expected one "
                               "pointer per binding ("
                            << kernel.bindingCount << ")";
  for (Type type : func.getArgumentTypes())
    if (!isa<LLVM::LLVMPointerType>(type))
      return func.emitError() << targetName << " target: kernel '"
                              << func.getSymName()
                              << "' has a non-pointer argument of type "
                              << type << "; bindings are passed as pointers";
  return success();
}

FailureOr<OwningOpRef<ModuleOp>> gpu_target::lowerKernels(
    ExecutableOp executable, const GPUCodegenOptions &options,
    StringRef targetName, const DumpWriter &dump,
    SmallVectorImpl<KernelLaunchInfo> &kernels) {
  MLIRContext *ctx = executable.getContext();
  Location loc = executable.getLoc();
  {
    DialectRegistry registry;
    registerGPUCodegenDialects(registry);
    registry.insert<LLVM::LLVMDialect>();
    registerBuiltinDialectTranslation(registry);
    registerGPUDialectTranslation(registry);
    registerLLVMDialectTranslation(registry);
    registerNVVMDialectTranslation(registry);
    registerROCDLDialectTranslation(registry);
    ctx->appendDialectRegistry(registry);
  }

  OwningOpRef<ModuleOp> module = ModuleOp::create(loc, executable.getSymName());
  OpBuilder builder(ctx);
  builder.setInsertionPointToEnd(module->getBody());
  bool hasTensorKernels = false, hasLoweredKernels = false;
  // Compiled collectives' kernels (kiln.window_collective) arrive on buffers:
  // kiln-gpu-lower-window-collectives replaces the tile, bufferize and
  // distribute stages for them.
  bool collectiveKernels = false;
  for (Operation &op : executable.getBlock()) {
    if (auto func = dyn_cast<func::FuncOp>(op)) {
      if (func.isExternal())
        return func.emitError() << targetName << " target: kernel '"
                                << func.getSymName() << "' has no body";
      bool collective = !func.getOps<WindowCollectiveOp>().empty();
      if (hasTensorKernels && collective != collectiveKernels)
        return func.emitError()
               << targetName << " target: executable '"
               << executable.getSymName()
               << "' mixes a compiled collective's kernel with tensor kernels";
      collectiveKernels = collective;
      hasTensorKernels = true;
      kernels.push_back({func.getSymName().str(),
                         func.getNumArguments() + func.getNumResults()});
    } else if (auto func = dyn_cast<LLVM::LLVMFuncOp>(op)) {
      if (isGPUKernel(func)) {
        if (!func->hasAttr(getKernelAttrName(options.backend)))
          return func.emitError()
                 << targetName << " target: kernel '" << func.getSymName()
                 << "' is already lowered for another GPU backend (expected "
                 << getBackendName(options.backend) << ", '"
                 << getKernelAttrName(options.backend) << "')";
        hasLoweredKernels = true;
        kernels.push_back({func.getSymName().str(), func.getNumArguments()});
      }
    } else if (!isa<LLVM::GlobalOp>(op)) {
      return op.emitError() << targetName << " target: unexpected op '"
                            << op.getName() << "' in executable '"
                            << executable.getSymName()
                            << "' (expected func.func kernels)";
    }
    builder.clone(op);
  }
  if (kernels.empty())
    return executable.emitError() << targetName << " target: executable '"
                                  << executable.getSymName()
                                  << "' has no kernel";
  if (hasTensorKernels && hasLoweredKernels)
    return executable.emitError()
           << targetName << " target: executable '" << executable.getSymName()
           << "' mixes tensor kernels (func.func) and lowered kernels "
              "(llvm.func)";
  if (failed(dump.write(loc, "input.mlir",
                        [&](raw_ostream &os) { module->print(os); })))
    return failure();

  // The GPU recipe stage by stage, so that each stage's IR can be dumped
  // (the stages together are buildGPUCodegenPipeline).
  if (hasTensorKernels) {
    for (auto [index, stage] : llvm::enumerate(getGPUCodegenStages())) {
      StringRef name = stage.name;
      if (collectiveKernels && (name == "tile" || name == "bufferize"))
        continue;
      PassManager pm(ctx, ModuleOp::getOperationName());
      addCrashContext(pm);
      if (collectiveKernels && name == "distribute") {
        GPULowerWindowCollectivesPassOptions lowering;
        lowering.backend =
            options.backend == GPUBackend::NVVM ? "nvvm" : "rocdl";
        pm.addPass(createGPULowerWindowCollectivesPass(lowering));
      } else {
        stage.build(pm, options);
      }
      if (failed(pm.run(*module)))
        return emitError(loc) << targetName << " target: GPU codegen stage '"
                              << stage.name << "' failed for executable '"
                              << executable.getSymName() << "' on "
                              << options.chip;
      std::string what = llvm::formatv("{0:D2}-{1}.mlir", index + 1,
                                       stage.name);
      if (failed(dump.write(loc, what,
                            [&](raw_ostream &os) { module->print(os); })))
        return failure();
    }
  }

  for (KernelLaunchInfo &kernel : kernels) {
    auto func = module->lookupSymbol<LLVM::LLVMFuncOp>(kernel.name);
    if (!func || !func->hasAttr(getKernelAttrName(options.backend)))
      return emitError(loc) << targetName << " target: GPU codegen produced "
                            << "no " << getBackendName(options.backend)
                            << " kernel '" << kernel.name << "'";
    if (failed(readLaunchInfo(func, options, targetName, kernel)))
      return failure();
  }
  return module;
}

std::unique_ptr<llvm::Module>
gpu_target::translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context,
                              llvm::TargetMachine &tm, StringRef targetName) {
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context, module.getName().value_or(""));
  if (!llvmModule) {
    emitError(module.getLoc())
        << targetName << " target: translation to LLVM IR failed";
    return nullptr;
  }
  llvmModule->setTargetTriple(tm.getTargetTriple());
  llvmModule->setDataLayout(tm.createDataLayout());
  return llvmModule;
}

FailureOr<gpu_target::TranslatedExecutable> gpu_target::lowerAndTranslate(
    ExecutableOp executable, const GPUCodegenOptions &options,
    llvm::TargetMachine &tm, llvm::LLVMContext &context, StringRef targetName,
    const DumpWriter &dump,
    function_ref<LogicalResult(llvm::Module &, ArrayRef<KernelLaunchInfo>)>
        annotate) {
  Location loc = executable.getLoc();
  TranslatedExecutable result;
  FailureOr<OwningOpRef<ModuleOp>> module =
      lowerKernels(executable, options, targetName, dump, result.kernels);
  if (failed(module))
    return failure();
  result.module = translateToLLVMIR(**module, context, tm, targetName);
  if (!result.module || failed(annotate(*result.module, result.kernels)))
    return failure();
  if (failed(dump.write(loc, "ll", [&](raw_ostream &os) {
        result.module->print(os, nullptr);
      })))
    return failure();
  return result;
}

LogicalResult gpu_target::internalizeAndOptimize(
    Location loc, llvm::Module &module, ArrayRef<KernelLaunchInfo> kernels,
    llvm::TargetMachine &tm, unsigned optLevel, StringRef targetName,
    StringRef executableName) {
  llvm::StringSet<> kernelNames;
  for (const KernelLaunchInfo &kernel : kernels)
    kernelNames.insert(kernel.name);
  llvm::internalizeModule(module, [&](const llvm::GlobalValue &value) {
    return kernelNames.contains(value.getName());
  });
  optimizeModule(module, tm, optLevel);
  if (llvm::verifyModule(module, &llvm::errs()))
    return emitError(loc) << targetName << " target: optimized LLVM IR of "
                          << "executable '" << executableName
                          << "' is invalid";
  return success();
}

void gpu_target::optimizeModule(llvm::Module &module, llvm::TargetMachine &tm,
                                unsigned optLevel) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = optLevel >= 2;
  tuning.LoopVectorization = optLevel >= 2;
  tuning.SLPVectorization = optLevel >= 2;
  llvm::PassBuilder pb(&tm, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  static const llvm::OptimizationLevel levels[] = {
      llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1,
      llvm::OptimizationLevel::O2, llvm::OptimizationLevel::O3};
  llvm::OptimizationLevel level = levels[std::min(optLevel, 3u)];
  llvm::ModulePassManager mpm = level == llvm::OptimizationLevel::O0
                                    ? pb.buildO0DefaultPipeline(level)
                                    : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(module, mam);
}

LogicalResult gpu_target::emitFile(Location loc, llvm::Module &module,
                                   llvm::TargetMachine &tm,
                                   llvm::CodeGenFileType type,
                                   StringRef targetName,
                                   SmallVectorImpl<char> &out) {
  llvm::raw_svector_ostream os(out);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, type))
    return emitError(loc) << targetName << " target: the "
                          << tm.getTargetTriple().getArchName()
                          << " backend cannot emit "
                          << (type == llvm::CodeGenFileType::ObjectFile
                                  ? "an object file"
                                  : "assembly");
  pm.run(module);
  return success();
}

LogicalResult gpu_target::dumpAssembly(Location loc, const llvm::Module &module,
                                       llvm::TargetMachine &tm,
                                       StringRef targetName,
                                       const DumpWriter &dump) {
  if (!dump.enabled())
    return success();
  std::unique_ptr<llvm::Module> clone = llvm::CloneModule(module);
  SmallVector<char> assembly;
  if (failed(emitFile(loc, *clone, tm, llvm::CodeGenFileType::AssemblyFile,
                      targetName, assembly)))
    return failure();
  return dump.writeBytes(loc, "s", assembly);
}

StringRef gpu_target::getTranscendentalName(const llvm::Function &fn) {
  switch (fn.getIntrinsicID()) {
  case llvm::Intrinsic::exp:
    return "exp";
  case llvm::Intrinsic::exp2:
    return "exp2";
  case llvm::Intrinsic::exp10:
    return "exp10";
  case llvm::Intrinsic::log:
    return "log";
  case llvm::Intrinsic::log2:
    return "log2";
  case llvm::Intrinsic::log10:
    return "log10";
  case llvm::Intrinsic::sin:
    return "sin";
  case llvm::Intrinsic::cos:
    return "cos";
  case llvm::Intrinsic::tan:
    return "tan";
  case llvm::Intrinsic::asin:
    return "asin";
  case llvm::Intrinsic::acos:
    return "acos";
  case llvm::Intrinsic::atan:
    return "atan";
  case llvm::Intrinsic::atan2:
    return "atan2";
  case llvm::Intrinsic::sinh:
    return "sinh";
  case llvm::Intrinsic::cosh:
    return "cosh";
  case llvm::Intrinsic::tanh:
    return "tanh";
  case llvm::Intrinsic::pow:
    return "pow";
  default:
    return "";
  }
}

LogicalResult gpu_target::checkTranscendentals(
    Location loc, const llvm::Module &module, StringRef targetName,
    StringRef chip,
    function_ref<bool(StringRef name, llvm::Type *scalarType)> isLowerable) {
  for (const llvm::Function &fn : module) {
    StringRef name = getTranscendentalName(fn);
    if (name.empty() || fn.use_empty())
      continue;
    llvm::Type *type = fn.getReturnType();
    if (isLowerable(name, type->getScalarType()))
      continue;
    std::string typeName;
    llvm::raw_string_ostream os(typeName);
    type->print(os);
    return emitError(loc) << targetName << " target: " << fn.getName()
                          << " (" << name << " on " << typeName
                          << ") has no lowering for " << chip
                          << "; the GPU codegen pipeline must expand it";
  }
  return success();
}

llvm::CodeGenOptLevel gpu_target::getCodeGenOptLevel(unsigned optLevel) {
  switch (optLevel) {
  case 0:
    return llvm::CodeGenOptLevel::None;
  case 1:
    return llvm::CodeGenOptLevel::Less;
  case 2:
    return llvm::CodeGenOptLevel::Default;
  default:
    return llvm::CodeGenOptLevel::Aggressive;
  }
}

std::string gpu_target::joinNames(ArrayRef<StringRef> names) {
  std::string text;
  for (StringRef name : names) {
    if (!text.empty())
      text += ", ";
    text += name.str();
  }
  return text;
}

std::unique_ptr<llvm::TargetMachine>
gpu_target::createTargetMachine(Location loc, LLVMBackend &backend,
                                StringRef chip, StringRef features,
                                unsigned optLevel) {
  std::call_once(backend.initialized, backend.initialize);
  llvm::Triple triple(backend.triple);
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    emitError(loc) << backend.targetName << " target: no LLVM "
                   << backend.backendName << " backend: " << error;
    return nullptr;
  }
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, chip, features, llvm::TargetOptions(), backend.relocModel,
      std::nullopt, getCodeGenOptLevel(optLevel)));
  if (!tm)
    emitError(loc) << backend.targetName << " target: cannot create an "
                   << backend.backendName << " target machine for " << chip;
  return tm;
}

llvm::Error gpu_target::verifyChipNames(ArrayRef<StringRef> known,
                                        ArrayRef<std::string> chips,
                                        StringRef vendor) {
  if (chips.empty())
    return llvm::createStringError(
        "no " + vendor + " chip given; known chips: " + joinNames(known));
  for (const std::string &chip : chips)
    if (!llvm::is_contained(known, chip))
      return llvm::createStringError("unknown " + vendor + " chip '" + chip +
                                     "'; known chips: " + joinNames(known));
  return llvm::Error::success();
}
