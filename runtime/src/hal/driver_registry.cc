// The driver registry: driver factories from built-in and external plugins
// (one ABI for both), the drivers created from them, and device URIs.
//
// Thread-safety: one mutex guards the registry's tables. Driver creation runs
// under it too, so that concurrent first uses of a driver create it once.

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/dynamic_library.h"
#include "drivers/local/local_driver.h"
#include "kiln/hal/driver_abi.h"
#include "kiln/hal/hal.h"

namespace {

struct DriverEntry {
  std::string name;
  std::string description;
  std::string pluginPath;  // "" for in-process plugins
  const kiln_hal_driver_factory_t* factory = nullptr;
  kiln_hal_driver_t* driver = nullptr;  // created on first use, owned
};

// Plugin libraries are never unloaded: devices, buffers and semaphores they
// created may outlive the registry (an embedder may release the registry
// first), and their vtables live in the library's code.
std::mutex& pluginLibrariesMutex() {
  static std::mutex mutex;
  return mutex;
}
std::vector<std::unique_ptr<kiln::DynamicLibrary>>& pluginLibraries() {
  static auto* libraries =
      new std::vector<std::unique_ptr<kiln::DynamicLibrary>>();
  return *libraries;
}

bool isValidDriverName(const char* name) {
  if (!name || !*name) return false;
  size_t length = 0;
  for (const char* c = name; *c; ++c, ++length) {
    bool ok = (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
              *c == '_' || *c == '-';
    if (!ok) return false;
  }
  return length < KILN_HAL_MAX_NAME_LENGTH;
}

void copyString(char* target, size_t capacity, const std::string& source) {
  size_t n = source.size() < capacity - 1 ? source.size() : capacity - 1;
  std::memcpy(target, source.data(), n);
  target[n] = 0;
}

}  // namespace

struct kiln_hal_driver_registry_t {
  int32_t refCount = 1;
  std::mutex mutex;
  std::vector<DriverEntry> entries;
  bool builtinsRegistered = false;

  ~kiln_hal_driver_registry_t() {
    for (DriverEntry& entry : entries) kiln_hal_driver_release(entry.driver);
  }

  std::string driverNames() const {
    if (entries.empty()) return "none";
    std::string names;
    for (const DriverEntry& entry : entries) {
      if (!names.empty()) names += ", ";
      names += "'" + entry.name + "'";
    }
    return names;
  }

  // Registers the drivers of |queryFn|. Caller holds |mutex|.
  kiln_status_t registerPlugin(kiln_hal_driver_plugin_query_fn_t queryFn,
                               const std::string& pluginPath) {
    const char* what = pluginPath.empty() ? "built-in driver plugin"
                                          : pluginPath.c_str();
    kiln_hal_driver_plugin_t plugin = {0, nullptr};
    uint32_t pluginVersion =
        queryFn(KILN_HAL_DRIVER_ABI_VERSION, kiln_hal_host_api(), &plugin);
    if (pluginVersion != KILN_HAL_DRIVER_ABI_VERSION)
      return kiln_make_status(
          KILN_STATUS_INCOMPATIBLE,
          "driver plugin '%s' was built for HAL driver ABI version %u but "
          "this runtime provides version %u; rebuild the plugin against this "
          "runtime's kiln/hal/driver_abi.h",
          what, pluginVersion, KILN_HAL_DRIVER_ABI_VERSION);
    if (plugin.factory_count == 0 || !plugin.factories)
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "driver plugin '%s' provides no drivers", what);
    // Check everything first so that a bad plugin registers nothing.
    for (uint32_t i = 0; i < plugin.factory_count; ++i) {
      const kiln_hal_driver_factory_t& factory = plugin.factories[i];
      if (!isValidDriverName(factory.name) || !factory.create_driver)
        return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                                "driver plugin '%s': driver %u has an invalid "
                                "name (want [a-z0-9_-]+) or no create_driver",
                                what, i);
      for (const DriverEntry& entry : entries) {
        if (entry.name == factory.name)
          return kiln_make_status(
              KILN_STATUS_ALREADY_EXISTS,
              "driver plugin '%s': a driver named '%s' is already "
              "registered%s%s",
              what, factory.name,
              entry.pluginPath.empty() ? "" : " by ",
              entry.pluginPath.c_str());
      }
    }
    for (uint32_t i = 0; i < plugin.factory_count; ++i) {
      const kiln_hal_driver_factory_t& factory = plugin.factories[i];
      DriverEntry entry;
      entry.name = factory.name;
      entry.description = factory.description ? factory.description : "";
      entry.pluginPath = pluginPath;
      entry.factory = &factory;
      entries.push_back(std::move(entry));
    }
    return nullptr;
  }

  // Caller holds |mutex|.
  kiln_status_t getDriver(const char* name, kiln_hal_driver_t** outDriver) {
    for (DriverEntry& entry : entries) {
      if (entry.name != name) continue;
      if (!entry.driver) {
        kiln_hal_driver_t* driver = nullptr;
        kiln_status_t status = entry.factory->create_driver(
            entry.factory, kiln_hal_host_api(), &driver);
        if (status)
          return kiln_status_annotate(status, "creating driver '%s'", name);
        if (!driver)
          return kiln_make_status(KILN_STATUS_INTERNAL,
                                  "driver '%s' returned no driver object",
                                  name);
        entry.driver = driver;
      }
      kiln_hal_driver_retain(entry.driver);
      *outDriver = entry.driver;
      return nullptr;
    }
    return kiln_make_status(KILN_STATUS_NOT_FOUND,
                            "no HAL driver named '%s'; registered drivers: %s "
                            "(plugins load from $%s)",
                            name, driverNames().c_str(),
                            KILN_HAL_DRIVER_PLUGINS_ENV);
  }
};

