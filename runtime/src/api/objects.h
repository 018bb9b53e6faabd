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
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kiln/hal/hal.h"
#include "kiln/runtime.h"
#include "module/executor.h"
#include "module/hal_ptr.h"
#include "module/module_image.h"
#include "module/parameter_set.h"

struct kiln_instance_t {
  std::atomic<int32_t> ref_count{1};
  kiln::module::HalDriverRegistryPtr registry;
  // Serializes loading installed plugins on demand (kiln_device_create).
  std::mutex plugin_mutex;
};

namespace kiln {
namespace api {

// A device's place in a collective group. The channels split from the world
// channel for module channels are cached per (grid shape, axes), so modules
// loaded later reuse them; every rank loads modules in the same order, so
// every rank splits the same channels in the same order.
struct CollectiveMembership {
  int32_t rank = 0;
  int32_t world_size = 0;
  kiln::module::HalChannelPtr world_channel;
  std::mutex mutex;  // guards sub_channels
  std::map<std::pair<std::vector<int64_t>, std::vector<int16_t>>,
           kiln::module::HalChannelPtr>
      sub_channels;
};

}  // namespace api
}  // namespace kiln

struct kiln_device_t {
  std::atomic<int32_t> ref_count{1};
  kiln_instance_t* instance = nullptr;  // retained
  kiln::module::HalDevicePtr device;
  std::string uri;
  // Collective group membership: |in_group| is claimed when a group starts
  // forming; |membership| is set once its world channel exists. Both are
  // cleared when the group is released. Guarded by |mutex|.
  mutable std::mutex mutex;
  bool in_group = false;
  std::shared_ptr<kiln::api::CollectiveMembership> membership;
};

struct kiln_collective_group_t {
  std::atomic<int32_t> ref_count{1};
  int32_t world_size = 0;
  int32_t first_rank = 0;
  std::vector<kiln_device_t*> devices;  // retained
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

// Unlike other handles, a parameter set changes while tensors are added
// (see kiln/runtime.h for the threading rules).
struct kiln_parameters_t {
  std::atomic<int32_t> ref_count{1};
  kiln::module::ParameterSet set;
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

// Checks a tensor type given to the C API (|what| names the entry point) and
// computes its element count and byte size.
kiln_status_t CheckTensorType(const char* what,
                              kiln_element_type_t element_type, size_t rank,
                              const int64_t* shape, uint64_t* element_count,
                              uint64_t* byte_length);

// The C API's and the HAL's external memory types (same values, separate
// enums so that the HAL's can grow without the C API's).
static_assert(
    int(KILN_EXTERNAL_MEMORY_HOST) == int(KILN_HAL_EXTERNAL_MEMORY_HOST) &&
        int(KILN_EXTERNAL_MEMORY_CUDA) == int(KILN_HAL_EXTERNAL_MEMORY_CUDA) &&
        int(KILN_EXTERNAL_MEMORY_ROCM) == int(KILN_HAL_EXTERNAL_MEMORY_ROCM),
    "external memory types differ");
inline kiln_external_memory_type_t ToExternalMemoryType(
    kiln_hal_external_memory_type_t type) {
  return static_cast<kiln_external_memory_type_t>(type);
}
inline kiln_hal_external_memory_type_t ToHalExternalMemoryType(
    kiln_external_memory_type_t type) {
  return static_cast<kiln_hal_external_memory_type_t>(type);
}

// Creates a view over |buffer| (reference taken) on |device|.
kiln_buffer_view_t* WrapBuffer(kiln_device_t* device, kiln_hal_buffer_t* buffer,
                               kiln_element_type_t element_type,
                               const int64_t* shape, size_t rank,
                               uint64_t element_count, uint64_t byte_length);

// The channels of each function of |image| loaded on |device| (empty when the
// device is in no group; see kiln::module::FunctionChannels). Splits the
// group's world channel where a module channel needs a sub-group: a
// collective operation, run by every rank's load at once.
kiln_status_t ResolveModuleChannels(
    kiln_device_t* device, const kiln::module::ModuleImage& image,
    std::vector<kiln::module::FunctionChannels>* out_channels);

// "2x3xf32" for a type given as element type + shape.
std::string FormatTensorType(kiln_element_type_t element_type,
                             const int64_t* shape, size_t rank);

}  // namespace api
}  // namespace kiln

#endif  // KILN_RUNTIME_SRC_API_OBJECTS_H_
