// ModuleImage: the verified, immutable bytes of one .vmfb module.
//
// Creating an image copies the bytes into memory it owns (aligned for the
// schema's force_align fields), checks the "KILN" identifier, runs the
// FlatBuffers verifier over the whole buffer and then the semantic checks of
// module_verifier.h. Only a verified image is ever handed out, so the rest of
// the runtime can index the FlatBuffer without re-checking bounds.
//
// The image also precomputes what every caller of a function needs: the
// element type, shape and byte size of each input and output.
//
// Ownership: shared (std::shared_ptr<const ModuleImage>); a module loaded on
// several devices shares one image. Thread-safety: immutable after creation,
// safe to read from any thread.
#ifndef KILN_RUNTIME_SRC_MODULE_MODULE_IMAGE_H_
#define KILN_RUNTIME_SRC_MODULE_MODULE_IMAGE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/schemas/module_generated.h"
#include "kiln/status.h"

namespace kiln {
namespace module {

// Element type, shape and dense row-major size of a tensor at a function
// boundary.
struct TensorLayout {
  schema::ElementType element_type = schema::ElementType::Invalid;
  std::vector<int64_t> shape;
  uint64_t element_count = 0;
  uint64_t byte_size = 0;
};

struct FunctionLayout {
  const schema::Function* function = nullptr;  // points into the image
  std::string name;
  std::vector<TensorLayout> inputs;
  std::vector<TensorLayout> outputs;
};

// The largest module: FlatBuffers offsets are 32-bit signed.
constexpr size_t kMaxModuleBytes = FLATBUFFERS_MAX_BUFFER_SIZE;

class ModuleImage {
 public:
  // Copies |size| bytes from |data| and verifies them. |source| names where
  // the bytes came from (a path, "<memory>") in error messages.
  static kiln_status_t CreateFromMemory(const void* data, size_t size,
                                        const char* source,
                                        std::shared_ptr<const ModuleImage>* out);
  // Reads the file at |path| and verifies it. Only a regular file of at
  // most kMaxModuleBytes is read (see readRegularFile).
  static kiln_status_t CreateFromFile(const char* path,
                                      std::shared_ptr<const ModuleImage>* out);

  ~ModuleImage();
  ModuleImage(const ModuleImage&) = delete;
  ModuleImage& operator=(const ModuleImage&) = delete;

  const schema::Module& module() const { return *module_; }
  const uint8_t* data() const { return data_; }
  // Size of the verified FlatBuffer (the file less its integrity trailer).
  size_t size() const { return size_; }
  const std::string& source() const { return source_; }

  const std::vector<FunctionLayout>& functions() const { return functions_; }
  // Index of the function called |name|, or -1.
  int FindFunction(const char* name) const;

 private:
  ModuleImage() = default;

  uint8_t* data_ = nullptr;  // aligned allocation owned by the image
  size_t size_ = 0;
  std::string source_;
  const schema::Module* module_ = nullptr;
  std::vector<FunctionLayout> functions_;
};

}  // namespace module
}  // namespace kiln

#endif  // KILN_RUNTIME_SRC_MODULE_MODULE_IMAGE_H_
