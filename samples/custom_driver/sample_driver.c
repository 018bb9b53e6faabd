// The plugin entry point, the host API wrappers and the driver object of the
// `sample` HAL driver. Start reading here; sample_driver.h lists the rest.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "sample_driver.h"

//===----------------------------------------------------------------------===//
// Host API
//===----------------------------------------------------------------------===//

// The runtime's services (status creation, clock). The one piece of global
// state of the plugin: a process has one runtime, so every registry that
// loads the plugin passes the same table. Written atomically because two
// registries may query the plugin from two threads.
static const kiln_hal_host_api_t* g_host;

void sample_set_host_api(const kiln_hal_host_api_t* host) {
  __atomic_store_n(&g_host, host, __ATOMIC_RELEASE);
}

static const kiln_hal_host_api_t* host_api(void) {
  return __atomic_load_n(&g_host, __ATOMIC_ACQUIRE);
}

kiln_status_t sample_status(kiln_status_code_t code, const char* format, ...) {
  va_list args;
  va_start(args, format);
  kiln_status_t status = host_api()->status_make_v(code, format, args);
  va_end(args);
  return status;
}

kiln_status_t sample_annotate(kiln_status_t status, const char* format, ...) {
  va_list args;
  va_start(args, format);
  status = host_api()->status_annotate_v(status, format, args);
  va_end(args);
  return status;
}

kiln_status_t sample_status_clone(kiln_status_t status) {
  return host_api()->status_clone(status);
}

void sample_status_free(kiln_status_t status) {
  host_api()->status_free(status);
}

kiln_status_code_t sample_status_code(kiln_status_t status) {
  return host_api()->status_code(status);
}

kiln_time_t sample_time_now(void) { return host_api()->time_now(); }

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//
// A driver enumerates and opens the devices of one device API. The sample
// driver has exactly one device, `sample://0`; a real driver would ask its
// device library here (and fail create_driver with UNAVAILABLE, naming what
// it looked for, when the library or the hardware is missing).

#define SAMPLE_DEVICE_COUNT 1u

static void driver_destroy(kiln_hal_resource_t* resource) {
  free(resource);  // the resource begins the driver object
}

// Lets `kiln-run --list-devices` and the CTS see which devices exist without
// opening them. |out_infos| may be NULL when |capacity| is 0.
static kiln_status_t driver_enumerate_devices(kiln_hal_driver_t* driver,
                                              uint32_t capacity,
                                              kiln_hal_device_info_t* out_infos,
                                              uint32_t* out_count) {
  (void)driver;
  *out_count = SAMPLE_DEVICE_COUNT;
  for (uint32_t i = 0; i < capacity && i < SAMPLE_DEVICE_COUNT; ++i) {
    out_infos[i].ordinal = i;
    snprintf(out_infos[i].name, sizeof(out_infos[i].name),
             "sample serial CPU device %u", i);
  }
  return NULL;
}

// Opens device |ordinal| (the N of "sample://N"). An ordinal that does not
// exist is NOT_FOUND, which the registry turns into a message listing the
// devices that do.
static kiln_status_t driver_create_device(kiln_hal_driver_t* driver,
                                          uint32_t ordinal,
                                          const char* options,
                                          kiln_hal_device_t** out_device) {
  if (options[0] != '\0')
    return sample_status(KILN_STATUS_INVALID_ARGUMENT,
                         "sample://%u?%s: the sample driver takes no device "
                         "options",
                         ordinal, options);
  if (ordinal >= SAMPLE_DEVICE_COUNT)
    return sample_status(KILN_STATUS_NOT_FOUND,
                         "the sample driver has %u device(s); sample://%u "
                         "does not exist",
                         SAMPLE_DEVICE_COUNT, ordinal);
  return sample_device_create(driver, ordinal, out_device);
}

static const kiln_hal_driver_vtable_t driver_vtable = {
    driver_destroy,
    driver_enumerate_devices,
    driver_create_device,
};

// Called by the registry the first time someone asks for "sample". This is
// where a real driver loads its device library.
static kiln_status_t create_driver(const kiln_hal_driver_factory_t* factory,
                                   const kiln_hal_host_api_t* host,
                                   kiln_hal_driver_t** out_driver) {
  sample_set_host_api(host);
  kiln_hal_driver_t* driver = (kiln_hal_driver_t*)calloc(1, sizeof(*driver));
  if (!driver)
    return sample_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                         "out of memory creating the sample driver");
  kiln_hal_resource_initialize(&driver_vtable, &driver->resource);
  driver->name = factory->name;  // static storage, as the ABI requires
  *out_driver = driver;
  return NULL;
}

//===----------------------------------------------------------------------===//
// Plugin entry point
//===----------------------------------------------------------------------===//

static const kiln_hal_driver_factory_t factories[] = {
    {SAMPLE_DRIVER_NAME,
     "sample out-of-tree driver: runs elf-so-v1 kernels serially on one "
     "queue thread (samples/custom_driver)",
     create_driver, NULL},
};

// The only exported symbol. The runtime passes its ABI version; we answer
// with ours and describe our drivers only when they match, so a runtime of
// another version refuses the plugin with a clear INCOMPATIBLE status
// instead of calling vtables of the wrong layout. No device work here: the
// query must be cheap (`kiln-run --list-devices` queries every plugin).
__attribute__((visibility("default"))) uint32_t kiln_hal_driver_plugin_query(
    uint32_t runtime_abi_version, const kiln_hal_host_api_t* host,
    kiln_hal_driver_plugin_t* out_plugin) {
  if (runtime_abi_version == KILN_HAL_DRIVER_ABI_VERSION && host &&
      out_plugin) {
    sample_set_host_api(host);
    out_plugin->factory_count =
        (uint32_t)(sizeof(factories) / sizeof(factories[0]));
    out_plugin->factories = factories;
  }
  return KILN_HAL_DRIVER_ABI_VERSION;
}
