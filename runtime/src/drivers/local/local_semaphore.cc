#include "drivers/local/local_semaphore.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <new>

namespace kiln::local {
namespace {

struct LocalSemaphore {
  kiln_hal_semaphore_t base;
  std::mutex mutex;
  std::condition_variable changed;
  uint64_t value = 0;
  kiln_status_t failure = nullptr;  // owned; sticky once set
};

LocalSemaphore* cast(kiln_hal_semaphore_t* semaphore) {
  return reinterpret_cast<LocalSemaphore*>(semaphore);
}

void destroy(kiln_hal_resource_t* resource) {
  LocalSemaphore* semaphore =
      cast(reinterpret_cast<kiln_hal_semaphore_t*>(resource));
  kiln_status_free(semaphore->failure);
  delete semaphore;
}

kiln_status_t query(kiln_hal_semaphore_t* base, uint64_t* outValue) {
  LocalSemaphore* semaphore = cast(base);
  std::lock_guard<std::mutex> lock(semaphore->mutex);
  if (semaphore->failure) {
    *outValue = KILN_HAL_SEMAPHORE_FAILURE_VALUE;
    return kiln_status_clone(semaphore->failure);
  }
  *outValue = semaphore->value;
  return nullptr;
}

kiln_status_t signal(kiln_hal_semaphore_t* base, uint64_t value) {
  LocalSemaphore* semaphore = cast(base);
  {
    std::lock_guard<std::mutex> lock(semaphore->mutex);
    if (semaphore->failure) return kiln_status_clone(semaphore->failure);
    if (value <= semaphore->value)
      return kiln_make_status(KILN_STATUS_OUT_OF_RANGE,
                              "semaphore signalled to %llu but its payload is "
                              "already %llu (timelines only move forward)",
                              (unsigned long long)value,
                              (unsigned long long)semaphore->value);
    semaphore->value = value;
  }
  semaphore->changed.notify_all();
  return nullptr;
}

void fail(kiln_hal_semaphore_t* base, kiln_status_t status) {
  LocalSemaphore* semaphore = cast(base);
  {
    std::lock_guard<std::mutex> lock(semaphore->mutex);
    if (semaphore->failure) {
      kiln_status_free(status);  // the first failure wins
      return;
    }
    semaphore->failure = status;
  }
  semaphore->changed.notify_all();
}

kiln_status_t wait(kiln_hal_semaphore_t* base, uint64_t value,
                   kiln_time_t deadline) {
  LocalSemaphore* semaphore = cast(base);
  std::unique_lock<std::mutex> lock(semaphore->mutex);
  while (true) {
    if (semaphore->failure) return kiln_status_clone(semaphore->failure);
    if (semaphore->value >= value) return nullptr;
    if (deadline == KILN_TIME_INFINITE_FUTURE) {
      semaphore->changed.wait(lock);
      continue;
    }
    if (kiln_time_now() >= deadline)
      return kiln_make_status(KILN_STATUS_DEADLINE_EXCEEDED,
                              "semaphore wait for value %llu timed out (payload "
                              "is %llu)",
                              (unsigned long long)value,
                              (unsigned long long)semaphore->value);
    // steady_clock is CLOCK_MONOTONIC on Linux, like kiln_time_t.
    semaphore->changed.wait_until(
        lock, std::chrono::steady_clock::time_point(
                  std::chrono::nanoseconds(deadline)));
  }
}

const kiln_hal_semaphore_vtable_t kVTable = {destroy, query, signal, fail,
                                             wait};

}  // namespace

kiln_status_t createSemaphore(uint64_t initialValue,
                              kiln_hal_semaphore_t** outSemaphore) {
  auto* semaphore = new (std::nothrow) LocalSemaphore();
  if (!semaphore)
    return kiln_make_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory creating a semaphore");
  kiln_hal_resource_initialize(&kVTable, &semaphore->base.resource);
  semaphore->value = initialValue;
  *outSemaphore = &semaphore->base;
  return nullptr;
}

}  // namespace kiln::local
