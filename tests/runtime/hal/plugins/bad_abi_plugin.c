// A plugin built for a different (future) driver ABI version.
#include "kiln/hal/driver_abi.h"

__attribute__((visibility("default"))) uint32_t kiln_hal_driver_plugin_query(
    uint32_t runtime_abi_version, const kiln_hal_host_api_t* host,
    kiln_hal_driver_plugin_t* out_plugin) {
  (void)runtime_abi_version;
  (void)host;
  (void)out_plugin;  // must not be filled on a mismatch
  return KILN_HAL_DRIVER_ABI_VERSION + 41;
}
