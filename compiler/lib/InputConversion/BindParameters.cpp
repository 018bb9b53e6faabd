//===- BindParameters.cpp - Parameters from an archive --------------------===//
//
// kiln-bind-parameters: function arguments marked {kiln.parameter = "name"}
// become constants holding tensor `name` of a parameter archive (safetensors
// or .npz, read by the runtime's LLVM-free archive/parameter_archive.h), or,
// for load-time parameters, stay arguments (checked against the archive when
// one is given) for kiln-move-constants-to-rodata.
//
//===----------------------------------------------------------------------===//

#include "kiln/InputConversion/Passes.h"

#include "archive/parameter_archive.h"
#include "kiln/Dialect/Kiln/KilnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_BINDPARAMETERSPASS
#include "kiln/InputConversion/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

// The safetensors dtype that holds `element`, or "". i1 is held as BOOL
// bytes only where no constant is built from them (load-time parameters).
StringRef dtypeFor(Type element, bool loadTime) {
  if (element.isF64())
    return "F64";
  if (element.isF32())
    return "F32";
  if (element.isF16())
    return "F16";
  if (element.isBF16())
    return "BF16";
  if (element.isInteger(64))
    return "I64";
  if (element.isInteger(32))
    return "I32";
  if (element.isInteger(16))
    return "I16";
  if (element.isInteger(8))
    return "I8";
  if (element.isInteger(1) && loadTime)
    return "BOOL";
  return "";
}

// An archive read from a file: its bytes and the tensors that point into them.
struct LoadedArchive {
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  ::kiln::archive::ParameterArchive archive;
};

// Reads the archive at `path`, or returns why it cannot.
std::string loadArchive(StringRef path, LoadedArchive &out) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return ("cannot read parameter archive '" + path +
            "': " + buffer.getError().message())
        .str();
  out.buffer = std::move(*buffer);
  return ::kiln::archive::ReadParameterArchive(
      reinterpret_cast<const uint8_t *>(out.buffer->getBufferStart()),
      out.buffer->getBufferSize(), path.str(), &out.archive);
}

struct BindParametersPass
    : public mlir::kiln::impl::BindParametersPassBase<BindParametersPass> {
  using Base::Base;

  void runOnOperation() override {
    // Without an archive, load-time parameters are left as they are (their
    // types are checked where they become rodata).
    if (loadTime && parametersFile.empty())
      return;
    std::optional<LoadedArchive> archive;
    std::string archiveError;
    bool archiveRead = false;
    bool failedAny = false;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      llvm::BitVector erase(func.getNumArguments());
      for (unsigned i = 0; i < func.getNumArguments(); ++i) {
        auto name = func.getArgAttrOfType<StringAttr>(i, kParameterAttrName);
        if (!name)
          continue;
        BlockArgument argument = func.getArgument(i);
        Location loc = argument.getLoc();
        auto report = [&](const Twine &message) {
          emitError(loc) << "argument " << i << " of @" << func.getSymName()
                         << " (parameter '" << name.getValue()
                         << "'): " << message;
          failedAny = true;
        };
        auto type = dyn_cast<RankedTensorType>(argument.getType());
        if (!type || !type.hasStaticShape()) {
          report("a parameter must be a static-shape tensor");
          continue;
        }
        if (parametersFile.empty()) {
          report("no parameter archive was given (kiln-compile "
                 "--parameters=FILE.safetensors or FILE.npz, or "
                 "--parameter-mode=load to give it when the module is "
                 "loaded)");
          continue;
        }
        if (!archiveRead) {
          archive.emplace();
          archiveError = loadArchive(parametersFile, *archive);
          if (!archiveError.empty())
            archive.reset();
          archiveRead = true;
        }
        if (!archive) {
          report(archiveError);
          continue;
        }
        auto found = archive->archive.tensors.find(name.getValue().str());
        if (found == archive->archive.tensors.end()) {
          report("the archive '" + parametersFile + "' has no tensor of that "
                 "name");
          continue;
        }
        const ::kiln::archive::ArchiveTensor &tensor = found->second;
        // Signless integer arguments take signed ("I8") and unsigned
        // ("U8") data of their width alike.
        StringRef dtype = dtypeFor(type.getElementType(), loadTime);
        bool unsignedData = type.getElementType().isInteger() &&
                            dtype.starts_with("I") &&
                            tensor.dtype == ("U" + dtype.drop_front()).str();
        if (dtype.empty() || (tensor.dtype != dtype && !unsignedData)) {
          std::string typeText;
          llvm::raw_string_ostream os(typeText);
          os << type.getElementType();
          report("the archive holds " + tensor.dtype + " data, the argument " +
                 "is " + typeText +
                 (dtype.empty() ? " (no safetensors dtype)" : ""));
          continue;
        }
        if (ArrayRef<int64_t>(tensor.shape) != type.getShape()) {
          auto join = [](ArrayRef<int64_t> shape) {
            return llvm::join(
                llvm::map_range(shape,
                                [](int64_t d) { return std::to_string(d); }),
                "x");
          };
          report("the archive's tensor has shape [" + join(tensor.shape) +
                 "], the argument " + join(type.getShape()));
          continue;
        }
        uint64_t expected = uint64_t(type.getNumElements()) *
                            getStoredByteSize(type.getElementType());
        if (tensor.size != expected) {
          report("the archive's tensor has " + Twine(tensor.size) +
                 " bytes of data; its shape needs " + Twine(expected));
          continue;
        }
        // A load-time parameter is now known to match; its bytes come when
        // the module is loaded.
        if (loadTime)
          continue;
        auto value = DenseElementsAttr::getFromRawBuffer(
            type, ArrayRef<char>(reinterpret_cast<const char *>(tensor.data),
                                 tensor.size));
        OpBuilder b = OpBuilder::atBlockBegin(&func.front());
        Value constant = arith::ConstantOp::create(b, loc, value);
        argument.replaceAllUsesWith(constant);
        erase.set(i);
      }
      if (failed(func.eraseArguments(erase)))
        failedAny = true;
    }
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
