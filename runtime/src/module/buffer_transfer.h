// Host <-> device transfers and the allocation of tensor buffers, for any
// HAL device: host-visible buffers are accessed through the HAL's
// read/write (a mapping); others go through a host-visible staging buffer and
// a one-shot copy command on the device queue.
//
// These calls are synchronous (they wait for the staging copy) and must not
// race with device work touching the same range. Thread-safe otherwise.
#ifndef KILN_RUNTIME_SRC_MODULE_BUFFER_TRANSFER_H_
#define KILN_RUNTIME_SRC_MODULE_BUFFER_TRANSFER_H_

#include <cstdint>

#include "kiln/hal/hal.h"

namespace kiln {
namespace module {

// Allocates a device-local buffer usable by dispatches, transfers and
// collectives, of at least |size| bytes (a zero size still gets a small
// buffer, so empty tensors have storage to bind). |alignment| 0: default.
kiln_status_t AllocateTensorBuffer(kiln_hal_device_t* device, uint64_t size,
                                   uint64_t alignment,
                                   kiln_hal_buffer_t** out_buffer);

kiln_status_t WriteBufferFromHost(kiln_hal_device_t* device,
                                  kiln_hal_buffer_t* buffer, uint64_t offset,
                                  const void* data, uint64_t length);

kiln_status_t ReadBufferToHost(kiln_hal_device_t* device,
                               kiln_hal_buffer_t* buffer, uint64_t offset,
                               void* data, uint64_t length);

}  // namespace module
}  // namespace kiln

#endif  // KILN_RUNTIME_SRC_MODULE_BUFFER_TRANSFER_H_
