// Statuses for the code that the drivers share (drivers/common). That code
// runs inside the runtime (the `local` driver) and inside driver plugins
// (`hip`), which must create and free every status through the
// kiln_hal_host_api_t the runtime gave them (driver_abi.h); so these
// helpers take that table from their caller instead of calling the
// runtime's kiln_status_* functions. Stateless and thread-safe.
#ifndef KILN_DRIVERS_COMMON_HOST_STATUS_H_
#define KILN_DRIVERS_COMMON_HOST_STATUS_H_

#include "kiln/hal/driver_abi.h"

namespace kiln::drivers {

kiln_status_t makeStatus(const kiln_hal_host_api_t& host,
                         kiln_status_code_t code, const char* format, ...)
    __attribute__((format(printf, 3, 4)));

// Adds context to |status| (consumed); OK stays OK.
kiln_status_t annotateStatus(const kiln_hal_host_api_t& host,
                             kiln_status_t status, const char* format, ...)
    __attribute__((format(printf, 3, 4)));

}  // namespace kiln::drivers

#endif  // KILN_DRIVERS_COMMON_HOST_STATUS_H_
