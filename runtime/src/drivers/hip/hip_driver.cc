// The `hip` driver object and the plugin entry point of libkiln_hal_hip.so.
//
// The driver loads its platform (hip_platform.h) when it is created: a
// missing library or a machine without a GPU fails driver creation with
// UNAVAILABLE naming what was tried, so tools and the CTS report it and move
// on. Devices are the platform's GPUs in its order: hip://0 .. hip://N-1,
// each with options from the URI query over the environment's defaults
// (hip_options.h). Opening a device enables peer access between it and the
// other devices the process has open, where the hardware allows it.

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "drivers/hip/hip_buffer.h"
#include "drivers/hip/hip_collectives.h"
#include "drivers/hip/hip_context.h"
#include "drivers/hip/hip_device.h"
#include "drivers/hip/hip_platform.h"
#include "drivers/hip/status_util.h"

namespace kiln::hip {
namespace {

struct HipDriver {
  kiln_hal_driver_t base;
  std::shared_ptr<Platform> platform;
  DeviceOptions defaults;  // from the environment
  int deviceCount = 0;
  std::shared_ptr<DriverShared> shared;
};

HipDriver* cast(kiln_hal_driver_t* driver) {
  return reinterpret_cast<HipDriver*>(driver);
}

void destroy(kiln_hal_resource_t* resource) {
  delete cast(reinterpret_cast<kiln_hal_driver_t*>(resource));
}

kiln_status_t enumerateDevices(kiln_hal_driver_t* base, uint32_t capacity,
                               kiln_hal_device_info_t* outInfos,
                               uint32_t* outCount) {
  HipDriver* driver = cast(base);
  Platform& platform = *driver->platform;
  *outCount = uint32_t(driver->deviceCount);
  for (uint32_t i = 0; i < capacity && int(i) < driver->deviceCount; ++i) {
    char name[128] = {0};
    if (platform.deviceGetName(name, sizeof(name) - 1, int(i)) != hipSuccess)
      std::snprintf(name, sizeof(name), "GPU %u", i);
    std::string arch;
    if (platform.deviceGetArchName(int(i), &arch) != hipSuccess) arch = "?";
    outInfos[i].ordinal = i;
    std::snprintf(outInfos[i].name, sizeof(outInfos[i].name), "%s (%s:%s)",
                  name, platform.targetBackend(), arch.c_str());
  }
  return nullptr;
}

// Enables peer access between |ordinal| and every other device the process
// has open (both directions, where the hardware allows it) and records it.
// Failures are not errors: copies between devices still work, through the
// host. Caller holds shared.mutex; leaves |ordinal| current.
void enablePeerAccess(Platform& platform, DriverShared& shared, int ordinal) {
  for (int peer = 0; peer < int(shared.openDevices.size()); ++peer) {
    if (peer == ordinal || shared.openDevices[size_t(peer)] == 0) continue;
    for (auto [from, to] : {std::make_pair(ordinal, peer),
                            std::make_pair(peer, ordinal)}) {
      if (shared.peerAccess.count({from, to})) continue;
      int can = 0;
      if (platform.deviceCanAccessPeer(&can, from, to) != hipSuccess || !can)
        continue;
      hipError_t error = platform.setDevice(from);
      if (error == hipSuccess) error = platform.deviceEnablePeerAccess(to);
      if (error == hipSuccess || error == hipErrorPeerAccessAlreadyEnabled)
        shared.peerAccess.insert({from, to});
      else
        std::fprintf(stderr,
                     "kiln hip: peer access from hip://%d to hip://%d could "
                     "not be enabled (%s); copies between them go through "
                     "the host\n",
                     from, to, platform.errorName(error).c_str());
    }
  }
  platform.setDevice(ordinal);
}

kiln_status_t createDeviceFn(kiln_hal_driver_t* base, uint32_t ordinal,
                             const char* options,
                             kiln_hal_device_t** outDevice) {
  HipDriver* driver = cast(base);
  // Options first: their errors need no device.
  DeviceOptions deviceOptions = driver->defaults;
  KILN_HIP_RETURN_IF_ERROR(annotate(parseDeviceOptions(options, &deviceOptions),
                                    "hip://%u", ordinal));
  Platform& platform = *driver->platform;
  if (int64_t(ordinal) >= driver->deviceCount)
    return makeStatus(KILN_STATUS_NOT_FOUND,
                      "hip://%u does not exist: the %s platform has %d "
                      "device(s)",
                      ordinal, platform.name(), driver->deviceCount);
  // Ranks on one GPU run compiled collectives whose kernels wait for each
  // other; graph capture, instantiation and destruction synchronize with
  // the GPU's work, so a rank in one of them while a peer's kernel waits
  // for this rank's launch would deadlock (seen: 1 of 25 runs of an 8-rank
  // all_gather). Logical devices replay their command buffers instead.
  if (deviceOptions.logical) deviceOptions.graphs = false;
  auto context = std::make_shared<DeviceContext>();
  context->platform = driver->platform;
  context->ordinal = int(ordinal);
  context->options = deviceOptions;
  context->driver = driver->shared;
  context->comms = std::make_shared<CommList>();
  KILN_HIP_RETURN_IF_ERROR(context->bind());
  KILN_HIP_RETURN_IF_ERROR(
      context->check(platform.deviceGetArchName(int(ordinal), &context->arch),
                     "querying the GPU architecture"));
  int value = 0;
  context->memoryPoolsSupported =
      platform.deviceGetAttribute(&value, hipDeviceAttributeMemoryPoolsSupported,
                                  int(ordinal)) == hipSuccess &&
      value != 0;
  value = 0;
  context->managedMemorySupported =
      platform.deviceGetAttribute(&value, hipDeviceAttributeManagedMemory,
                                  int(ordinal)) == hipSuccess &&
      value != 0;
  size_t freeBytes = 0, totalBytes = 0;
  KILN_HIP_RETURN_IF_ERROR(context->check(
      platform.memGetInfo(&freeBytes, &totalBytes), "hipMemGetInfo"));
  context->totalMemory = totalBytes;
  createBlockCaches(context.get());
  DriverShared& shared = *driver->shared;
  {
    // Counted before createDevice so that its destroy can uncount it.
    std::lock_guard<std::mutex> lock(shared.mutex);
    if (deviceOptions.peerAccess) enablePeerAccess(platform, shared, int(ordinal));
    ++shared.openDevices[ordinal];
  }
  kiln_status_t status = createDevice(base, std::move(context), outDevice);
  if (status) {
    std::lock_guard<std::mutex> lock(shared.mutex);
    --shared.openDevices[ordinal];
  }
  return status;
}

const kiln_hal_driver_vtable_t kVTable = {destroy, enumerateDevices,
                                          createDeviceFn};

kiln_status_t createDriver(const kiln_hal_driver_factory_t* factory,
                           const kiln_hal_host_api_t* host,
                           kiln_hal_driver_t** outDriver) {
  setHostApi(host);
  DeviceOptions defaults;
  KILN_HIP_RETURN_IF_ERROR(readEnvironmentOptions(&defaults));
  std::shared_ptr<Platform> platform;
  KILN_HIP_RETURN_IF_ERROR(selectPlatform(&platform));
  int count = 0;
  hipError_t error = platform->getDeviceCount(&count);
  if (error != hipSuccess)
    return platformError(*platform, error, KILN_STATUS_UNAVAILABLE,
                         "hipGetDeviceCount");
  auto* driver = new (std::nothrow) HipDriver();
  if (!driver)
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED,
                      "out of memory creating the hip driver");
  kiln_hal_resource_initialize(&kVTable, &driver->base.resource);
  driver->base.name = factory->name;
  driver->platform = std::move(platform);
  driver->defaults = defaults;
  driver->deviceCount = count;
  driver->shared = std::make_shared<DriverShared>();
  driver->shared->openDevices.assign(size_t(count), 0);
  *outDriver = &driver->base;
  return nullptr;
}

const kiln_hal_driver_factory_t kFactories[] = {
    {"hip",
     "GPUs through HIP: AMD (libamdhip64) or NVIDIA (CUDA driver API); "
     "$KILN_HIP_PLATFORM=auto|amd|nvidia",
     createDriver, nullptr},
};

}  // namespace
}  // namespace kiln::hip

extern "C" __attribute__((visibility("default"))) uint32_t
kiln_hal_driver_plugin_query(uint32_t runtime_abi_version,
                             const kiln_hal_host_api_t* host,
                             kiln_hal_driver_plugin_t* out_plugin) {
  if (runtime_abi_version == KILN_HAL_DRIVER_ABI_VERSION && out_plugin &&
      host) {
    kiln::hip::setHostApi(host);
    out_plugin->factory_count = 1;
    out_plugin->factories = kiln::hip::kFactories;
  }
  return KILN_HAL_DRIVER_ABI_VERSION;
}