extern "C" {

kiln_status_t kiln_hal_driver_registry_create(
    kiln_hal_driver_registry_t** out_registry) {
  if (!out_registry)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: out_registry is NULL", __func__);
  *out_registry = new (std::nothrow) kiln_hal_driver_registry_t();
  if (!*out_registry)
    return kiln_make_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory creating the driver registry");
  return nullptr;
}

void kiln_hal_driver_registry_retain(kiln_hal_driver_registry_t* registry) {
  if (registry) __atomic_fetch_add(&registry->refCount, 1, __ATOMIC_RELAXED);
}

void kiln_hal_driver_registry_release(kiln_hal_driver_registry_t* registry) {
  if (registry &&
      __atomic_fetch_sub(&registry->refCount, 1, __ATOMIC_ACQ_REL) == 1)
    delete registry;
}

kiln_status_t kiln_hal_driver_registry_register_plugin(
    kiln_hal_driver_registry_t* registry,
    kiln_hal_driver_plugin_query_fn_t query_fn) {
  if (!registry || !query_fn)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: registry or query_fn is NULL", __func__);
  std::lock_guard<std::mutex> lock(registry->mutex);
  return registry->registerPlugin(query_fn, "");
}

kiln_status_t kiln_hal_driver_registry_register_builtin_drivers(
    kiln_hal_driver_registry_t* registry) {
  if (!registry)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: registry is NULL", __func__);
  std::lock_guard<std::mutex> lock(registry->mutex);
  if (registry->builtinsRegistered) return nullptr;
  KILN_RETURN_IF_ERROR(
      registry->registerPlugin(kiln_hal_local_driver_plugin_query, ""));
  registry->builtinsRegistered = true;
  return nullptr;
}

kiln_status_t kiln_hal_driver_registry_load_plugin(
    kiln_hal_driver_registry_t* registry, const char* path) {
  if (!registry || !path || !*path)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: registry or path is NULL/empty", __func__);
  std::unique_ptr<kiln::DynamicLibrary> library;
  kiln_status_t status = kiln::DynamicLibrary::load(path, &library);
  if (status)
    return kiln_status_annotate(status, "loading HAL driver plugin");
  auto queryFn = reinterpret_cast<kiln_hal_driver_plugin_query_fn_t>(
      library->symbol(KILN_HAL_DRIVER_PLUGIN_QUERY_SYMBOL));
  if (!queryFn)
    return kiln_make_status(KILN_STATUS_NOT_FOUND,
                            "'%s' is not a Kiln HAL driver plugin: it does not "
                            "export '%s'",
                            path, KILN_HAL_DRIVER_PLUGIN_QUERY_SYMBOL);
  {
    std::lock_guard<std::mutex> lock(registry->mutex);
    KILN_RETURN_IF_ERROR(registry->registerPlugin(queryFn, path));
  }
  std::lock_guard<std::mutex> lock(pluginLibrariesMutex());
  pluginLibraries().push_back(std::move(library));
  return nullptr;
}

kiln_status_t kiln_hal_driver_registry_load_plugins_from_env(
    kiln_hal_driver_registry_t* registry) {
  if (!registry)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: registry is NULL", __func__);
  const char* value = std::getenv(KILN_HAL_DRIVER_PLUGINS_ENV);
  if (!value) return nullptr;
  std::string list = value;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(':', start);
    if (end == std::string::npos) end = list.size();
    std::string path = list.substr(start, end - start);
    if (!path.empty()) {
      kiln_status_t status =
          kiln_hal_driver_registry_load_plugin(registry, path.c_str());
      if (status)
        return kiln_status_annotate(status, "from $%s",
                                    KILN_HAL_DRIVER_PLUGINS_ENV);
    }
    start = end + 1;
  }
  return nullptr;
}

