// A device of the local driver: an allocator of host memory and one in-order
// queue served by a dedicated thread. Queue operations are appended to the
// queue and return at once; the queue thread waits for each operation's wait
// semaphores (through the semaphore vtable, so semaphores of any driver
// work), runs it and signals or fails its signal semaphores. The caller's
// thread never blocks on a wait. Thread-safe.
//
// Releasing the last reference stops the queue: operations whose waits are
// already satisfiable still run, operations still waiting are failed with
// ABORTED (their signal semaphores too), then the thread is joined.
#ifndef KILN_DRIVERS_LOCAL_LOCAL_DEVICE_H_
#define KILN_DRIVERS_LOCAL_LOCAL_DEVICE_H_

#include <memory>

#include "base/thread_pool.h"
#include "drivers/local/local_collective.h"
#include "kiln/hal/driver_abi.h"

namespace kiln::local {

// |driver| is retained by the device. |pool| and |hub| are shared by all
// devices of the driver. |memoryLimit| caps the bytes the device's block
// cache reserves (0: no limit).
kiln_status_t createDevice(kiln_hal_driver_t* driver, uint32_t ordinal,
                           std::shared_ptr<ThreadPool> pool,
                           std::shared_ptr<CollectiveHub> hub,
                           uint64_t memoryLimit, kiln_hal_device_t** outDevice);

}  // namespace kiln::local

#endif  // KILN_DRIVERS_LOCAL_LOCAL_DEVICE_H_
