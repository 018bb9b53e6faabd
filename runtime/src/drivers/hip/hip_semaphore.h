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
// Waits from other drivers' queues go through the vtable (host waits) and
// work as usual. Thread-safe.
#ifndef KILN_DRIVERS_HIP_HIP_SEMAPHORE_H_
#define KILN_DRIVERS_HIP_HIP_SEMAPHORE_H_

#include <memory>

#include "drivers/hip/hip_context.h"
#include "kiln/hal/driver_abi.h"

namespace kiln::hip {

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

// Records that |event| completes the work that signals |value|.
void addTimepoint(kiln_hal_semaphore_t* semaphore, uint64_t value,
                  std::shared_ptr<Event> event);

}  // namespace kiln::hip

#endif  // KILN_DRIVERS_HIP_HIP_SEMAPHORE_H_
