#include "module/buffer_transfer.h"

#include <algorithm>

namespace kiln {
namespace module {
namespace {

constexpr uint64_t kMinBufferSize = 16;

bool IsHostVisible(kiln_hal_buffer_t* buffer) {
  return (kiln_hal_buffer_memory_type(buffer) &
          KILN_HAL_MEMORY_TYPE_HOST_VISIBLE) != 0;
}

// Allocates a host-visible staging buffer of |length| bytes.
kiln_status_t AllocateStaging(kiln_hal_device_t* device, uint64_t length,
                              kiln_hal_buffer_t** out_buffer) {
  kiln_hal_buffer_params_t params = {};
  params.memory_type = KILN_HAL_MEMORY_TYPE_HOST_VISIBLE;
  params.usage = KILN_HAL_BUFFER_USAGE_TRANSFER | KILN_HAL_BUFFER_USAGE_MAPPING;
  return kiln_hal_allocator_allocate_buffer(
      kiln_hal_device_allocator(device), &params,
      std::max(length, kMinBufferSize), out_buffer);
}

// Records a copy of |length| bytes from source to target into a one-shot
// command buffer, runs it and waits for it.
kiln_status_t CopyOnDevice(kiln_hal_device_t* device, kiln_hal_buffer_t* source,
                           uint64_t source_offset, kiln_hal_buffer_t* target,
                           uint64_t target_offset, uint64_t length) {
  kiln_hal_command_buffer_t* command_buffer = nullptr;
  KILN_RETURN_IF_ERROR(kiln_hal_command_buffer_create(
      device, KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0, &command_buffer));
  kiln_status_t status = kiln_hal_command_buffer_begin(command_buffer);
  if (kiln_status_is_ok(status)) {
    kiln_hal_buffer_ref_t source_ref = {source, 0, source_offset, length};
    kiln_hal_buffer_ref_t target_ref = {target, 0, target_offset, length};
    status = kiln_hal_command_buffer_copy_buffer(command_buffer, source_ref,
                                                 target_ref);
  }
  if (kiln_status_is_ok(status)) {
    status = kiln_hal_command_buffer_end(command_buffer);
  }
  kiln_hal_semaphore_t* semaphore = nullptr;
  if (kiln_status_is_ok(status)) {
    status = kiln_hal_semaphore_create(device, 0, &semaphore);
  }
  if (kiln_status_is_ok(status)) {
    uint64_t value = 1;
    kiln_hal_semaphore_list_t signal = {1, &semaphore, &value};
    kiln_hal_semaphore_list_t wait = {0, nullptr, nullptr};
    status = kiln_hal_device_queue_execute(device, KILN_HAL_QUEUE_AFFINITY_ANY,
                                           &wait, &signal, 1, &command_buffer,
                                           nullptr);
    if (kiln_status_is_ok(status)) {
      status = kiln_hal_semaphore_wait(semaphore, 1, KILN_DURATION_INFINITE);
    }
  }
  if (semaphore) kiln_hal_semaphore_release(semaphore);
  kiln_hal_command_buffer_release(command_buffer);
  return status;
}

}  // namespace

kiln_status_t AllocateTensorBuffer(kiln_hal_device_t* device, uint64_t size,
                                   uint64_t alignment,
                                   kiln_hal_buffer_t** out_buffer) {
  kiln_hal_buffer_params_t params = {};
  params.memory_type = KILN_HAL_MEMORY_TYPE_DEVICE_LOCAL;
  params.usage = KILN_HAL_BUFFER_USAGE_DEFAULT;
  params.min_alignment = alignment;
  return kiln_hal_allocator_allocate_buffer(kiln_hal_device_allocator(device),
                                            &params,
                                            std::max(size, kMinBufferSize),
                                            out_buffer);
}

kiln_status_t WriteBufferFromHost(kiln_hal_device_t* device,
                                  kiln_hal_buffer_t* buffer, uint64_t offset,
                                  const void* data, uint64_t length) {
  if (length == 0) return kiln_ok_status();
  if (IsHostVisible(buffer)) {
    return kiln_hal_buffer_write(buffer, offset, data, length);
  }
  kiln_hal_buffer_t* staging = nullptr;
  KILN_RETURN_IF_ERROR(AllocateStaging(device, length, &staging));
  kiln_status_t status = kiln_hal_buffer_write(staging, 0, data, length);
  if (kiln_status_is_ok(status)) {
    status = CopyOnDevice(device, staging, 0, buffer, offset, length);
  }
  kiln_hal_buffer_release(staging);
  return status;
}

kiln_status_t ReadBufferToHost(kiln_hal_device_t* device,
                               kiln_hal_buffer_t* buffer, uint64_t offset,
                               void* data, uint64_t length) {
  if (length == 0) return kiln_ok_status();
  if (IsHostVisible(buffer)) {
    return kiln_hal_buffer_read(buffer, offset, data, length);
  }
  kiln_hal_buffer_t* staging = nullptr;
  KILN_RETURN_IF_ERROR(AllocateStaging(device, length, &staging));
  kiln_status_t status = CopyOnDevice(device, buffer, offset, staging, 0, length);
  if (kiln_status_is_ok(status)) {
    status = kiln_hal_buffer_read(staging, 0, data, length);
  }
  kiln_hal_buffer_release(staging);
  return status;
}

}  // namespace module
}  // namespace kiln
