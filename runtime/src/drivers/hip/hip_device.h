// A device of the HIP driver: one GPU, its allocator and one queue served by
// one HIP stream and two threads.
//
// Queue operations (alloca, dealloca, execute) are appended to the queue
// and return at once; the caller never blocks on semaphores. The issue
// thread takes them in submission order and resolves each wait:
//   - a HIP semaphore already at the value: nothing to do;
//   - a HIP semaphore with a device timepoint (an event recorded by an
//     issued submission that signals the value): the stream waits on the
//     event, on the device;
//   - otherwise (value not signalled by anything issued yet, or a semaphore
//     of another driver): the issue thread waits on the host, which defers
//     this and every later submission without blocking their callers.
// It then issues the work onto the stream, records an event after it and
// adds that event as a timepoint to the signal semaphores (so dependent work
// can start on the device without a host round trip). The completion
// thread waits for the events in order and then signals the semaphores on
// the host, or fails them: with the issue error, with a device error, or
// with the failure of a semaphore the submission waited for. Failures thus
// reach every waiter, host or device.
//
// Releasing the last reference stops the queue: submissions whose waits
// are already satisfiable still run, those still waiting are failed with
// ABORTED (their signal semaphores too), then the threads are joined after
// the device finished the issued work. Thread-safe.
#ifndef KILN_DRIVERS_HIP_HIP_DEVICE_H_
#define KILN_DRIVERS_HIP_HIP_DEVICE_H_

#include <memory>

#include "drivers/hip/hip_context.h"
#include "kiln/hal/driver_abi.h"

namespace kiln::hip {

// |driver| is retained by the device. |context| describes the GPU.
kiln_status_t createDevice(kiln_hal_driver_t* driver,
                           std::shared_ptr<const DeviceContext> context,
                           kiln_hal_device_t** outDevice);

}  // namespace kiln::hip

#endif  // KILN_DRIVERS_HIP_HIP_DEVICE_H_
