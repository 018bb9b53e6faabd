//===- ROCMDeviceLibs.cpp - AMD device-library linking --------------------===//
//
// ocml (math) and ockl (kernel helpers) are read lazily, and only the
// functions the kernels need are linked. The libraries branch on external
// constants (__oclc_ISA_version, __oclc_daz_opt, ...) that clang normally
// links from oclc_*.bc files. Debian's rocm-device-libs lacks the ISA
// version files of gfx942, gfx950, gfx11xx and gfx12xx, so the constants are
// defined here for every chip instead, with the values clang uses by default
// (IEEE-conforming math, denormals kept, correctly rounded sqrt).
//
//===----------------------------------------------------------------------===//

#include "ROCMDeviceLibs.h"

#include "GPUTargetUtils.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace llvm;

namespace mlir::kiln {

static Error makeError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

ArrayRef<StringRef> getDefaultROCMDeviceLibsDirs() {
  static const StringRef dirs[] = {
      "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode", // Debian rocm-device-libs
      "/usr/lib/amdgcn/bitcode",
      "/opt/rocm/amdgcn/bitcode", // ROCm 5.x/6.x packages
      "/opt/rocm/lib/llvm/lib/clang/amdgcn/bitcode",
  };
  return dirs;
}

bool isNativeAMDGPUTranscendental(StringRef name, llvm::Type *scalarType) {
  if (!scalarType->isFloatTy() && !scalarType->isHalfTy())
    return false;
  return StringSwitch<bool>(name)
      .Cases({"exp", "exp2", "exp10", "log", "log2", "log10", "sin", "cos"},
             true)
      .Default(false);
}

void replaceTranscendentalsWithOCML(Module &module) {
  SmallVector<Function *> intrinsics;
  for (Function &fn : module)
    if (!gpu_target::getTranscendentalName(fn).empty())
      intrinsics.push_back(&fn);
  for (Function *fn : intrinsics) {
    StringRef name = gpu_target::getTranscendentalName(*fn);
    llvm::Type *type = fn->getReturnType();
    StringRef suffix = type->isHalfTy()     ? "f16"
                       : type->isFloatTy()  ? "f32"
                       : type->isDoubleTy() ? "f64"
                                            : "";
    // Vectors and other types stay; the check after optimization reports
    // them if the backend cannot take them.
    if (suffix.empty() || isNativeAMDGPUTranscendental(name, type))
      continue;
    // ocml's functions take the intrinsic's operands in the same order
    // (atan2(y, x), pow(x, y)).
    FunctionCallee ocml = module.getOrInsertFunction(
        ("__ocml_" + name + "_" + suffix).str(), fn->getFunctionType());
    fn->replaceAllUsesWith(ocml.getCallee());
    fn->eraseFromParent();
  }
}

static bool hasLibrary(StringRef dir, StringRef name) {
  SmallString<256> path(dir);
  sys::path::append(path, name);
  return sys::fs::exists(path);
}

// True when `module` declares (calls) a function named `prefix`... that it
// does not define.
static bool declaresWithPrefix(const Module &module, StringRef prefix) {
  for (const Function &fn : module)
    if (fn.isDeclaration() && fn.getName().starts_with(prefix))
      return true;
  return false;
}

static std::string listDeclarations(const Module &module, StringRef prefix) {
  std::string names;
  for (const Function &fn : module) {
    if (!fn.isDeclaration() || !fn.getName().starts_with(prefix))
      continue;
    if (!names.empty())
      names += ", ";
    names += fn.getName().str();
  }
  return names;
}

static void defineControlConstant(Module &module, StringRef name,
                                  llvm::Type *type, uint64_t value) {
  // addrspace(4) is AMDGPU's constant address space, where the libraries
  // expect these; linkonce_odr lets the library declarations bind to them
  // and internalization later folds them into the code.
  constexpr unsigned kConstantAddressSpace = 4;
  if (GlobalVariable *existing = module.getGlobalVariable(name)) {
    if (!existing->isDeclaration())
      return;
    existing->eraseFromParent();
  }
  auto *global = new GlobalVariable(
      module, type, /*isConstant=*/true, GlobalValue::LinkOnceODRLinkage,
      ConstantInt::get(type, value), name, nullptr,
      GlobalValue::NotThreadLocal, kConstantAddressSpace);
  global->setVisibility(GlobalValue::HiddenVisibility);
  global->setUnnamedAddr(GlobalValue::UnnamedAddr::Local);
  global->setAlignment(Align(type->getPrimitiveSizeInBits() / 8));
}

static void defineControlConstants(Module &module, const ROCMChipInfo &chip) {
  LLVMContext &ctx = module.getContext();
  llvm::Type *i8 = llvm::Type::getInt8Ty(ctx);
  llvm::Type *i32 = llvm::Type::getInt32Ty(ctx);
  defineControlConstant(module, "__oclc_finite_only_opt", i8, 0);
  defineControlConstant(module, "__oclc_unsafe_math_opt", i8, 0);
  defineControlConstant(module, "__oclc_daz_opt", i8, 0);
  defineControlConstant(module, "__oclc_correctly_rounded_sqrt32", i8, 1);
  defineControlConstant(module, "__oclc_wavefrontsize64", i8,
                        chip.wavefrontSize == 64 ? 1 : 0);
  defineControlConstant(module, "__oclc_ISA_version", i32, chip.isaVersion);
  // Code object v5 ABI (matches the amdhsa_code_object_version flag).
  defineControlConstant(module, "__oclc_ABI_version", i32, 500);
}

static Error linkLibrary(Module &module, StringRef dir, StringRef name) {
  SmallString<256> path(dir);
  sys::path::append(path, name);
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!buffer)
    return makeError("cannot read AMD device library '" + path +
                     "': " + buffer.getError().message());
  Expected<std::unique_ptr<Module>> library =
      getOwningLazyBitcodeModule(std::move(*buffer), module.getContext());
  if (!library)
    return makeError("cannot load AMD device library '" + path +
                     "': " + toString(library.takeError()));
  // The libraries are built for the generic amdgcn triple; adopt the
  // kernel's so the linker does not warn about a layout mismatch.
  (*library)->setTargetTriple(module.getTargetTriple());
  (*library)->setDataLayout(module.getDataLayout());
  if (Linker::linkModules(module, std::move(*library),
                          Linker::Flags::LinkOnlyNeeded))
    return makeError("cannot link AMD device library '" + path + "'");
  return Error::success();
}

