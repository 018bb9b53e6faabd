// A minimal out-of-tree style driver plugin for the registry tests: driver
// "cts_fake" with two devices that cannot be opened (no hardware), creating
// its statuses through the host API as the ABI requires.
#include <stdio.h>
#include <stdlib.h>

#include "kiln/hal/driver_abi.h"

static const kiln_hal_host_api_t* g_host;

static kiln_status_t make_status(kiln_status_code_t code, const char* format,
                                 ...) {
  va_list args;
  va_start(args, format);
  kiln_status_t status = g_host->status_make_v(code, format, args);
  va_end(args);
  return status;
}

static void fake_destroy(kiln_hal_resource_t* resource) {
  free(resource);  // the resource begins the driver object
}

static kiln_status_t fake_enumerate(kiln_hal_driver_t* driver,
                                    uint32_t capacity,
                                    kiln_hal_device_info_t* infos,
                                    uint32_t* count) {
  (void)driver;
  *count = 2;
  for (uint32_t i = 0; i < capacity && i < 2; ++i) {
    infos[i].ordinal = i;
    snprintf(infos[i].name, sizeof(infos[i].name), "fake device %u", i);
  }
  return NULL;
}

static kiln_status_t fake_create_device(kiln_hal_driver_t* driver,
                                        uint32_t ordinal,
                                        const char* options,
                                        kiln_hal_device_t** out_device) {
  (void)driver;
  (void)options;
  (void)out_device;
  return make_status(KILN_STATUS_UNAVAILABLE,
                     "fake device %u has no hardware behind it", ordinal);
}

static const kiln_hal_driver_vtable_t fake_vtable = {
    fake_destroy, fake_enumerate, fake_create_device};

static kiln_status_t fake_create_driver(const kiln_hal_driver_factory_t* factory,
                                        const kiln_hal_host_api_t* host,
                                        kiln_hal_driver_t** out_driver) {
  g_host = host;
  kiln_hal_driver_t* driver = (kiln_hal_driver_t*)calloc(1, sizeof(*driver));
  if (!driver) return make_status(KILN_STATUS_RESOURCE_EXHAUSTED, "oom");
  kiln_hal_resource_initialize(&fake_vtable, &driver->resource);
  driver->name = factory->name;
  *out_driver = driver;
  return NULL;
}

static const kiln_hal_driver_factory_t factories[] = {
    {"cts_fake", "a fake driver for registry tests", fake_create_driver, NULL},
};

__attribute__((visibility("default"))) uint32_t kiln_hal_driver_plugin_query(
    uint32_t runtime_abi_version, const kiln_hal_host_api_t* host,
    kiln_hal_driver_plugin_t* out_plugin) {
  g_host = host;
  if (runtime_abi_version == KILN_HAL_DRIVER_ABI_VERSION) {
    out_plugin->factory_count = 1;
    out_plugin->factories = factories;
  }
  return KILN_HAL_DRIVER_ABI_VERSION;
}
