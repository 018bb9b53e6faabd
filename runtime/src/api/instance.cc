// Instance and device objects of kiln/runtime.h.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "api/objects.h"

namespace {

std::string ListDevices(kiln_instance_t* instance) {
  std::string list;
  kiln_hal_driver_registry_t* registry = instance->registry.get();
  uint32_t driver_count = kiln_hal_driver_registry_driver_count(registry);
  for (uint32_t i = 0; i < driver_count; ++i) {
    kiln_hal_driver_info_t info = {};
    kiln_status_t status = kiln_hal_driver_registry_driver_info(registry, i,
                                                                &info);
    if (!kiln_status_is_ok(status)) {
      kiln_status_free(status);
      continue;
    }
    kiln_hal_driver_t* driver = nullptr;
    status = kiln_hal_driver_registry_get_driver(registry, info.name, &driver);
    if (!kiln_status_is_ok(status)) {
      kiln_status_free(status);
      continue;
    }
    uint32_t count = 0;
    status = kiln_hal_driver_enumerate_devices(driver, 0, nullptr, &count);
    std::vector<kiln_hal_device_info_t> devices(count);
    if (kiln_status_is_ok(status) && count > 0) {
      status = kiln_hal_driver_enumerate_devices(driver, count, devices.data(),
                                                 &count);
    }
    if (kiln_status_is_ok(status)) {
      for (uint32_t d = 0; d < count && d < devices.size(); ++d) {
        list += std::string(info.name) + "://" +
                std::to_string(devices[d].ordinal) + "\n";
      }
    } else {
      kiln_status_free(status);
    }
    kiln_hal_driver_release(driver);
  }
  return list;
}

}  // namespace

extern "C" {

kiln_status_t kiln_instance_create(const kiln_instance_options_t* options,
                                   kiln_instance_t** out_instance) {
  if (!out_instance) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "out_instance is NULL");
  }
  *out_instance = nullptr;
  kiln_hal_driver_registry_t* registry = nullptr;
  KILN_RETURN_IF_ERROR(kiln_hal_driver_registry_create(&registry));
  kiln_instance_t* instance = new kiln_instance_t();
  instance->registry.reset(registry);
  kiln_status_t status =
      kiln_hal_driver_registry_register_builtin_drivers(registry);
  if (kiln_status_is_ok(status) &&
      !(options && options->ignore_plugin_environment)) {
    status = kiln_hal_driver_registry_load_plugins_from_env(registry);
  }
  if (kiln_status_is_ok(status) && options) {
    for (size_t i = 0; i < options->plugin_path_count; ++i) {
      status = kiln_hal_driver_registry_load_plugin(
          registry, options->plugin_paths ? options->plugin_paths[i] : nullptr);
      if (!kiln_status_is_ok(status)) break;
    }
  }
  if (!kiln_status_is_ok(status)) {
    kiln_instance_release(instance);
    return status;
  }
  *out_instance = instance;
  return kiln_ok_status();
}

void kiln_instance_retain(kiln_instance_t* instance) {
  if (instance) instance->ref_count.fetch_add(1, std::memory_order_relaxed);
}

void kiln_instance_release(kiln_instance_t* instance) {
  if (instance &&
      instance->ref_count.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    delete instance;
  }
}

kiln_status_t kiln_instance_load_plugin(kiln_instance_t* instance,
                                        const char* path) {
  if (!instance || !path) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_instance_load_plugin: instance and path are "
                            "required");
  }
  return kiln_hal_driver_registry_load_plugin(instance->registry.get(), path);
}

size_t kiln_instance_list_devices(kiln_instance_t* instance, char* buffer,
                                  size_t capacity) {
  std::string list = instance ? ListDevices(instance) : std::string();
  if (capacity > 0) std::snprintf(buffer, capacity, "%s", list.c_str());
  return list.size();
}

}  // extern "C"

namespace {

bool HasDriver(kiln_hal_driver_registry_t* registry, const std::string& name) {
  for (uint32_t i = 0; i < kiln_hal_driver_registry_driver_count(registry); ++i) {
    kiln_hal_driver_info_t info = {};
    kiln_status_t status = kiln_hal_driver_registry_driver_info(registry, i, &info);
    bool match = kiln_status_is_ok(status) && name == info.name;
    kiln_status_free(status);
    if (match) return true;
  }
  return false;
}

// The folder of the library (or program) holding the runtime: where driver
// plugins are installed next to libkiln_runtime.so. "" if unknown.
std::string RuntimeDirectory() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void*>(&kiln_instance_create), &info) ||
      !info.dli_fname)
    return "";
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// For a URI naming a driver the instance lacks ("hip", "hip://1"): loads
// the plugin installed for it, libkiln_hal_<driver>.so next to the runtime,
// if there is one. OK when there is none (the caller reports the unknown
// driver); the plugin's own failure otherwise.
kiln_status_t LoadInstalledPlugin(kiln_instance_t* instance, const char* uri) {
  std::string name(uri);
  name = name.substr(0, name.find("://"));
  if (name.empty() || name.find_first_not_of(
                          "abcdefghijklmnopqrstuvwxyz0123456789_") !=
                          std::string::npos)
    return kiln_ok_status();
  std::lock_guard<std::mutex> lock(instance->plugin_mutex);
  if (HasDriver(instance->registry.get(), name)) return kiln_ok_status();
  std::string directory = RuntimeDirectory();
  if (directory.empty()) return kiln_ok_status();
  std::string path = directory + "/libkiln_hal_" + name + ".so";
  if (access(path.c_str(), F_OK) != 0) return kiln_ok_status();
  kiln_status_t status =
      kiln_hal_driver_registry_load_plugin(instance->registry.get(), path.c_str());
  if (!kiln_status_is_ok(status))
    return kiln_status_annotate(status, "loading the installed plugin of "
                                "driver '%s'", name.c_str());
  return kiln_ok_status();
}

}  // namespace

