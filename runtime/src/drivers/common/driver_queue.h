// The queue plumbing of a device that both drivers share: queue operations
// (alloca, dealloca, execute) owning references to what they use, the
// thread-safe queue that carries them from the callers of queue_* to the
// device's queue thread, and the signalling of an operation's semaphores
// when it is done. How an operation waits and runs is the driver's.
#ifndef KILN_DRIVERS_COMMON_DRIVER_QUEUE_H_
#define KILN_DRIVERS_COMMON_DRIVER_QUEUE_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "kiln/hal/driver_abi.h"

namespace kiln::drivers {

// A retained copy of a semaphore list. Not thread-safe.
struct SemaphoreList {
  std::vector<kiln_hal_semaphore_t*> semaphores;
  std::vector<uint64_t> values;

  SemaphoreList() = default;
  SemaphoreList(const SemaphoreList&) = delete;
  SemaphoreList& operator=(const SemaphoreList&) = delete;
  ~SemaphoreList();

  // Copies |list|, retaining its semaphores. Call once, on an empty list.
  void assign(const kiln_hal_semaphore_list_t& list);
};

// The vtable of |semaphore| (of any driver).
inline const kiln_hal_semaphore_vtable_t* semaphoreVTable(
    kiln_hal_semaphore_t* semaphore) {
  return static_cast<const kiln_hal_semaphore_vtable_t*>(
      semaphore->resource.vtable);
}

// Ends an operation: signals every semaphore of |signal| to its value or,
// when |status| is a failure, fails each with a copy of it (|status| is not
// consumed). A semaphore that cannot take its value (already past it, or
// failed) is failed with that error, so that its waiters learn about it.
void signalOrFail(const kiln_hal_host_api_t& host, const SemaphoreList& signal,
                  kiln_status_t status);

enum class OperationKind { Alloca, Dealloca, Execute };

// One queue operation; owns references to everything it uses, released
// when it is destroyed. Built by the caller of queue_*, then owned by the
// queue thread. Not thread-safe.
struct QueueOperation {
  QueueOperation(OperationKind kind, const kiln_hal_semaphore_list_t& wait,
                 const kiln_hal_semaphore_list_t& signal);
  ~QueueOperation();
  QueueOperation(const QueueOperation&) = delete;
  QueueOperation& operator=(const QueueOperation&) = delete;

  // Makes |target| (retained) the buffer of an alloca or dealloca.
  void setBuffer(kiln_hal_buffer_t* target);

  // Appends a copy of the binding table of the next command buffer: its
  // buffers retained, open lengths (WHOLE_BUFFER) resolved (the HAL core
  // checked the ranges). Returns the copy, valid while the operation lives,
  // for the driver to validate against the command buffer.
  kiln_hal_binding_table_t addBindingTable(
      const kiln_hal_binding_table_t& table);

  // Appends |commandBuffer| (retained); its table was added before.
  void addCommandBuffer(kiln_hal_command_buffer_t* commandBuffer);

  OperationKind kind;
  SemaphoreList wait;
  SemaphoreList signal;
  kiln_hal_buffer_t* buffer = nullptr;  // alloca / dealloca, retained
  std::vector<kiln_hal_command_buffer_t*> commandBuffers;  // retained
  // One resolved binding table per command buffer (buffers retained).
  std::vector<std::vector<kiln_hal_binding_t>> tables;
  // Execute of queue_execute_profiled: where the timings go (the caller's,
  // valid until the signal semaphores are signalled). Null otherwise.
  kiln_hal_execution_profile_t* profile = nullptr;
};

// The queue of a device: operations in submission order, pushed by the
// callers of queue_* and taken by the device's queue thread. |Operation| is
// QueueOperation or a driver's struct extending it. Thread-safe.
template <typename Operation>
class OperationQueue {
 public:
  void push(std::unique_ptr<Operation> operation) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      queue.push_back(std::move(operation));
      size.fetch_add(1, std::memory_order_release);
    }
    changed.notify_one();
  }

  // The next operation; blocks while there is none. Returns nullptr once
  // the queue is stopped and drained. With |spinNs|, polls for up to that
  // long before sleeping, so that a push soon after costs no wake-up.
  std::unique_ptr<Operation> pop(kiln_duration_t spinNs = 0) {
    if (spinNs > 0) {
      auto until = std::chrono::steady_clock::now() +
                   std::chrono::nanoseconds(spinNs);
      while (size.load(std::memory_order_acquire) == 0 &&
             !stopRequested.load(std::memory_order_acquire) &&
             std::chrono::steady_clock::now() < until)
        std::this_thread::yield();
    }
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [this] { return stopping || !queue.empty(); });
    if (queue.empty()) return nullptr;
    std::unique_ptr<Operation> operation = std::move(queue.front());
    queue.pop_front();
    size.fetch_sub(1, std::memory_order_relaxed);
    return operation;
  }

  // Stops the queue (the device is being destroyed). Operations already
  // queued are still returned by pop(); queue threads polling isStopping()
  // give up their waits.
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
      stopRequested.store(true, std::memory_order_release);
    }
    changed.notify_all();
  }

  bool isStopping() const {
    return stopRequested.load(std::memory_order_acquire);
  }

 private:
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::unique_ptr<Operation>> queue;
  bool stopping = false;
  // queue.size() and |stopping| for pop's polling (written under |mutex|).
  std::atomic<size_t> size{0};
  std::atomic<bool> stopRequested{false};
};

}  // namespace kiln::drivers

#endif  // KILN_DRIVERS_COMMON_DRIVER_QUEUE_H_
