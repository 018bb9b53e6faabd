// Timeline semaphore of the local driver: a payload guarded by a mutex, a
// condition variable for waiters and a sticky failure status. Thread-safe.
#ifndef KILN_DRIVERS_LOCAL_LOCAL_SEMAPHORE_H_
#define KILN_DRIVERS_LOCAL_LOCAL_SEMAPHORE_H_

#include "kiln/hal/driver_abi.h"

namespace kiln::local {

kiln_status_t createSemaphore(uint64_t initialValue,
                              kiln_hal_semaphore_t** outSemaphore);

}  // namespace kiln::local

#endif  // KILN_DRIVERS_LOCAL_LOCAL_SEMAPHORE_H_
