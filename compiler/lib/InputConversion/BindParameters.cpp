//===- BindParameters.cpp - Parameters from an archive --------------------===//
//
// kiln-bind-parameters: function arguments marked {kiln.parameter = "name"}
// become constants holding tensor `name` of a parameter archive (safetensors
// or .npz, ParameterArchive.h).
//
//===----------------------------------------------------------------------===//

#include "kiln/InputConversion/Passes.h"

#include "ParameterArchive.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_BINDPARAMETERSPASS
#include "kiln/InputConversion/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

constexpr StringLiteral kParameterAttr = "kiln.parameter";

// The safetensors dtype that holds `element`, or "".
StringRef dtypeFor(Type element) {
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
  return "";
}

struct BindParametersPass
    : public kiln::impl::BindParametersPassBase<BindParametersPass> {
  using Base::Base;

  void runOnOperation() override {
    std::optional<ParameterArchive> archive;
    std::string archiveError;
    bool archiveRead = false;
    bool failedAny = false;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      llvm::BitVector erase(func.getNumArguments());
      for (unsigned i = 0; i < func.getNumArguments(); ++i) {
        auto name = func.getArgAttrOfType<StringAttr>(i, kParameterAttr);
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
                 "--parameters=FILE.safetensors or FILE.npz)");
          continue;
        }
        if (!archiveRead) {
          llvm::Expected<ParameterArchive> read =
              readParameterArchive(parametersFile);
          if (read)
            archive = std::move(*read);
          else
            archiveError = llvm::toString(read.takeError());
          archiveRead = true;
        }
        if (!archive) {
          report(archiveError);
          continue;
        }
        auto found = archive->tensors.find(name.getValue());
        if (found == archive->tensors.end()) {
          report("the archive '" + parametersFile + "' has no tensor of that "
                 "name");
          continue;
        }
        const ArchiveTensor &tensor = found->second;
        // Signless integer arguments take signed ("I8") and unsigned
        // ("U8") data of their width alike.
        StringRef dtype = dtypeFor(type.getElementType());
        bool unsignedData = type.getElementType().isInteger() &&
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
          std::string shapeText;
          llvm::raw_string_ostream os(shapeText);
          llvm::interleave(tensor.shape, os, "x");
          report("the archive's tensor has shape [" + shapeText +
                 "], the argument " + llvm::join(llvm::map_range(
                                        type.getShape(),
                                        [](int64_t d) {
                                          return std::to_string(d);
                                        }),
                                                    "x"));
          continue;
        }
        uint64_t expected = uint64_t(type.getNumElements()) *
                            type.getElementTypeBitWidth() / 8;
        if (tensor.data.size() != expected) {
          report("the archive's tensor has " + Twine(tensor.data.size()) +
                 " bytes of data; its shape needs " + Twine(expected));
          continue;
        }
        auto value = DenseElementsAttr::getFromRawBuffer(
            type, ArrayRef<char>(tensor.data.data(), tensor.data.size()));
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
