#include "module/parameter_set.h"

#include <cstring>
#include <new>
#include <utility>

#include "archive/parameter_archive.h"
#include "base/file.h"
#include "module/element_type.h"
#include "module/module_verifier.h"

namespace kiln {
namespace module {

using schema::ElementType;

// Where tensors came from: an archive (its bytes and what was read from
// them) or the host tensors added one by one (their copies).
struct ParameterSet::Source {
  std::string name;         // the archive's path or name, or the tensor's name
  std::string description;  // "archive 'p.npz'", "tensor added as 'w'"
  std::vector<uint8_t> bytes;
  archive::ParameterArchive archive;
};

namespace {

// The safetensors dtype name of a module element type.
const char* DtypeOf(ElementType type) {
  switch (type) {
    case ElementType::I1:
      return "BOOL";
    case ElementType::I8:
      return "I8";
    case ElementType::I16:
      return "I16";
    case ElementType::I32:
      return "I32";
    case ElementType::I64:
      return "I64";
    case ElementType::U8:
      return "U8";
    case ElementType::U16:
      return "U16";
    case ElementType::U32:
      return "U32";
    case ElementType::U64:
      return "U64";
    case ElementType::F16:
      return "F16";
    case ElementType::BF16:
      return "BF16";
    case ElementType::F32:
      return "F32";
    case ElementType::F64:
      return "F64";
    case ElementType::Invalid:
      break;
  }
  return "";
}

// Whether tensor data of |dtype| fills a module tensor of |type|: the same
// type, or an integer of the same width and the other signedness (modules
// keep signless integers as I8..I64).
bool Accepts(ElementType type, const std::string& dtype) {
  std::string expected = DtypeOf(type);
  if (dtype == expected) return true;
  if (expected.size() >= 2 && (expected[0] == 'I' || expected[0] == 'U') &&
      expected != "BOOL") {
    std::string other = (expected[0] == 'I' ? "U" : "I") + expected.substr(1);
    return dtype == other;
  }
  return false;
}

std::string ModuleTypeString(ElementType type, const int64_t* shape,
                             size_t rank) {
  std::string text;
  for (size_t i = 0; i < rank; ++i) text += std::to_string(shape[i]) + "x";
  return text + ElementTypeName(type);
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

}  // namespace

ParameterSet::ParameterSet() = default;
ParameterSet::~ParameterSet() = default;

kiln_status_t ParameterSet::AddArchive(std::unique_ptr<Source> source) {
  std::string error =
      archive::ReadParameterArchive(source->bytes.data(), source->bytes.size(),
                                    source->name, &source->archive);
  if (!error.empty()) {
    return kiln_make_status(KILN_STATUS_DATA_LOSS, "%s", error.c_str());
  }
  for (const auto& [name, tensor] : source->archive.tensors) {
    auto existing = tensors_.find(name);
    if (existing != tensors_.end()) {
      return kiln_make_status(
          KILN_STATUS_ALREADY_EXISTS,
          "parameter '%s' of %s is also in %s; every parameter name must be "
          "given once",
          name.c_str(), source->description.c_str(),
          existing->second.source->description.c_str());
    }
  }
  for (const auto& [name, tensor] : source->archive.tensors) {
    tensors_[name] = {source.get(), tensor.dtype, tensor.shape, tensor.data,
                      tensor.size};
  }
  sources_.push_back(std::move(source));
  return kiln_ok_status();
}

kiln_status_t ParameterSet::AddArchiveFile(const char* path) {
  auto source = std::make_unique<Source>();
  source->name = path;
  source->description = std::string("archive '") + path + "'";
  KILN_RETURN_IF_ERROR(
      readRegularFile(path, "parameter archive", kMaxByteSize, &source->bytes));
  return AddArchive(std::move(source));
}

kiln_status_t ParameterSet::AddArchiveMemory(const void* data, size_t size,
                                             const char* name) {
  auto source = std::make_unique<Source>();
  source->name = name;
  source->description = std::string("archive '") + name + "'";
  try {
    const auto* bytes = static_cast<const uint8_t*>(data);
    source->bytes.assign(bytes, bytes + size);
  } catch (const std::bad_alloc&) {
    return kiln_make_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory copying the %zu bytes of parameter "
                            "archive '%s'",
                            size, name);
  }
  return AddArchive(std::move(source));
}

kiln_status_t ParameterSet::AddTensor(const char* name,
                                      ElementType element_type,
                                      const int64_t* shape, size_t rank,
                                      const void* data, size_t size) {
  if (!*name) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "a parameter's name must not be empty");
  }
  uint64_t count = 0, bytes = 0;
  if (!IsValidElementType(element_type) || (rank && !shape) ||
      !ComputeTensorByteSize(ElementTypeByteSize(element_type), shape, rank,
                             &count, &bytes)) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "parameter '%s': invalid element type %d or shape",
                            name, static_cast<int>(element_type));
  }
  if (bytes != size || (size && !data)) {
    return kiln_make_status(
        KILN_STATUS_INVALID_ARGUMENT,
        "parameter '%s' of type %s needs %llu bytes of data, got %zu%s", name,
        ModuleTypeString(element_type, shape, rank).c_str(),
        static_cast<unsigned long long>(bytes), size, data ? "" : " (NULL)");
  }
  auto existing = tensors_.find(name);
  if (existing != tensors_.end()) {
    return kiln_make_status(KILN_STATUS_ALREADY_EXISTS,
                            "parameter '%s' is already given by %s; every "
                            "parameter name must be given once",
                            name, existing->second.source->description.c_str());
  }
  auto source = std::make_unique<Source>();
  source->name = name;
  source->description = std::string("tensor added as '") + name + "'";
  try {
    const auto* begin = static_cast<const uint8_t*>(data);
    source->bytes.assign(begin, begin + size);
  } catch (const std::bad_alloc&) {
    return kiln_make_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory copying the %zu bytes of parameter "
                            "'%s'",
                            size, name);
  }
  tensors_[name] = {source.get(), DtypeOf(element_type),
                    std::vector<int64_t>(shape, shape + rank),
                    source->bytes.data(), size};
  sources_.push_back(std::move(source));
  return kiln_ok_status();
}

