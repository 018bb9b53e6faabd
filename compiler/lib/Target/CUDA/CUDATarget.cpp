//===- CUDATarget.cpp - NVIDIA GPU (PTX) executable compilation -----------===//
//
// Per chip: GPU codegen pipeline (NVVM) -> LLVM IR -> internalize + O3 with
// the NVPTX target machine -> PTX text. There is no libdevice here: math must
// be expanded by the pipeline (or be an NVPTX intrinsic), and a call to an
// external function is an error at compile time rather than at JIT time.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/CUDA/CUDATarget.h"

#include "GPUTargetUtils.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/TargetSelect.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::gpu_target;

static constexpr StringLiteral kTargetName = "cuda";

ArrayRef<CUDAChipInfo> mlir::kiln::getKnownCUDAChips() {
  // The PTX ISA version is the lowest one that supports the chip (what LLVM
  // picks by default), so the oldest driver that knows the chip can JIT it.
  static const CUDAChipInfo chips[] = {
      {"sm_75", 63},  {"sm_80", 70},  {"sm_86", 71},  {"sm_89", 78},
      {"sm_90", 78},  {"sm_90a", 80}, {"sm_100", 86}, {"sm_120", 87},
  };
  return chips;
}

const CUDAChipInfo *mlir::kiln::lookupCUDAChip(StringRef chip) {
  return lookupChip(getKnownCUDAChips(), chip);
}

llvm::Error mlir::kiln::verifyCUDAChips(ArrayRef<std::string> chips) {
  return verifyChipList(getKnownCUDAChips(), chips, "CUDA");
}

static void initializeNVPTX() {
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
}

// Default relocation model: PTX is text that the driver JIT-compiles.
static LLVMBackend nvptxBackend = {kTargetName, "NVPTX", "nvptx64-nvidia-cuda",
                                   /*relocModel=*/std::nullopt,
                                   initializeNVPTX};

// Makes each kernel's block size exact for ptxas (.reqntid, which lets it
// budget registers). ptxas rejects .maxntid next to .reqntid ("Conflicting
// directives"), and the NVVM conversion may have set .maxntid from the known
// block size, so that one is dropped: .reqntid implies it.
static LogicalResult annotateKernels(Location loc, llvm::Module &module,
                                     ArrayRef<KernelLaunchInfo> kernels) {
  for (const KernelLaunchInfo &kernel : kernels) {
    llvm::Function *fn = module.getFunction(kernel.name);
    if (!fn || fn->getCallingConv() != llvm::CallingConv::PTX_Kernel)
      return emitError(loc) << "cuda target: kernel '" << kernel.name
                            << "' is not a ptx_kernel after translation";
    fn->removeFnAttr("nvvm.maxntid");
    fn->addFnAttr("nvvm.reqntid",
                  std::to_string(kernel.workgroupSize[0]) + "," +
                      std::to_string(kernel.workgroupSize[1]) + "," +
                      std::to_string(kernel.workgroupSize[2]));
  }
  return success();
}

static FailureOr<CUDAExecutableBinary>
compileForChip(ExecutableOp executable, const CUDAChipInfo &chip,
               const CUDATargetOptions &options) {
  Location loc = executable.getLoc();
  StringRef name = executable.getSymName();
  DumpWriter dump(options.dumpDir, name, chip.name);

  GPUCodegenOptions codegenOptions =
      getGPUCodegenOptionsForChip(GPUBackend::NVVM, chip.name);
  codegenOptions.maxWorkgroupSize = 1024;
  codegenOptions.layoutFragments = options.layoutFragments;
  codegenOptions.stageRows = options.stageRows;
  std::unique_ptr<llvm::TargetMachine> tm = createTargetMachine(
      loc, nvptxBackend, chip.name, "+ptx" + std::to_string(chip.ptxVersion),
      options.optLevel);
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
  if (failed(internalizeAndOptimize(loc, *llvmModule, kernels, *tm,
                                    options.optLevel, kTargetName, name)))
    return failure();
  // NVPTX expands only exp2 on f32/f16 (ex2.approx) by itself.
  if (failed(checkTranscendentals(
          loc, *llvmModule, kTargetName, chip.name,
          [](StringRef name, llvm::Type *type) {
            return name == "exp2" && (type->isFloatTy() || type->isHalfTy());
          })))
    return failure();
  for (const llvm::Function &fn : *llvmModule)
    if (fn.isDeclaration() && !fn.isIntrinsic() && !fn.use_empty())
      return emitError(loc)
             << "cuda target: executable '" << name << "' on " << chip.name
             << " calls external function '" << fn.getName()
             << "'; libdevice is not linked, so math functions must be "
                "expanded by the GPU codegen pipeline";
  if (failed(dump.write(loc, "opt.ll", [&](raw_ostream &os) {
        llvmModule->print(os, nullptr);
      })))
    return failure();

  // PTX is the NVPTX backend's assembly output.
  SmallVector<char> ptx;
  if (failed(emitFile(loc, *llvmModule, *tm,
                      llvm::CodeGenFileType::AssemblyFile, kTargetName, ptx)))
    return failure();
  if (failed(dump.writeBytes(loc, "s", ptx)) ||
      failed(dump.writeBytes(loc, "ptx", ptx)))
    return failure();

  CUDAExecutableBinary binary;
  binary.chip = chip.name.str();
  binary.ptx.assign(ptx.begin(), ptx.end());
  binary.ptx.push_back('\0');
  for (const KernelLaunchInfo &kernel : kernels)
    binary.exports.push_back(makeKernelExport<CUDAKernelExport>(kernel));
  return binary;
}

