// The `local` driver object and its plugin entry point.

#include "drivers/local/local_driver.h"

#include <cstdio>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/memory.h"
#include "drivers/common/block_cache.h"
#include "base/thread_pool.h"
#include "drivers/local/local_collective.h"
#include "drivers/local/local_device.h"

namespace kiln::local {
namespace {

// More devices than this is almost certainly a typo in the environment.
constexpr uint32_t kMaxDeviceCount = 1024;
constexpr uint32_t kMaxWorkerCount = 1024;

struct LocalDriver {
  kiln_hal_driver_t base;
  uint32_t deviceCount = KILN_LOCAL_DEFAULT_DEVICE_COUNT;
  uint32_t workerCount = 1;
  // Shared by every device of the driver; started with the first device so
  // that enumerating devices starts no thread.
  std::mutex poolMutex;
  std::shared_ptr<ThreadPool> pool;
  // Rendezvous of collective channels between this driver's devices.
  std::shared_ptr<CollectiveHub> hub = std::make_shared<CollectiveHub>();
};

LocalDriver* cast(kiln_hal_driver_t* driver) {
  return reinterpret_cast<LocalDriver*>(driver);
}

void destroy(kiln_hal_resource_t* resource) {
  delete cast(reinterpret_cast<kiln_hal_driver_t*>(resource));
}

kiln_status_t enumerateDevices(kiln_hal_driver_t* base, uint32_t capacity,
                               kiln_hal_device_info_t* outInfos,
                               uint32_t* outCount) {
  LocalDriver* driver = cast(base);
  *outCount = driver->deviceCount;
  for (uint32_t i = 0; i < capacity && i < driver->deviceCount; ++i) {
    outInfos[i].ordinal = i;
    std::snprintf(outInfos[i].name, sizeof(outInfos[i].name),
                  "local CPU device %u (%u worker threads)", i,
                  driver->workerCount);
  }
  return nullptr;
}

kiln_status_t createDeviceFn(kiln_hal_driver_t* base, uint32_t ordinal,
                             const char* options,
                             kiln_hal_device_t** outDevice) {
  LocalDriver* driver = cast(base);
  std::vector<std::pair<std::string, std::string>> items;
  std::string bad;
  uint64_t memoryLimit = 0;
  if (!drivers::splitDeviceOptions(options, &items, &bad))
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "local://%u?%s: '%s' is not key=value; accepted: "
                            "memory_limit=BYTES",
                            ordinal, options, bad.c_str());
  for (const auto& item : items) {
    if (item.first != "memory_limit")
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "local://%u?%s: unknown local device option "
                              "'%s'; accepted: memory_limit=BYTES",
                              ordinal, options, item.first.c_str());
    if (!drivers::parseByteSize(item.second, &memoryLimit))
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "local://%u?%s: bad value '%s' for "
                              "memory_limit: expected a byte count, e.g. "
                              "1048576, 512M or 8G (0: no limit)",
                              ordinal, options, item.second.c_str());
  }
  if (ordinal >= driver->deviceCount)
    return kiln_make_status(KILN_STATUS_NOT_FOUND,
                            "local://%u does not exist: the local driver has "
                            "%u devices (set $%s for more)",
                            ordinal, driver->deviceCount,
                            KILN_LOCAL_DEVICE_COUNT_ENV);
  std::shared_ptr<ThreadPool> pool;
  {
    std::lock_guard<std::mutex> lock(driver->poolMutex);
    if (!driver->pool) {
      // The queue thread that calls parallelFor works too, so start one
      // thread fewer than the parallelism wanted.
      driver->pool = std::make_shared<ThreadPool>(driver->workerCount - 1);
    }
    pool = driver->pool;
  }
  return createDevice(base, ordinal, std::move(pool), driver->hub,
                      memoryLimit, outDevice);
}

const kiln_hal_driver_vtable_t kVTable = {destroy, enumerateDevices,
                                          createDeviceFn};

kiln_status_t createDriver(const kiln_hal_driver_factory_t* factory,
                           const kiln_hal_host_api_t*,
                           kiln_hal_driver_t** outDriver) {
  unsigned long devices =
      envUnsigned(KILN_LOCAL_DEVICE_COUNT_ENV, KILN_LOCAL_DEFAULT_DEVICE_COUNT);
  if (devices == 0 || devices > kMaxDeviceCount)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "$%s=%lu: the local driver supports 1..%u devices",
                            KILN_LOCAL_DEVICE_COUNT_ENV, devices,
                            kMaxDeviceCount);
  unsigned hardware = std::thread::hardware_concurrency();
  unsigned long workers =
      envUnsigned(KILN_LOCAL_WORKER_COUNT_ENV, hardware ? hardware : 1);
  if (workers == 0 || workers > kMaxWorkerCount)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "$%s=%lu: the local driver supports 1..%u worker "
                            "threads",
                            KILN_LOCAL_WORKER_COUNT_ENV, workers,
                            kMaxWorkerCount);
  auto* driver = new (std::nothrow) LocalDriver();
  if (!driver)
    return kiln_make_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory creating the local driver");
  kiln_hal_resource_initialize(&kVTable, &driver->base.resource);
  driver->base.name = factory->name;
  driver->deviceCount = uint32_t(devices);
  driver->workerCount = uint32_t(workers);
  *outDriver = &driver->base;
  return nullptr;
}

const kiln_hal_driver_factory_t kFactories[] = {
    {"local", "CPU devices running host executables on a thread pool",
     createDriver, nullptr},
};

}  // namespace
}  // namespace kiln::local

extern "C" uint32_t kiln_hal_local_driver_plugin_query(
    uint32_t runtime_abi_version, const kiln_hal_host_api_t*,
    kiln_hal_driver_plugin_t* out_plugin) {
  // Built into the runtime: always the same version, but go through the same
  // handshake as any plugin.
  if (runtime_abi_version == KILN_HAL_DRIVER_ABI_VERSION && out_plugin) {
    out_plugin->factory_count = 1;
    out_plugin->factories = kiln::local::kFactories;
  }
  return KILN_HAL_DRIVER_ABI_VERSION;
}
