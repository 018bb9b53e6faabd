#include "module/module_image.h"

#include <cstdlib>
#include <cstring>

#include "base/file.h"
#include "module/element_type.h"
#include "module/module_verifier.h"

namespace kiln {
namespace module {

namespace {
// The schema's largest force_align (Rodata.data).
constexpr size_t kImageAlignment = 64;
}  // namespace

ModuleImage::~ModuleImage() { std::free(data_); }

kiln_status_t ModuleImage::CreateFromMemory(
    const void* data, size_t size, const char* source,
    std::shared_ptr<const ModuleImage>* out) {
  out->reset();
  if (!data && size != 0) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "module data is NULL but size is %zu", size);
  }
  if (!source) source = "<memory>";
  if (size > kMaxModuleBytes) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "module '%s' is %zu bytes; a module has at most "
                            "%zu (the FlatBuffers limit)",
                            source, size, kMaxModuleBytes);
  }
  std::shared_ptr<ModuleImage> image(new ModuleImage());
  image->source_ = source;
  // FlatBuffers offsets are relative to the buffer start, so an aligned copy
  // makes every aligned field aligned in memory too.
  size_t capacity = (size + kImageAlignment - 1) / kImageAlignment *
                    kImageAlignment;
  if (capacity == 0) capacity = kImageAlignment;
  image->data_ =
      static_cast<uint8_t*>(std::aligned_alloc(kImageAlignment, capacity));
  if (!image->data_) {
    return kiln_make_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                            "cannot allocate %zu bytes for module '%s'", size,
                            source);
  }
  if (size) std::memcpy(image->data_, data, size);
  KILN_RETURN_IF_ERROR(
      VerifyModule(image->data_, size, source, &image->size_));
  image->module_ = schema::GetModule(image->data_);

  if (const auto* functions = image->module_->functions()) {
    image->functions_.reserve(functions->size());
    for (const schema::Function* function : *functions) {
      FunctionLayout layout;
      layout.function = function;
      layout.name = function->name()->str();
      auto add = [](const flatbuffers::Vector<
                        flatbuffers::Offset<schema::TensorType>>* types,
                    std::vector<TensorLayout>* out_layouts) {
        if (!types) return;
        for (const schema::TensorType* type : *types) {
          TensorLayout tensor;
          tensor.element_type = type->element_type();
          if (type->shape()) {
            tensor.shape.assign(type->shape()->begin(), type->shape()->end());
          }
          // Verified: cannot fail.
          ComputeTensorByteSize(ElementTypeByteSize(tensor.element_type),
                                tensor.shape.data(), tensor.shape.size(),
                                &tensor.element_count, &tensor.byte_size);
          out_layouts->push_back(std::move(tensor));
        }
      };
      add(function->inputs(), &layout.inputs);
      add(function->outputs(), &layout.outputs);
      image->functions_.push_back(std::move(layout));
    }
  }
  *out = std::move(image);
  return kiln_ok_status();
}

kiln_status_t ModuleImage::CreateFromFile(
    const char* path, std::shared_ptr<const ModuleImage>* out) {
  out->reset();
  if (!path) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "module path is NULL");
  }
  std::vector<uint8_t> bytes;
  KILN_RETURN_IF_ERROR(
      readRegularFile(path, "module file", kMaxModuleBytes, &bytes));
  return CreateFromMemory(bytes.data(), bytes.size(), path, out);
}

int ModuleImage::FindFunction(const char* name) const {
  if (!name) return -1;
  for (size_t i = 0; i < functions_.size(); ++i) {
    if (functions_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace module
}  // namespace kiln
