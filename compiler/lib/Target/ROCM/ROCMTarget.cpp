//===- ROCMTarget.cpp - AMD GPU (HSACO) executable compilation ------------===//
//
// Per chip: GPU codegen pipeline (ROCDL) -> LLVM IR -> device libraries (when
// called) -> internalize + O3 with the AMDGPU target machine -> relocatable
// object -> lld -shared (in process) -> HSACO -> resource usage read back
// from the amdhsa metadata note.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/ROCM/ROCMTarget.h"

#include "GPUTargetUtils.h"
#include "HSACOMetadata.h"
#include "ROCMDeviceLibs.h"
// The in-process lld wrapper of the host target (one lock for all lld use).
#include "Host/SharedObjectLinker.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"
#include "llvm/Support/TargetSelect.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::gpu_target;

static constexpr StringLiteral kTargetName = "rocm";
// amdhsa code object v5: what ROCm 6.x/7.x loaders expect by default.
static constexpr unsigned kCodeObjectVersion = 500;

ArrayRef<ROCMChipInfo> mlir::kiln::getKnownROCMChips() {
  // ISA versions follow the oclc convention: major * 1000 + minor * 100 +
  // stepping (hex steppings such as gfx90a's "a" count as 10).
  static const ROCMChipInfo chips[] = {
      {"gfx908", 9008, 64, 65536},   {"gfx90a", 9010, 64, 65536},
      {"gfx942", 9402, 64, 65536},   {"gfx950", 9500, 64, 163840},
      {"gfx1030", 10300, 32, 65536}, {"gfx1100", 11000, 32, 65536},
      {"gfx1101", 11001, 32, 65536}, {"gfx1102", 11002, 32, 65536},
      {"gfx1151", 11051, 32, 65536}, {"gfx1200", 12000, 32, 65536},
      {"gfx1201", 12001, 32, 65536},
  };
  return chips;
}

const ROCMChipInfo *mlir::kiln::lookupROCMChip(StringRef chip) {
  return lookupChip(getKnownROCMChips(), chip);
}

llvm::Error mlir::kiln::verifyROCMChips(ArrayRef<std::string> chips) {
  return verifyChipList(getKnownROCMChips(), chips, "ROCm");
}

static void initializeAMDGPU() {
  LLVMInitializeAMDGPUTargetInfo();
  LLVMInitializeAMDGPUTarget();
  LLVMInitializeAMDGPUTargetMC();
  LLVMInitializeAMDGPUAsmPrinter();
}

// Position-independent code: the object is linked into a shared HSACO.
static LLVMBackend amdgpuBackend = {kTargetName, "AMDGPU", "amdgcn-amd-amdhsa",
                                    llvm::Reloc::PIC_, initializeAMDGPU};

// Makes each kernel's launch shape explicit to the backend (register budget,
// wavefront count).
static LogicalResult annotateKernels(Location loc, llvm::Module &module,
                                     ArrayRef<KernelLaunchInfo> kernels) {
  llvm::LLVMContext &ctx = module.getContext();
  for (const KernelLaunchInfo &kernel : kernels) {
    llvm::Function *fn = module.getFunction(kernel.name);
    if (!fn || fn->getCallingConv() != llvm::CallingConv::AMDGPU_KERNEL)
      return emitError(loc) << "rocm target: kernel '" << kernel.name
                            << "' is not an amdgpu_kernel after translation";
    uint32_t threads = kernel.workgroupSize[0] * kernel.workgroupSize[1] *
                       kernel.workgroupSize[2];
    // Exact, replacing the translation's default range (1,256 when the
    // kernel carries no rocdl.flat_work_group_size).
    fn->addFnAttr("amdgpu-flat-work-group-size",
                  std::to_string(threads) + "," + std::to_string(threads));
    if (!fn->getMetadata("reqd_work_group_size")) {
      SmallVector<llvm::Metadata *, 3> dims;
      for (uint32_t dim : kernel.workgroupSize)
        dims.push_back(llvm::ConstantAsMetadata::get(
            llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), dim)));
      fn->setMetadata("reqd_work_group_size", llvm::MDNode::get(ctx, dims));
    }
    // Kiln always launches whole workgroups (grid = count x size).
    fn->addFnAttr("uniform-work-group-size", "true");
  }
  module.addModuleFlag(llvm::Module::Error, "amdhsa_code_object_version",
                       kCodeObjectVersion);
  return success();
}