Error linkROCMDeviceLibs(Module &module, const ROCMChipInfo &chip,
                         StringRef libsDir) {
  bool needsOcml = declaresWithPrefix(module, "__ocml_");
  bool needsOckl = declaresWithPrefix(module, "__ockl_");
  if (!needsOcml && !needsOckl)
    return Error::success();

  std::string dir = libsDir.str();
  if (dir.empty()) {
    for (StringRef candidate : getDefaultROCMDeviceLibsDirs())
      if (hasLibrary(candidate, "ocml.bc") && hasLibrary(candidate, "ockl.bc")) {
        dir = candidate.str();
        break;
      }
    if (dir.empty()) {
      std::string searched;
      for (StringRef candidate : getDefaultROCMDeviceLibsDirs())
        searched += (searched.empty() ? "" : ", ") + candidate.str();
      return makeError(
          "the kernels call AMD device-library functions (" +
          listDeclarations(module, needsOcml ? "__ocml_" : "__ockl_") +
          ") but no directory holding ocml.bc and ockl.bc was found (searched " +
          searched +
          "); install rocm-device-libs or pass --rocm-device-libs=<dir>");
    }
  } else if (!hasLibrary(dir, "ocml.bc") || !hasLibrary(dir, "ockl.bc")) {
    return makeError("AMD device-library directory '" + dir +
                     "' does not hold ocml.bc and ockl.bc");
  }

  defineControlConstants(module, chip);
  // ocml may call into ockl, so ockl is linked after ocml when needed.
  if (needsOcml)
    if (Error error = linkLibrary(module, dir, "ocml.bc"))
      return error;
  if (declaresWithPrefix(module, "__ockl_"))
    if (Error error = linkLibrary(module, dir, "ockl.bc"))
      return error;
  for (StringRef prefix : {"__ocml_", "__ockl_"})
    if (declaresWithPrefix(module, prefix))
      return makeError("AMD device libraries in '" + dir +
                       "' do not define " + listDeclarations(module, prefix));
  return Error::success();
}

} // namespace mlir::kiln
