// std::unique_ptr aliases that release HAL objects (one owned reference).
// Header-only; same thread-safety as the objects.
#ifndef KILN_RUNTIME_SRC_MODULE_HAL_PTR_H_
#define KILN_RUNTIME_SRC_MODULE_HAL_PTR_H_

#include <memory>

#include "kiln/hal/hal.h"

namespace kiln {
namespace module {

#define KILN_DEFINE_HAL_PTR(Name, type, release)             \
  struct Name##Deleter {                                     \
    void operator()(type* object) const { release(object); } \
  };                                                         \
  using Name = std::unique_ptr<type, Name##Deleter>

KILN_DEFINE_HAL_PTR(HalDevicePtr, kiln_hal_device_t, kiln_hal_device_release);
KILN_DEFINE_HAL_PTR(HalBufferPtr, kiln_hal_buffer_t, kiln_hal_buffer_release);
KILN_DEFINE_HAL_PTR(HalSemaphorePtr, kiln_hal_semaphore_t,
                    kiln_hal_semaphore_release);
KILN_DEFINE_HAL_PTR(HalCommandBufferPtr, kiln_hal_command_buffer_t,
                    kiln_hal_command_buffer_release);
KILN_DEFINE_HAL_PTR(HalExecutableCachePtr, kiln_hal_executable_cache_t,
                    kiln_hal_executable_cache_release);
KILN_DEFINE_HAL_PTR(HalExecutablePtr, kiln_hal_executable_t,
                    kiln_hal_executable_release);
KILN_DEFINE_HAL_PTR(HalChannelPtr, kiln_hal_channel_t,
                    kiln_hal_channel_release);
KILN_DEFINE_HAL_PTR(HalWindowPtr, kiln_hal_window_t, kiln_hal_window_release);
KILN_DEFINE_HAL_PTR(HalDriverRegistryPtr, kiln_hal_driver_registry_t,
                    kiln_hal_driver_registry_release);

#undef KILN_DEFINE_HAL_PTR

}  // namespace module
}  // namespace kiln

#endif  // KILN_RUNTIME_SRC_MODULE_HAL_PTR_H_
