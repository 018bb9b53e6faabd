// Definitions of the opaque handles of kiln/runtime.h, shared by the files
// of the API implementation. Not installed; embedders see only runtime.h.
//
// Every handle except kiln_function_t is reference counted (one atomic
// count; the creator owns the first reference) and retains the objects it
// depends on, so handles may be released in any order. Handles are
// immutable after creation except for their counts, hence thread-safe.
#ifndef KILN_RUNTIME_SRC_API_OBJECTS_H_
#define KILN_RUNTIME_SRC_API_OBJECTS_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/hal/hal.h"
#include "kiln/runtime.h"
#include "module/executor.h"
#include "module/hal_ptr.h"
#include "module/module_image.h"

struct kiln_instance_t {
  std::atomic<int32_t> ref_count{1};
  kiln::module::HalDriverRegistryPtr registry;
};

struct kiln_device_t {
  std::atomic<int32_t> ref_count{1};
  kiln_instance_t* instance = nullptr;  // retained
  kiln::module::HalDevicePtr device;
  std::string uri;
};

// Owned by its module (not reference counted); |module| is a back pointer.
struct kiln_function_t {
  kiln_module_t* module = nullptr;
  size_t index = 0;
};

struct kiln_module_t {
  std::atomic<int32_t> ref_count{1};
  kiln_device_t* device = nullptr;  // retained
  std::shared_ptr<const kiln::module::ModuleImage> image;
  std::unique_ptr<kiln::module::ModuleExecutor> executor;
  std::vector<kiln_function_t> functions;
};

struct kiln_buffer_view_t {
  std::atomic<int32_t> ref_count{1};
  kiln_device_t* device = nullptr;  // retained
  kiln::module::HalBufferPtr buffer;
  uint64_t byte_length = 0;  // of the tensor (the buffer may be larger)
  uint64_t element_count = 0;
  kiln_element_type_t element_type = KILN_ELEMENT_TYPE_INVALID;
  std::vector<int64_t> shape;
  // The timepoint at which the contents are ready (the call that produced
  // the view); null for views created from host data.
  kiln::module::HalSemaphorePtr ready_semaphore;
  uint64_t ready_value = 0;
};

struct kiln_fence_t {
  std::atomic<int32_t> ref_count{1};
  kiln_device_t* device = nullptr;  // retained
  kiln::module::HalSemaphorePtr semaphore;
  uint64_t value = 1;
};

namespace kiln {
namespace api {

// Creates a view over |buffer| (reference taken) on |device|.
kiln_buffer_view_t* WrapBuffer(kiln_device_t* device, kiln_hal_buffer_t* buffer,
                               kiln_element_type_t element_type,
                               const int64_t* shape, size_t rank,
                               uint64_t element_count, uint64_t byte_length);

// "2x3xf32" for a type given as element type + shape.
std::string FormatTensorType(kiln_element_type_t element_type,
                             const int64_t* shape, size_t rank);

}  // namespace api
}  // namespace kiln

#endif  // KILN_RUNTIME_SRC_API_OBJECTS_H_