std::string ParameterSet::DescribeNames() const {
  if (tensors_.empty()) return "the parameters given hold no tensors";
  constexpr size_t kListed = 16;
  std::string text = "the parameters given have: ";
  size_t listed = 0;
  for (const auto& [name, tensor] : tensors_) {
    if (listed == kListed) {
      text += ", ... (" + std::to_string(tensors_.size()) + " in all)";
      break;
    }
    if (listed++) text += ", ";
    text += "'" + name + "'";
  }
  return text;
}

kiln_status_t ResolveRodata(const ModuleImage& image,
                            const ParameterSet* parameters,
                            std::vector<RodataBytes>* out) {
  out->clear();
  const auto* rodata = image.module().rodata();
  if (!rodata) return kiln_ok_status();
  const char* module = image.source().c_str();
  // How many parameters the module needs, for the message when none were
  // given.
  size_t needed = 0;
  for (const schema::Rodata* entry : *rodata)
    if (entry->parameter()) ++needed;
  for (const schema::Rodata* entry : *rodata) {
    const schema::ParameterRef* parameter = entry->parameter();
    if (!parameter) {
      out->push_back({entry->data() ? entry->data()->data() : nullptr,
                      entry->data() ? entry->data()->size() : 0});
      continue;
    }
    // The verifier checked the name, the type and its size.
    const char* name = parameter->name()->c_str();
    const schema::TensorType& type = *parameter->type();
    const int64_t* shape = type.shape() ? type.shape()->data() : nullptr;
    size_t rank = type.shape() ? type.shape()->size() : 0;
    std::string expected = ModuleTypeString(type.element_type(), shape, rank);
    if (!parameters) {
      return kiln_make_status(
          KILN_STATUS_FAILED_PRECONDITION,
          "module '%s' needs %zu load-time parameter%s, the first '%s' (%s), "
          "and none were given: load it with parameters "
          "(kiln_module_load_*_with_parameters; kiln-run --parameters=FILE; "
          "device.load(module, parameters=...))",
          module, needed, needed == 1 ? "" : "s", name, expected.c_str());
    }
    auto found = parameters->tensors_.find(name);
    if (found == parameters->tensors_.end()) {
      return kiln_make_status(KILN_STATUS_NOT_FOUND,
                              "module '%s' needs parameter '%s' (%s), which "
                              "no parameter given has; %s",
                              module, name, expected.c_str(),
                              parameters->DescribeNames().c_str());
    }
    const ParameterSet::Tensor& tensor = found->second;
    bool same_shape = tensor.shape.size() == rank &&
                      (rank == 0 || std::memcmp(tensor.shape.data(), shape,
                                                rank * sizeof(int64_t)) == 0);
    if (!Accepts(type.element_type(), tensor.dtype) || !same_shape) {
      return kiln_make_status(
          KILN_STATUS_INVALID_ARGUMENT,
          "parameter '%s' of module '%s': expected %s, found %s %s in %s", name,
          module, expected.c_str(), tensor.dtype.c_str(),
          ShapeString(tensor.shape).c_str(),
          tensor.source->description.c_str());
    }
    uint64_t count = 0, bytes = 0;
    ComputeTensorByteSize(ElementTypeByteSize(type.element_type()), shape, rank,
                          &count, &bytes);
    if (tensor.size != bytes) {
      return kiln_make_status(
          KILN_STATUS_INVALID_ARGUMENT,
          "parameter '%s' of module '%s': %s holds %llu bytes for it; %s "
          "needs %llu",
          name, module, tensor.source->description.c_str(),
          static_cast<unsigned long long>(tensor.size), expected.c_str(),
          static_cast<unsigned long long>(bytes));
    }
    out->push_back({tensor.data, tensor.size});
  }
  return kiln_ok_status();
}

}  // namespace module
}  // namespace kiln
