// What every object of the HIP driver shares about its device: the platform
// and the device ordinal (binding the calling thread to it), its options and
// the driver's shared state, plus events, the device-side timepoints of the
// queue.
//
// Ownership: DeviceContext is shared (std::shared_ptr) by the device and by
// every buffer, executable, event and command buffer made for it, so that
// they can free their device resources whatever order they are released in.
// Event is shared by the submission that recorded it and the semaphores
// that keep it as a timepoint; the last owner destroys it. Thread-safe.
#ifndef KILN_DRIVERS_HIP_HIP_CONTEXT_H_
#define KILN_DRIVERS_HIP_HIP_CONTEXT_H_

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "drivers/common/block_cache.h"
#include "drivers/common/resource.h"
#include "drivers/common/retired_memory.h"
#include "drivers/common/window_aborts.h"
#include "drivers/hip/hip_options.h"
#include "drivers/hip/hip_platform.h"
#include "drivers/hip/status_util.h"
#include "kiln/hal/driver_abi.h"

namespace kiln::hip {

struct NcclLibrary;
struct CommList;
struct LogicalGroup;

// What one hip driver shares with its devices. Thread-safe (mutex).
struct DriverShared {
  std::mutex mutex;
  // Live device objects per ordinal (peer access is enabled between open
  // devices).
  std::vector<int> openDevices;
  // (device, peer) pairs where |device| has peer access to |peer|'s memory.
  std::set<std::pair<int, int>> peerAccess;
  // Collectives: the NCCL/RCCL library once loaded (hip_collectives.cc)
  // and the (unique id, rank) memberships of live channels.
  std::shared_ptr<const NcclLibrary> nccl;
  std::set<std::string> channelMembers;
  // Logical devices' channel groups by channel id (hip_logical.h).
  std::map<std::string, std::weak_ptr<LogicalGroup>> logicalGroups;
};

struct DeviceContext {
  std::shared_ptr<Platform> platform;
  int ordinal = 0;
  std::string arch;  // "sm_90", "gfx942"
  DeviceOptions options;
  std::shared_ptr<DriverShared> driver;
  // Communicators of the channels made on this device (aborted when the
  // device is destroyed while a collective still waits for its peers).
  std::shared_ptr<CommList> comms;
  // The abort words of the windows of this device's logical channels, set
  // when a submission fails (drivers/common/window_aborts.h).
  std::shared_ptr<drivers::WindowAborts> windowAborts =
      std::make_shared<drivers::WindowAborts>();
  // Memory of released windows over NCCL/RCCL channels that peers may
  // still map (hip_comm_window.h); drained when the device is destroyed.
  std::shared_ptr<drivers::RetiredMemory> retiredWindows =
      std::make_shared<drivers::RetiredMemory>();
  bool memoryPoolsSupported = false;
  bool managedMemorySupported = false;
  size_t totalMemory = 0;
  // Block caches (drivers/common/block_cache.h) of the device's memory
  // (hipMalloc, capped by the memory_limit option) and of pinned host
  // memory (hipHostMalloc, the staging of transfers). Shared by the
  // buffers, which give their storage back to them.
  std::shared_ptr<drivers::BlockCache> deviceBlocks;
  std::shared_ptr<drivers::BlockCache> hostBlocks;

  // Events no longer in use, kept for the next submission: creating and
  // destroying one per submission costs microseconds of every call. Timing
  // events (profiled submissions) are kept apart.
  mutable std::mutex eventMutex;
  mutable std::vector<hipEvent_t> freeEvents;
  mutable std::vector<hipEvent_t> freeTimingEvents;
  // Graph captures attempted (for the inject_capture_failure option).
  mutable std::atomic<uint64_t> captures{0};

  DeviceContext() = default;
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;
  ~DeviceContext() {
    if ((freeEvents.empty() && freeTimingEvents.empty()) || !platform)
      return;
    if (platform->setDevice(ordinal) != hipSuccess) return;
    for (hipEvent_t event : freeEvents) platform->eventDestroy(event);
    for (hipEvent_t event : freeTimingEvents)
      platform->eventDestroy(event);
  }

  // The free events of one kind (eventMutex held).
  std::vector<hipEvent_t> &freeList(bool timing) const {
    return timing ? freeTimingEvents : freeEvents;
  }

  // Makes this device current on the calling thread.
  kiln_status_t bind() const {
    hipError_t error = platform->setDevice(ordinal);
    if (error != hipSuccess)
      return platformError(*platform, error, KILN_STATUS_INTERNAL,
                           ("selecting device hip://" +
                            std::to_string(ordinal)).c_str());
    return nullptr;
  }

  kiln_status_t check(hipError_t error, const char* what,
                      kiln_status_code_t code = KILN_STATUS_INTERNAL) const {
    if (error == hipSuccess) return nullptr;
    return annotate(platformError(*platform, error, code, what), "hip://%d",
                    ordinal);
  }
};

// One device event (blocking sync; with timestamps when |timing|), taken
// from the context's free events and given back to them when the last owner
// lets go. Nobody waits on a released event any more, so recording it again
// is safe.
class Event {
 public:
   static kiln_status_t create(std::shared_ptr<const DeviceContext> context,
                               std::shared_ptr<Event> *out,
                               bool timing = false) {
     hipEvent_t handle = nullptr;
     {
       std::lock_guard<std::mutex> lock(context->eventMutex);
       std::vector<hipEvent_t> &free = context->freeList(timing);
       if (!free.empty()) {
         handle = free.back();
         free.pop_back();
       }
     }
     if (!handle) {
       Platform &platform = *context->platform;
       KILN_HIP_RETURN_IF_ERROR(
           context->check(timing ? platform.timingEventCreate(&handle)
                                 : platform.eventCreate(&handle),
                          "hipEventCreateWithFlags"));
     }
     out->reset(new Event(std::move(context), handle, timing));
     return nullptr;
   }
  ~Event() {
    {
      std::lock_guard<std::mutex> lock(context->eventMutex);
      std::vector<hipEvent_t> &free = context->freeList(timing);
      if (free.size() < kMaxFreeEvents) {
        free.push_back(handle);
        return;
      }
    }
    // Destroying an event whose recorded work is still pending is allowed:
    // the runtime frees it once the work completes.
    kiln_status_t status = context->bind();
    if (!status) context->platform->eventDestroy(handle);
    freeStatus(status);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  hipEvent_t get() const { return handle; }
  const DeviceContext& deviceContext() const { return *context; }

 private:
  static constexpr size_t kMaxFreeEvents = 64;

  Event(std::shared_ptr<const DeviceContext> context, hipEvent_t handle,
        bool timing)
      : context(std::move(context)), handle(handle), timing(timing) {}
  std::shared_ptr<const DeviceContext> context;
  hipEvent_t handle;
  bool timing;
};

// Reference counting of HAL objects (drivers/common/resource.h).
using drivers::release;
using drivers::retain;

}  // namespace kiln::hip

#endif  // KILN_DRIVERS_HIP_HIP_CONTEXT_H_