static FailureOr<ROCMExecutableBinary>
compileForChip(ExecutableOp executable, const ROCMChipInfo &chip,
               const ROCMTargetOptions &options) {
  Location loc = executable.getLoc();
  StringRef name = executable.getSymName();
  DumpWriter dump(options.dumpDir, name, chip.name);

  GPUCodegenOptions codegenOptions =
      getGPUCodegenOptionsForChip(GPUBackend::ROCDL, chip.name);
  codegenOptions.subgroupSize = chip.wavefrontSize;
  codegenOptions.maxWorkgroupSize = 1024;
  // The chip table's LDS size wins where the chip options' guess differs.
  codegenOptions.maxSharedMemoryBytes = chip.maxSharedMemoryBytes;
  codegenOptions.maxStaticSharedMemoryBytes = chip.maxSharedMemoryBytes;
  codegenOptions.processorSharedMemoryBytes = chip.maxSharedMemoryBytes;
  codegenOptions.matrixCores = options.matrixCores;
  codegenOptions.stageRows = options.stageRows;
  // No feature string: the wavefront size is the chip's default (64 on
  // gfx9, 32 on gfx10+), which the codegen pipeline was told about, and
  // xnack/sramecc stay "any" so one object runs in either mode.
  std::unique_ptr<llvm::TargetMachine> tm = createTargetMachine(
      loc, amdgpuBackend, chip.name, /*features=*/"", options.optLevel);
  if (!tm)
    return failure();
  llvm::LLVMContext llvmContext;
  FailureOr<TranslatedExecutable> translated = lowerAndTranslate(
      executable, codegenOptions, *tm, llvmContext, kTargetName, dump,
      [&](llvm::Module &module, ArrayRef<KernelLaunchInfo> kernels) {
        return annotateKernels(loc, module, kernels);
      });
  if (failed(translated))
    return failure();
  llvm::Module *llvmModule = translated->module.get();
  ArrayRef<KernelLaunchInfo> kernels = translated->kernels;

  replaceTranscendentalsWithOCML(*llvmModule);
  if (llvm::Error error =
          linkROCMDeviceLibs(*llvmModule, chip, options.deviceLibsDir))
    return emitError(loc) << "rocm target: executable '" << name << "' on "
                          << chip.name << ": "
                          << llvm::toString(std::move(error));
  if (failed(internalizeAndOptimize(loc, *llvmModule, kernels, *tm,
                                    options.optLevel, kTargetName, name)))
    return failure();
  if (failed(checkTranscendentals(loc, *llvmModule, kTargetName, chip.name,
                                  isNativeAMDGPUTranscendental)))
    return failure();
  if (failed(dump.write(loc, "opt.ll", [&](raw_ostream &os) {
        llvmModule->print(os, nullptr);
      })) ||
      failed(dumpAssembly(loc, *llvmModule, *tm, kTargetName, dump)))
    return failure();

  SmallVector<char> object;
  if (failed(emitFile(loc, *llvmModule, *tm, llvm::CodeGenFileType::ObjectFile,
                      kTargetName, object)))
    return failure();
  llvm::Expected<std::vector<uint8_t>> hsaco = linkSharedObject(object);
  if (!hsaco)
    return emitError(loc) << "rocm target: " << llvm::toString(hsaco.takeError());
  ROCMExecutableBinary binary;
  binary.chip = chip.name.str();
  binary.hsaco = std::move(*hsaco);
  if (failed(dump.writeBytes(
          loc, "hsaco",
          ArrayRef<char>(reinterpret_cast<const char *>(binary.hsaco.data()),
                         binary.hsaco.size()))))
    return failure();

  // A code object cannot import anything: an undefined symbol is a function
  // no library provided, which the loader would reject.
  llvm::Expected<std::vector<std::string>> imports =
      getUndefinedDynamicSymbols(binary.hsaco);
  if (!imports)
    return emitError(loc) << "rocm target: cannot read the HSACO: "
                          << llvm::toString(imports.takeError());
  if (!imports->empty())
    return emitError(loc) << "rocm target: executable '" << name << "' on "
                          << chip.name << " calls undefined function '"
                          << imports->front() << "'";

  llvm::Expected<llvm::StringMap<HSACOKernelMetadata>> metadata =
      readHSACOKernelMetadata(binary.hsaco);
  if (!metadata)
    return emitError(loc) << "rocm target: cannot read the kernel metadata of "
                          << "executable '" << name << "' on " << chip.name
                          << ": " << llvm::toString(metadata.takeError());
  for (const KernelLaunchInfo &kernel : kernels) {
    auto it = metadata->find(kernel.name);
    if (it == metadata->end())
      return emitError(loc) << "rocm target: the HSACO for " << chip.name
                            << " has no metadata for kernel '" << kernel.name
                            << "'";
    const HSACOKernelMetadata &md = it->second;
    ROCMKernelExport entry = makeKernelExport<ROCMKernelExport>(kernel);
    // The code object's figure includes LDS the backend added itself.
    entry.sharedMemoryBytes =
        std::max(kernel.sharedMemoryBytes, md.groupSegmentFixedSize);
    entry.vgprCount = md.vgprCount;
    entry.sgprCount = md.sgprCount;
    entry.agprCount = md.agprCount;
    entry.scratchBytes = md.privateSegmentFixedSize;
    entry.vgprSpillCount = md.vgprSpillCount;
    entry.sgprSpillCount = md.sgprSpillCount;
    entry.kernargSegmentSize = md.kernargSegmentSize;
    entry.wavefrontSize = md.wavefrontSize;
    if (md.vgprSpillCount || md.sgprSpillCount || md.privateSegmentFixedSize)
      emitWarning(loc) << "rocm target: kernel '" << kernel.name << "' on "
                       << chip.name << " uses " << md.privateSegmentFixedSize
                       << " bytes of scratch per work-item ("
                       << md.vgprSpillCount << " VGPR and " << md.sgprSpillCount
                       << " SGPR spills); expect it to run slowly";
    binary.exports.push_back(std::move(entry));
  }
  return binary;
}

