// Fences of kiln/runtime.h: a HAL timeline semaphore and the value that
// means "signaled" (each fence owns its semaphore, so the value is always 1).
#include "api/objects.h"

extern "C" {

kiln_status_t kiln_fence_create(kiln_device_t* device,
                                kiln_fence_t** out_fence) {
  if (!device || !out_fence) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_fence_create: device and out_fence are "
                            "required");
  }
  *out_fence = nullptr;
  kiln_hal_semaphore_t* semaphore = nullptr;
  KILN_RETURN_IF_ERROR(
      kiln_hal_semaphore_create(device->device.get(), 0, &semaphore));
  kiln_fence_t* fence = new kiln_fence_t();
  kiln_device_retain(device);
  fence->device = device;
  fence->semaphore.reset(semaphore);
  fence->value = 1;
  *out_fence = fence;
  return kiln_ok_status();
}

void kiln_fence_retain(kiln_fence_t* fence) {
  if (fence) fence->ref_count.fetch_add(1, std::memory_order_relaxed);
}

void kiln_fence_release(kiln_fence_t* fence) {
  if (fence && fence->ref_count.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    kiln_device_t* device = fence->device;
    delete fence;
    kiln_device_release(device);
  }
}

kiln_status_t kiln_fence_signal(kiln_fence_t* fence) {
  if (!fence) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT, "fence is NULL");
  }
  uint64_t current = 0;
  KILN_RETURN_IF_ERROR(
      kiln_hal_semaphore_query(fence->semaphore.get(), &current));
  if (current >= fence->value) {
    return kiln_make_status(KILN_STATUS_FAILED_PRECONDITION,
                            "fence is already signaled");
  }
  return kiln_hal_semaphore_signal(fence->semaphore.get(), fence->value);
}

void kiln_fence_fail(kiln_fence_t* fence, kiln_status_t status) {
  if (!fence) return;
  kiln_status_t failure =
      kiln_status_is_ok(status)
          ? kiln_make_status(KILN_STATUS_UNKNOWN, "fence failed")
          : kiln_status_clone(status);
  kiln_hal_semaphore_fail(fence->semaphore.get(), failure);
}

kiln_status_t kiln_fence_wait(kiln_fence_t* fence, int64_t timeout_ns) {
  if (!fence) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT, "fence is NULL");
  }
  return kiln_hal_semaphore_wait(fence->semaphore.get(), fence->value,
                                 timeout_ns);
}

kiln_status_t kiln_fence_query(kiln_fence_t* fence, bool* out_signaled) {
  if (!fence || !out_signaled) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_fence_query: fence and out_signaled are "
                            "required");
  }
  *out_signaled = false;
  uint64_t current = 0;
  KILN_RETURN_IF_ERROR(
      kiln_hal_semaphore_query(fence->semaphore.get(), &current));
  *out_signaled = current >= fence->value;
  return kiln_ok_status();
}

}  // extern "C"
