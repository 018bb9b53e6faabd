#include "drivers/hip/hip_semaphore.h"

#include <chrono>
#include <condition_variable>
#include <atomic>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

namespace kiln::hip {
namespace {

struct Timepoint {
  uint64_t value;
  std::shared_ptr<Event> event;
  std::weak_ptr<QueueProgress> progress;
};

struct HipSemaphore {
  kiln_hal_semaphore_t base;
  std::mutex mutex;
  std::condition_variable changed;
  uint64_t value = 0;
  kiln_status_t failure = nullptr;  // owned; sticky once set
  std::vector<Timepoint> timepoints;  // values above |value|, ascending
  // What spinning waiters poll without the mutex: |value|, and whether
  // |failure| is set. Written under the mutex.
  std::atomic<uint64_t> publishedValue{0};
  std::atomic<bool> failed{false};
  kiln_duration_t spinNs = 0;

  // Polls until the payload reaches |target|, the semaphore fails, or the
  // spin time (bounded by |deadline|) is over. True when the payload
  // reached |target| with no failure (then the wait is over without the
  // mutex, which the signalling thread may still hold); otherwise the
  // caller decides under the mutex.
  // While it polls, the waiter steps the queue that signals |target| (if a
  // timepoint names one): it finishes the submission itself as soon as the
  // device is done with it.
  bool spinFor(uint64_t target, kiln_time_t deadline) {
    if (spinNs <= 0)
      return false;
    kiln_time_t now = timeNow();
    kiln_time_t until = deadline - now < spinNs ? deadline : now + spinNs;
    std::shared_ptr<QueueProgress> progress = progressFor(target);
    struct Stepper {
      QueueProgress *progress;
      explicit Stepper(QueueProgress *progress) : progress(progress) {
        if (progress)
          progress->addStepper(1);
      }
      ~Stepper() {
        if (progress)
          progress->addStepper(-1);
      }
    } stepper(progress.get());
    while (true) {
      // |failed| first: a failure is published before the payload could
      // be read as reached after it (failures are sticky).
      if (failed.load(std::memory_order_acquire))
        return false;
      if (publishedValue.load(std::memory_order_acquire) >= target)
        return !failed.load(std::memory_order_acquire);
      if (timeNow() >= until)
        return false;
      if (!progress || !progress->step())
        std::this_thread::yield();
    }
  }

  // The queue that finishes the first timepoint at or above |target|.
  std::shared_ptr<QueueProgress> progressFor(uint64_t target) {
    std::lock_guard<std::mutex> lock(mutex);
    for (const Timepoint &timepoint : timepoints)
      if (timepoint.value >= target)
        return timepoint.progress.lock();
    return nullptr;
  }

  void dropReachedTimepoints() {
    size_t keep = 0;
    while (keep < timepoints.size() && timepoints[keep].value <= value) ++keep;
    timepoints.erase(timepoints.begin(), timepoints.begin() + long(keep));
  }

