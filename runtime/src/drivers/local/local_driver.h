// The built-in `local` CPU driver. It registers through the same plugin ABI
// as external drivers (kiln/hal/driver_abi.h): the registry calls this query
// function exactly like a dlopen'ed plugin's entry symbol.
//
// Devices: the driver exposes KILN_LOCAL_DEVICE_COUNT devices (environment
// variable, default 4) named local://0 .. local://N-1, so that programs using
// several devices (collectives) run on one CPU. All devices of the driver
// share one worker thread pool of KILN_LOCAL_WORKER_COUNT threads (default:
// the number of CPUs); each device has its own in-order queue. Collective
// channels created with the same id on several local devices form one group
// and run collectives through shared memory (local_collective.h).
#ifndef KILN_DRIVERS_LOCAL_LOCAL_DRIVER_H_
#define KILN_DRIVERS_LOCAL_LOCAL_DRIVER_H_

#include "kiln/hal/driver_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_LOCAL_DEVICE_COUNT_ENV "KILN_LOCAL_DEVICE_COUNT"
#define KILN_LOCAL_WORKER_COUNT_ENV "KILN_LOCAL_WORKER_COUNT"
#define KILN_LOCAL_DEFAULT_DEVICE_COUNT 4u

uint32_t kiln_hal_local_driver_plugin_query(uint32_t runtime_abi_version,
                                            const kiln_hal_host_api_t* host,
                                            kiln_hal_driver_plugin_t* out_plugin);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // KILN_DRIVERS_LOCAL_LOCAL_DRIVER_H_
