// ParameterSet: the named tensors given when a module is loaded
// (kiln_parameters_t), and the resolution of a module's load-time parameters
// (Rodata.parameter) against them.
//
// A set collects tensors from parameter archives (safetensors or .npz files
// or bytes, read with archive/parameter_archive.h when added, so a corrupt
// archive is an error of the add) and from host tensors added one by one.
// Every name is unique across the set: a second tensor of a name already
// present is ALREADY_EXISTS naming both sources. The set owns copies of all
// the bytes; the caller's buffers may be freed after each add.
//
// Ownership: the set owns its tensors. Thread-safety: adding is not
// thread-safe; once filled, the set is read-only and ResolveRodata may run on
// many threads at once (concurrent loads on several devices).
#ifndef KILN_RUNTIME_SRC_MODULE_PARAMETER_SET_H_
#define KILN_RUNTIME_SRC_MODULE_PARAMETER_SET_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/status.h"
#include "module/module_image.h"

namespace kiln {
namespace module {

// The bytes of one rodata segment as the device gets them: the module's own
// data or a parameter's bytes (borrowed from the image or the set).
struct RodataBytes {
  const uint8_t* data = nullptr;
  uint64_t size = 0;
};

class ParameterSet {
 public:
  ParameterSet();
  ~ParameterSet();
  ParameterSet(const ParameterSet&) = delete;
  ParameterSet& operator=(const ParameterSet&) = delete;

  // Reads the safetensors or .npz archive at |path| (a regular file) and
  // adds its tensors. NOT_FOUND / PERMISSION_DENIED / INVALID_ARGUMENT for a
  // file that cannot be read; DATA_LOSS for one that is not a valid archive
  // (the message says what is wrong); ALREADY_EXISTS for a tensor name the
  // set has.
  kiln_status_t AddArchiveFile(const char* path);
  // The same for an archive of |size| bytes at |data| (copied), called
  // |name| in messages.
  kiln_status_t AddArchiveMemory(const void* data, size_t size,
                                 const char* name);
  // Adds tensor |name| of |element_type| and |shape| whose dense row-major
  // bytes are the |size| bytes at |data| (copied). INVALID_ARGUMENT for a
  // bad type or a size other than the type's.
  kiln_status_t AddTensor(const char* name, schema::ElementType element_type,
                          const int64_t* shape, size_t rank, const void* data,
                          size_t size);

  size_t size() const { return tensors_.size(); }

 private:
  friend kiln_status_t ResolveRodata(const ModuleImage& image,
                                     const ParameterSet* parameters,
                                     std::vector<RodataBytes>* out);
  struct Source;
  struct Tensor {
    const Source* source = nullptr;
    std::string dtype;  // safetensors dtype name
    std::vector<int64_t> shape;
    const uint8_t* data = nullptr;
    uint64_t size = 0;
  };

  kiln_status_t AddArchive(std::unique_ptr<Source> source);
  // "w, b, ... (N in all)": the names the set has, for NOT_FOUND messages.
  std::string DescribeNames() const;

  std::vector<std::unique_ptr<Source>> sources_;
  std::map<std::string, Tensor> tensors_;
};

// The bytes of each rodata segment of |image|, in order: the module's data,
// or for a load-time parameter the tensor of that name in |parameters|
// (which must outlive the use of |out|). Errors name the module and the
// parameter: FAILED_PRECONDITION when the module has parameters and
// |parameters| is null (none were given); NOT_FOUND for a name the set lacks
// (listing what it has); INVALID_ARGUMENT for an element type, shape or byte
// size other than the module's (expected and found). Signless integer
// parameters (i8..i64) take signed and unsigned data of their width, i1
// takes BOOL.
kiln_status_t ResolveRodata(const ModuleImage& image,
                            const ParameterSet* parameters,
                            std::vector<RodataBytes>* out);

}  // namespace module
}  // namespace kiln

#endif  // KILN_RUNTIME_SRC_MODULE_PARAMETER_SET_H_