uint32_t kiln_hal_driver_registry_driver_count(
    kiln_hal_driver_registry_t* registry) {
  if (!registry) return 0;
  std::lock_guard<std::mutex> lock(registry->mutex);
  return uint32_t(registry->entries.size());
}

kiln_status_t kiln_hal_driver_registry_driver_info(
    kiln_hal_driver_registry_t* registry, uint32_t index,
    kiln_hal_driver_info_t* out_info) {
  if (!registry || !out_info)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: registry or out_info is NULL", __func__);
  std::memset(out_info, 0, sizeof(*out_info));
  std::lock_guard<std::mutex> lock(registry->mutex);
  if (index >= registry->entries.size())
    return kiln_make_status(KILN_STATUS_OUT_OF_RANGE,
                            "driver index %u out of range (%zu drivers)",
                            index, registry->entries.size());
  const DriverEntry& entry = registry->entries[index];
  copyString(out_info->name, sizeof(out_info->name), entry.name);
  copyString(out_info->description, sizeof(out_info->description),
             entry.description);
  copyString(out_info->plugin_path, sizeof(out_info->plugin_path),
             entry.pluginPath);
  return nullptr;
}

kiln_status_t kiln_hal_driver_registry_get_driver(
    kiln_hal_driver_registry_t* registry, const char* name,
    kiln_hal_driver_t** out_driver) {
  if (!out_driver)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: out_driver is NULL", __func__);
  *out_driver = nullptr;
  if (!registry || !name)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: registry or name is NULL", __func__);
  std::lock_guard<std::mutex> lock(registry->mutex);
  return registry->getDriver(name, out_driver);
}

kiln_status_t kiln_hal_driver_registry_create_device(
    kiln_hal_driver_registry_t* registry, const char* uri,
    kiln_hal_device_t** out_device) {
  if (!out_device)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: out_device is NULL", __func__);
  *out_device = nullptr;
  if (!registry || !uri)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: registry or uri is NULL", __func__);
  // "<driver>[://<ordinal>][?<options>]".
  std::string text = uri;
  std::string options;
  size_t query = text.find('?');
  if (query != std::string::npos) {
    options = text.substr(query + 1);
    text.resize(query);
  }
  std::string name = text;
  uint32_t ordinal = 0;
  size_t separator = text.find("://");
  if (separator != std::string::npos) {
    name = text.substr(0, separator);
    std::string rest = text.substr(separator + 3);
    if (!rest.empty()) {
      bool digits = rest.size() <= 9;
      for (char c : rest) digits = digits && c >= '0' && c <= '9';
      if (!digits)
        return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                                "device URI '%s': expected '<driver>' or "
                                "'<driver>://<device ordinal>', optionally "
                                "followed by '?key=value&...'",
                                uri);
      ordinal = uint32_t(std::strtoul(rest.c_str(), nullptr, 10));
    }
  }
  if (name.empty())
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "device URI '%s' names no driver", uri);
  kiln_hal_driver_t* driver = nullptr;
  KILN_RETURN_IF_ERROR(
      kiln_hal_driver_registry_get_driver(registry, name.c_str(), &driver));
  uint32_t count = 0;
  kiln_status_t status =
      kiln_hal_driver_enumerate_devices(driver, 0, nullptr, &count);
  if (!status && ordinal >= count) {
    std::string existing =
        count == 0 ? std::string("no devices")
                   : name + "://0 .. " + name + "://" + std::to_string(count - 1);
    status = kiln_make_status(KILN_STATUS_NOT_FOUND,
                              "device URI '%s': driver '%s' has %u device(s): "
                              "%s",
                              uri, name.c_str(), count, existing.c_str());
  }
  if (!status)
    status = kiln_hal_driver_create_device_with_options(
        driver, ordinal, options.c_str(), out_device);
  kiln_hal_driver_release(driver);
  return status;
}

}  // extern "C"