FailureOr<std::vector<ROCMExecutableBinary>>
mlir::kiln::compileExecutableForROCM(ExecutableOp executable,
                                     const ROCMTargetOptions &options) {
  if (llvm::Error error = verifyROCMChips(options.chips))
    return executable.emitError() << "rocm target: "
                                  << llvm::toString(std::move(error));
  std::vector<ROCMExecutableBinary> binaries;
  for (const std::string &chipName : options.chips) {
    FailureOr<ROCMExecutableBinary> binary =
        compileForChip(executable, *lookupROCMChip(chipName), options);
    if (failed(binary))
      return failure();
    binaries.push_back(std::move(*binary));
  }
  return binaries;
}

namespace {

class ROCMTargetBackend final : public TargetBackend {
public:
  explicit ROCMTargetBackend(ROCMTargetOptions options)
      : options(std::move(options)) {}
  bool hasCollectiveKernels() const override { return true; }
  std::string describe() const override {
    return "rocm:" + llvm::join(options.chips, ",");
  }
  FailureOr<std::vector<ExecutableVariantBinary>>
  compile(ExecutableOp executable, StringRef dumpDir) const override {
    ROCMTargetOptions withDump = options;
    withDump.dumpDir = dumpDir.str();
    FailureOr<std::vector<ROCMExecutableBinary>> binaries =
        compileExecutableForROCM(executable, withDump);
    if (failed(binaries))
      return failure();
    std::vector<ExecutableVariantBinary> variants;
    for (ROCMExecutableBinary &binary : *binaries) {
      ExecutableVariantBinary variant = makeGPUVariant<ROCMKernelExport>(
          "rocm:" + binary.chip, kROCMBinaryFormat.str(),
          std::move(binary.hsaco), binary.exports);
      // Resource usage read back from the HSACO metadata.
      for (auto [entry, kernel] :
           llvm::zip_equal(variant.exports, binary.exports)) {
        entry.vgprCount = kernel.vgprCount;
        entry.sgprCount = kernel.sgprCount;
        entry.agprCount = kernel.agprCount;
        entry.scratchBytes = kernel.scratchBytes;
      }
      variants.push_back(std::move(variant));
    }
    return variants;
  }

private:
  ROCMTargetOptions options;
};

} // namespace

std::unique_ptr<TargetBackend>
mlir::kiln::createROCMTargetBackend(ROCMTargetOptions options) {
  return std::make_unique<ROCMTargetBackend>(std::move(options));
}

void mlir::kiln::registerROCMTarget(TargetRegistry &registry) {
  TargetInfo target;
  target.name = "rocm";
  target.description = "AMD GPUs: one HSACO code object per chip";
  target.gpu = true;
  TargetOption chips = {
      "rocm-chip", TargetOption::Kind::StringList,
      std::vector<std::string>{"gfx942"},
      "Comma-separated AMD chips of --target=rocm, one HSACO each "
      "(default: gfx942)",
      "gfx942,gfx1100"};
  chips.needsTarget = true;
  chips.verify = [](const TargetOptionValue &value) {
    return verifyROCMChips(std::get<std::vector<std::string>>(value));
  };
  target.options = {
      std::move(chips),
      {"rocm-device-libs", TargetOption::Kind::String, std::string(),
       "Directory holding AMD device-library bitcode (ocml.bc, ockl.bc); "
       "default: the usual install places",
       "DIR"},
      {"rocm-matrix-cores", TargetOption::Kind::Bool, true,
       "Use MFMA (gfx90a/942/950) and WMMA (gfx11/12) for f16 and bf16 "
       "contractions (default: true; =false for the SIMT strategies)",
       ""},
  };
  target.create = [](const TargetOptionValues &values,
                     const SharedTargetOptions &shared) {
    ROCMTargetOptions options;
    options.chips = values.getList("rocm-chip");
    options.deviceLibsDir = values.getString("rocm-device-libs");
    options.matrixCores = values.getBool("rocm-matrix-cores");
    options.optLevel = shared.gpuOptLevel;
    options.stageRows = shared.gpuStageRows;
    return createROCMTargetBackend(std::move(options));
  };
  registry.add(std::move(target));
}