  // Waits on |changed| until |deadline|; false when it passed.
  bool waitUntil(std::unique_lock<std::mutex>& lock, kiln_time_t deadline) {
    if (deadline == KILN_TIME_INFINITE_FUTURE) {
      changed.wait(lock);
      return true;
    }
    if (timeNow() >= deadline) return false;
    // steady_clock is CLOCK_MONOTONIC on Linux, like kiln_time_t.
    changed.wait_until(lock, std::chrono::steady_clock::time_point(
                                 std::chrono::nanoseconds(deadline)));
    return true;
  }
};

HipSemaphore* cast(kiln_hal_semaphore_t* semaphore) {
  return reinterpret_cast<HipSemaphore*>(semaphore);
}

void destroy(kiln_hal_resource_t* resource) {
  HipSemaphore* semaphore =
      cast(reinterpret_cast<kiln_hal_semaphore_t*>(resource));
  freeStatus(semaphore->failure);
  delete semaphore;
}

kiln_status_t query(kiln_hal_semaphore_t* base, uint64_t* outValue) {
  HipSemaphore* semaphore = cast(base);
  std::lock_guard<std::mutex> lock(semaphore->mutex);
  if (semaphore->failure) {
    *outValue = KILN_HAL_SEMAPHORE_FAILURE_VALUE;
    return cloneStatus(semaphore->failure);
  }
  *outValue = semaphore->value;
  return nullptr;
}

kiln_status_t signal(kiln_hal_semaphore_t* base, uint64_t value) {
  HipSemaphore* semaphore = cast(base);
  {
    std::lock_guard<std::mutex> lock(semaphore->mutex);
    if (semaphore->failure) return cloneStatus(semaphore->failure);
    if (value <= semaphore->value)
      return makeStatus(KILN_STATUS_OUT_OF_RANGE,
                        "semaphore signalled to %llu but its payload is "
                        "already %llu (timelines only move forward)",
                        (unsigned long long)value,
                        (unsigned long long)semaphore->value);
    semaphore->value = value;
    semaphore->publishedValue.store(value, std::memory_order_release);
    semaphore->dropReachedTimepoints();
  }
  semaphore->changed.notify_all();
  return nullptr;
}

void fail(kiln_hal_semaphore_t* base, kiln_status_t status) {
  HipSemaphore* semaphore = cast(base);
  std::vector<Timepoint> dropped;
  {
    std::lock_guard<std::mutex> lock(semaphore->mutex);
    if (semaphore->failure) {
      freeStatus(status);  // the first failure wins
      return;
    }
    semaphore->failure = status;
    semaphore->failed.store(true, std::memory_order_release);
    dropped.swap(semaphore->timepoints);
  }
  semaphore->changed.notify_all();
  // |dropped| releases its events here, outside the lock.
}

kiln_status_t wait(kiln_hal_semaphore_t* base, uint64_t value,
                   kiln_time_t deadline) {
  HipSemaphore* semaphore = cast(base);
  if (semaphore->spinFor(value, deadline))
    return nullptr;
  std::unique_lock<std::mutex> lock(semaphore->mutex);
  while (true) {
    if (semaphore->failure) return cloneStatus(semaphore->failure);
    if (semaphore->value >= value) return nullptr;
    if (!semaphore->waitUntil(lock, deadline))
      return makeStatus(KILN_STATUS_DEADLINE_EXCEEDED,
                        "semaphore wait for value %llu timed out (payload is "
                        "%llu)",
                        (unsigned long long)value,
                        (unsigned long long)semaphore->value);
  }
}

const kiln_hal_semaphore_vtable_t kVTable = {destroy, query, signal, fail,
                                             wait};

}  // namespace

kiln_status_t createSemaphore(uint64_t initialValue, kiln_duration_t spinNs,
                              kiln_hal_semaphore_t** outSemaphore) {
  auto* semaphore = new (std::nothrow) HipSemaphore();
  if (!semaphore)
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED,
                      "out of memory creating a semaphore");
  kiln_hal_resource_initialize(&kVTable, &semaphore->base.resource);
  semaphore->value = initialValue;
  semaphore->publishedValue.store(initialValue, std::memory_order_relaxed);
  semaphore->spinNs = spinNs;
  *outSemaphore = &semaphore->base;
  return nullptr;
}

bool isHipSemaphore(kiln_hal_semaphore_t* semaphore) {
  return semaphore && semaphore->resource.vtable == &kVTable;
}

kiln_status_t acquireTimepoint(kiln_hal_semaphore_t* base, uint64_t value,
                               kiln_time_t deadline,
                               std::shared_ptr<Event>* outEvent) {
  HipSemaphore* semaphore = cast(base);
  outEvent->reset();
  std::unique_lock<std::mutex> lock(semaphore->mutex);
  while (true) {
    if (semaphore->failure) return cloneStatus(semaphore->failure);
    if (semaphore->value >= value) return nullptr;
    // The first timepoint at or above the value completes no earlier than
    // the work signalling the value itself (timelines are monotonic).
    for (const Timepoint& timepoint : semaphore->timepoints) {
      if (timepoint.value >= value) {
        *outEvent = timepoint.event;
        return nullptr;
      }
    }
    if (!semaphore->waitUntil(lock, deadline))
      return makeStatus(KILN_STATUS_DEADLINE_EXCEEDED,
                        "no submission signals the semaphore to %llu yet",
                        (unsigned long long)value);
  }
}

void addTimepoint(kiln_hal_semaphore_t *base, uint64_t value,
                  std::shared_ptr<Event> event,
                  std::weak_ptr<QueueProgress> progress) {
  HipSemaphore* semaphore = cast(base);
  {
    std::lock_guard<std::mutex> lock(semaphore->mutex);
    if (semaphore->failure || semaphore->value >= value) return;
    auto position = semaphore->timepoints.begin();
    while (position != semaphore->timepoints.end() && position->value < value)
      ++position;
    semaphore->timepoints.insert(
        position, Timepoint{value, std::move(event), std::move(progress)});
  }
  semaphore->changed.notify_all();
}

}  // namespace kiln::hip
