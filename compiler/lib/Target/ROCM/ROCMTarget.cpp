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

#include "llvm/IR/Constants.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"

#include <mutex>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::gpu_target;

static constexpr StringLiteral kTargetName = "rocm";
static constexpr StringLiteral kAMDGPUTriple = "amdgcn-amd-amdhsa";
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
  for (const ROCMChipInfo &info : getKnownROCMChips())
    if (info.name == chip)
      return &info;
  return nullptr;
}

llvm::Error mlir::kiln::verifyROCMChips(ArrayRef<std::string> chips) {
  SmallVector<StringRef> known;
  for (const ROCMChipInfo &info : getKnownROCMChips())
    known.push_back(info.name);
  if (chips.empty())
    return llvm::createStringError("no ROCm chip given; known chips: " +
                                   joinNames(known));
  for (const std::string &chip : chips)
    if (!lookupROCMChip(chip))
      return llvm::createStringError("unknown ROCm chip '" + chip +
                                     "'; known chips: " + joinNames(known));
  return llvm::Error::success();
}

static std::unique_ptr<llvm::TargetMachine>
createTargetMachine(Location loc, const ROCMChipInfo &chip, unsigned optLevel) {
  static std::once_flag initFlag;
  std::call_once(initFlag, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
  });
  llvm::Triple triple(kAMDGPUTriple);
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    emitError(loc) << "rocm target: no LLVM AMDGPU backend: " << error;
    return nullptr;
  }
  // No feature string: the wavefront size is the chip's default (64 on
  // gfx9, 32 on gfx10+), which the codegen pipeline was told about, and
  // xnack/sramecc stay "any" so one object runs in either mode.
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, chip.name, /*Features=*/"", llvm::TargetOptions(),
      llvm::Reloc::PIC_, std::nullopt, getCodeGenOptLevel(optLevel)));
  if (!tm)
    emitError(loc) << "rocm target: cannot create an AMDGPU target machine "
                      "for "
                   << chip.name;
  return tm;
}

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

  GPUCodegenOptions codegenOptions;
  codegenOptions.backend = GPUBackend::ROCDL;
  codegenOptions.chip = chip.name.str();
  codegenOptions.subgroupSize = chip.wavefrontSize;
  codegenOptions.maxWorkgroupSize = 1024;
  codegenOptions.maxSharedMemoryBytes = chip.maxSharedMemoryBytes;
  codegenOptions.matrixCores = options.matrixCores;
  std::unique_ptr<llvm::TargetMachine> tm =
      createTargetMachine(loc, chip, options.optLevel);
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
    ROCMKernelExport entry;
    entry.name = kernel.name;
    entry.workgroupCount = kernel.workgroupCount;
    entry.workgroupSize = kernel.workgroupSize;
    entry.bindingCount = kernel.bindingCount;
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
