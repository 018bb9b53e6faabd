//===- BindParameters.cpp - Parameters from an archive --------------------===//
//
// kiln-bind-parameters: function arguments marked {kiln.parameter = "name"}
// become constants holding tensor `name` of a safetensors archive.
//
//===----------------------------------------------------------------------===//

#include "kiln/InputConversion/Passes.h"

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

namespace {

constexpr StringLiteral kParameterAttr = "kiln.parameter";

// One tensor of the archive: its dtype name, shape and bytes.
struct ArchiveTensor {
  std::string dtype;
  SmallVector<int64_t> shape;
  StringRef data;
};

// A safetensors file, read whole; tensors point into `buffer`.
struct Archive {
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  llvm::StringMap<ArchiveTensor> tensors;
};

// Reads `path`; on failure, `error` says why.
std::optional<Archive> readArchive(StringRef path, std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error = "cannot read parameter archive '" + path.str() +
            "': " + buffer.getError().message();
    return std::nullopt;
  }
  Archive archive;
  archive.buffer = std::move(*buffer);
  StringRef bytes = archive.buffer->getBuffer();
  auto fail = [&](const Twine &why) {
    error = ("parameter archive '" + path + "' is not a valid safetensors "
             "file: " + why).str();
    return std::nullopt;
  };
  if (bytes.size() < 8)
    return fail("shorter than its 8-byte header length");
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = headerSize << 8 | uint8_t(bytes[i]);
  if (headerSize > bytes.size() - 8)
    return fail("its header length (" + Twine(headerSize) +
                ") runs past the end of the file");
  StringRef header = bytes.substr(8, headerSize);
  StringRef data = bytes.substr(8 + headerSize);
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(header);
  if (!json)
    return fail("its header is not JSON (" + llvm::toString(json.takeError()) +
                ")");
  const llvm::json::Object *object = json->getAsObject();
  if (!object)
    return fail("its header is not a JSON object");
  for (const auto &[key, value] : *object) {
    if (key == "__metadata__")
      continue;
    const llvm::json::Object *entry = value.getAsObject();
    if (!entry)
      return fail("entry '" + key.str() + "' is not an object");
    std::optional<StringRef> dtype = entry->getString("dtype");
    const llvm::json::Array *shape = entry->getArray("shape");
    const llvm::json::Array *offsets = entry->getArray("data_offsets");
    if (!dtype || !shape || !offsets || offsets->size() != 2)
      return fail("entry '" + key.str() +
                  "' lacks dtype, shape or two data_offsets");
    ArchiveTensor tensor;
    tensor.dtype = dtype->str();
    for (const llvm::json::Value &d : *shape) {
      std::optional<int64_t> extent = d.getAsInteger();
      if (!extent || *extent < 0)
        return fail("entry '" + key.str() + "' has a bad shape");
      tensor.shape.push_back(*extent);
    }
    std::optional<int64_t> begin = (*offsets)[0].getAsInteger();
    std::optional<int64_t> end = (*offsets)[1].getAsInteger();
    if (!begin || !end || *begin < 0 || *end < *begin ||
        uint64_t(*end) > data.size())
      return fail("entry '" + key.str() + "' has data offsets outside the " +
                  Twine(data.size()) + " bytes of data");
    tensor.data = data.slice(*begin, *end);
    archive.tensors[key.str()] = std::move(tensor);
  }
  return archive;
}

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
    std::optional<Archive> archive;
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
                 "--parameters=FILE.safetensors)");
          continue;
        }
        if (!archiveRead) {
          archive = readArchive(parametersFile, archiveError);
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
        StringRef dtype = dtypeFor(type.getElementType());
        if (dtype.empty() || tensor.dtype != dtype) {
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
