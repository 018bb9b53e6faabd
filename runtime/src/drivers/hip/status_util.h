// Statuses inside the HIP driver plugin. A plugin must create and free every
// status through the kiln_hal_host_api_t the runtime gave it (driver_abi.h),
// so these helpers forward to that table. The table is a process-wide
// constant of the runtime that loaded us; it is recorded once by the plugin
// entry point (setHostApi) before any driver object exists, and only read
// afterwards. Thread-safe.
#ifndef KILN_DRIVERS_HIP_STATUS_UTIL_H_
#define KILN_DRIVERS_HIP_STATUS_UTIL_H_

#include "kiln/hal/driver_abi.h"

namespace kiln::hip {

void setHostApi(const kiln_hal_host_api_t* host);
const kiln_hal_host_api_t* hostApi();

kiln_status_t makeStatus(kiln_status_code_t code, const char* format, ...)
    __attribute__((format(printf, 2, 3)));
// Adds context to |status| (consumed); OK stays OK.
kiln_status_t annotate(kiln_status_t status, const char* format, ...)
    __attribute__((format(printf, 2, 3)));
kiln_status_t cloneStatus(kiln_status_t status);
void freeStatus(kiln_status_t status);
kiln_status_code_t statusCode(kiln_status_t status);
const char* statusMessage(kiln_status_t status);
kiln_time_t timeNow();

}  // namespace kiln::hip

#define KILN_HIP_RETURN_IF_ERROR(expr)        \
  do {                                        \
    kiln_status_t kiln_hip_status_ = (expr);  \
    if (kiln_hip_status_) return kiln_hip_status_; \
  } while (0)

#endif  // KILN_DRIVERS_HIP_STATUS_UTIL_H_
