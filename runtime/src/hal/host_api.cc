// The host services table given to driver plugins (driver_abi.h).

#include "kiln/hal/driver_abi.h"

extern "C" {

const kiln_hal_host_api_t* kiln_hal_host_api(void) {
  static const kiln_hal_host_api_t api = {
      KILN_HAL_DRIVER_ABI_VERSION,
      0,
      kiln_make_status_v,
      kiln_status_annotate_v,
      kiln_status_clone,
      kiln_status_free,
      kiln_status_code,
      kiln_status_message,
      kiln_time_now,
  };
  return &api;
}

}  // extern "C"