FailureOr<std::vector<CUDAExecutableBinary>>
mlir::kiln::compileExecutableForCUDA(ExecutableOp executable,
                                     const CUDATargetOptions &options) {
  if (llvm::Error error = verifyCUDAChips(options.chips))
    return executable.emitError() << "cuda target: "
                                  << llvm::toString(std::move(error));
  std::vector<CUDAExecutableBinary> binaries;
  for (const std::string &chipName : options.chips) {
    FailureOr<CUDAExecutableBinary> binary =
        compileForChip(executable, *lookupCUDAChip(chipName), options);
    if (failed(binary))
      return failure();
    binaries.push_back(std::move(*binary));
  }
  return binaries;
}

namespace {

class CUDATargetBackend final : public TargetBackend {
public:
  explicit CUDATargetBackend(CUDATargetOptions options)
      : options(std::move(options)) {}
  bool hasCollectiveKernels() const override { return true; }
  std::string describe() const override {
    return "cuda:" + llvm::join(options.chips, ",");
  }
  bool hasFusedAttention() const override {
    return llvm::all_of(options.chips, [](const std::string &chip) {
      return hasFusedAttentionKernel(GPUBackend::NVVM, chip);
    });
  }
  FailureOr<std::vector<ExecutableVariantBinary>>
  compile(ExecutableOp executable, StringRef dumpDir) const override {
    CUDATargetOptions withDump = options;
    withDump.dumpDir = dumpDir.str();
    FailureOr<std::vector<CUDAExecutableBinary>> binaries =
        compileExecutableForCUDA(executable, withDump);
    if (failed(binaries))
      return failure();
    std::vector<ExecutableVariantBinary> variants;
    for (CUDAExecutableBinary &binary : *binaries)
      variants.push_back(makeGPUVariant<CUDAKernelExport>(
          "cuda:" + binary.chip, kCUDABinaryFormat.str(),
          std::move(binary.ptx), binary.exports));
    return variants;
  }

private:
  CUDATargetOptions options;
};

} // namespace

std::unique_ptr<TargetBackend>
mlir::kiln::createCUDATargetBackend(CUDATargetOptions options) {
  return std::make_unique<CUDATargetBackend>(std::move(options));
}

void mlir::kiln::registerCUDATarget(TargetRegistry &registry) {
  TargetInfo target;
  target.name = "cuda";
  target.description = "NVIDIA GPUs: one PTX module per chip";
  target.gpu = true;
  TargetOption chips = {
      "cuda-chip", TargetOption::Kind::StringList,
      std::vector<std::string>{"sm_90"},
      "Comma-separated NVIDIA chips of --target=cuda, one PTX each "
      "(default: sm_90; sm_90a: H100/H200 only, with wgmma matmuls)",
      "sm_80,sm_90"};
  chips.needsTarget = true;
  chips.verify = [](const TargetOptionValue &value) {
    return verifyCUDAChips(std::get<std::vector<std::string>>(value));
  };
  target.options = {
      std::move(chips),
      {"cuda-layout-fragments", TargetOption::Kind::Bool, false,
       "Read mma.sync fragments of contractions from one padded shared "
       "stage by the layout table, as the AMD matrix-core forms do, "
       "instead of cp.async stages and ldmatrix (tests the AMD data "
       "path on NVIDIA GPUs; slower)",
       ""},
  };
  target.create = [](const TargetOptionValues &values,
                     const SharedTargetOptions &shared) {
    CUDATargetOptions options;
    options.chips = values.getList("cuda-chip");
    options.layoutFragments = values.getBool("cuda-layout-fragments");
    options.optLevel = shared.gpuOptLevel;
    options.stageRows = shared.gpuStageRows;
    return createCUDATargetBackend(std::move(options));
  };
  registry.add(std::move(target));
}