extern "C" {

size_t kiln_plugin_directory(char* buffer, size_t capacity) {
  std::string directory = RuntimeDirectory();
  if (buffer && capacity > 0)
    std::snprintf(buffer, capacity, "%s", directory.c_str());
  return directory.size();
}

kiln_status_t kiln_device_create(kiln_instance_t* instance, const char* uri,
                                 kiln_device_t** out_device) {
  if (!instance || !uri || !out_device) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_device_create: instance, uri and out_device "
                            "are required");
  }
  *out_device = nullptr;
  KILN_RETURN_IF_ERROR(LoadInstalledPlugin(instance, uri));
  kiln_hal_device_t* hal_device = nullptr;
  kiln_status_t status = kiln_hal_driver_registry_create_device(
      instance->registry.get(), uri, &hal_device);
  if (!kiln_status_is_ok(status)) {
    std::string available = ListDevices(instance);
    if (!available.empty()) available.pop_back();  // the last '\n'
    for (size_t at = available.find('\n'); at != std::string::npos;
         at = available.find('\n', at)) {
      available.replace(at, 1, ", ");
    }
    return kiln_status_annotate(status, "cannot create device '%s'; available "
                                "devices: %s", uri,
                                available.empty() ? "(none)"
                                                  : available.c_str());
  }
  kiln_device_t* device = new kiln_device_t();
  kiln_instance_retain(instance);
  device->instance = instance;
  device->device.reset(hal_device);
  device->uri = uri;
  *out_device = device;
  return kiln_ok_status();
}

void kiln_device_retain(kiln_device_t* device) {
  if (device) device->ref_count.fetch_add(1, std::memory_order_relaxed);
}

void kiln_device_release(kiln_device_t* device) {
  if (device && device->ref_count.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    kiln_instance_t* instance = device->instance;
    delete device;
    kiln_instance_release(instance);
  }
}

const char* kiln_device_uri(const kiln_device_t* device) {
  return device ? device->uri.c_str() : "";
}

kiln_status_t kiln_device_query_memory_stats(
    kiln_device_t* device, kiln_device_memory_stats_t* out_stats) {
  if (!device || !out_stats)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_device_query_memory_stats: device and "
                            "out_stats are required");
  kiln_hal_device_memory_stats_t stats = {};
  kiln_status_t status =
      kiln_hal_device_query_memory_stats(device->device.get(), &stats);
  *out_stats = kiln_device_memory_stats_t{
      stats.bytes_in_use,        stats.bytes_cached,
      stats.bytes_limit,         stats.peak_bytes_reserved,
      stats.system_allocations,  stats.system_frees,
      stats.cache_hits};
  if (!kiln_status_is_ok(status))
    return kiln_status_annotate(status, "device '%s'", device->uri.c_str());
  return status;
}

kiln_status_t kiln_device_trim(kiln_device_t* device) {
  if (!device)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_device_trim: device is NULL");
  kiln_status_t status = kiln_hal_device_trim(device->device.get());
  if (!kiln_status_is_ok(status))
    return kiln_status_annotate(status, "device '%s'", device->uri.c_str());
  return status;
}

kiln_status_t kiln_device_query_external_info(
    kiln_device_t* device, kiln_device_external_info_t* out_info) {
  if (!device || !out_info)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_device_query_external_info: device and "
                            "out_info are required");
  kiln_hal_device_external_info_t info = {};
  kiln_status_t status =
      kiln_hal_device_query_external_info(device->device.get(), &info);
  *out_info = kiln_device_external_info_t{
      kiln::api::ToExternalMemoryType(info.memory_type), info.device_ordinal,
      info.stream};
  if (!kiln_status_is_ok(status))
    return kiln_status_annotate(status, "device '%s'", device->uri.c_str());
  return status;
}

kiln_status_t kiln_device_wait_external_stream(kiln_device_t* device,
                                               uint64_t stream) {
  if (!device)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_device_wait_external_stream: device is "
                            "NULL");
  kiln_status_t status =
      kiln_hal_device_wait_external_stream(device->device.get(), stream);
  if (!kiln_status_is_ok(status))
    return kiln_status_annotate(status, "device '%s'", device->uri.c_str());
  return status;
}

}  // extern "C"
