// Timeline semaphores of the HIP driver.
//
// The payload lives on the host (mutex + condition variable, sticky failure
// status), advanced by host signals and by each device's completion thread
// once the device work that signals it finished. In addition the semaphore
// keeps device timepoints: (value, event) pairs recorded by submissions that
// were issued to a stream but have not completed. A later submission that
// waits for such a value makes its stream wait on the event (no host round
// trip); timepoints are dropped once the host payload passes them.
//
// A timepoint also names the queue whose completion signals it, so that a
// host thread waiting for its value can finish that queue's completed
// submissions itself (QueueProgress) instead of waiting for the queue's
// completion thread to notice them: a synchronous call then completes on
// one thread, with no hand-off between threads on its critical path.
//
// Waits from other drivers' queues go through the vtable (host waits) and
// work as usual. Thread-safe.
#ifndef KILN_DRIVERS_HIP_HIP_SEMAPHORE_H_
#define KILN_DRIVERS_HIP_HIP_SEMAPHORE_H_

#include <memory>

#include "drivers/hip/hip_context.h"
#include "kiln/hal/driver_abi.h"

namespace kiln::hip {

// The completions of one device queue, which a waiting thread may advance.
class QueueProgress {
public:
  virtual ~QueueProgress() = default;
  // Finishes the queue's oldest unfinished submission (signals included) on
  // the calling thread if its device work is done, nothing it waits for is
  // pending and no other thread is finishing one; true if it did. Never
  // blocks.
  virtual bool step() = 0;
  // Counts the threads stepping the queue while they wait (the completion
  // thread leaves the polling to them meanwhile).
  virtual void addStepper(int delta) = 0;
};

// A host thread waiting on the semaphore first polls its payload for up to
// |spinNs| (the device's spin_wait_us option) before it sleeps: a waiter
// that sleeps is woken by the signalling thread through the kernel, tens of
// microseconds later under some hypervisors, which short calls notice.
kiln_status_t createSemaphore(uint64_t initialValue, kiln_duration_t spinNs,
                              kiln_hal_semaphore_t** outSemaphore);

bool isHipSemaphore(kiln_hal_semaphore_t* semaphore);

// How a queue may satisfy a wait for |value| on a HIP semaphore:
//   OK with *outEvent null: the payload reached the value;
//   OK with *outEvent set: a stream wait on the event satisfies it;
//   DEADLINE_EXCEEDED: neither happened before |deadline|;
//   the semaphore's failure (a clone) if it failed.
kiln_status_t acquireTimepoint(kiln_hal_semaphore_t* semaphore, uint64_t value,
                               kiln_time_t deadline,
                               std::shared_ptr<Event>* outEvent);

// Records that |event| completes the work that signals |value|, and that
// |progress| (may be empty) finishes that work on the host.
void addTimepoint(kiln_hal_semaphore_t *semaphore, uint64_t value,
                  std::shared_ptr<Event> event,
                  std::weak_ptr<QueueProgress> progress);

}  // namespace kiln::hip

#endif  // KILN_DRIVERS_HIP_HIP_SEMAPHORE_H_
