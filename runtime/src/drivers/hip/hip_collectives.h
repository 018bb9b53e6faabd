// Collective channels of the hip driver over NCCL (NVIDIA) / RCCL (AMD).
//
// A channel is one NCCL communicator for one rank on one device:
//   - channel ids are ncclGetUniqueId bytes (128); create_channel is
//     ncclCommInitRank with the device current, which blocks until every
//     rank joined (create the ranks' channels from separate threads, as the
//     HAL says); split is ncclCommSplit (collective over the parent's ranks);
//   - collectives are enqueued on the device's stream, in order with the
//     other commands of the command buffer (hip_command_buffer.cc);
//     all_gather, all_to_all and broadcast move bytes (ncclUint8); the
//     reductions need a type NCCL has: i1, i16 and u16 are UNIMPLEMENTED;
//     all_to_all is ncclGroupStart + per-peer ncclSend/ncclRecv +
//     ncclGroupEnd (NCCL has no all-to-all call);
//   - with the collective_checks option (default off) each collective first
//     all-gathers a 32-byte signature of every rank's arguments and compares
//     them on the host, so that mismatched collectives, or one rank whose
//     buffers are wrong, fail on every rank with INVALID_ARGUMENT instead of
//     hanging or corrupting memory (NCCL cannot detect either);
//   - symmetric windows (create_window) are made over the communicator by
//     hip_comm_window.h (an all-gather of every rank's addresses and IPC
//     handles: allGatherOnHost below); logical devices' channels have their
//     own (hip_logical.h);
//   - errors: ncclResult_t becomes a status with ncclGetErrorString;
//     asynchronous errors (ncclCommGetAsyncError) are polled (every
//     millisecond) while the device waits for a submission with collectives
//     and fail its signal semaphores; the wait itself ends on a host
//     function enqueued after the submission (StreamNotification), within
//     microseconds of the work's end; a communicator that failed, or whose device is destroyed
//     while a collective still waits for peers (after a grace period), is
//     aborted with ncclCommAbort and every later use fails with ABORTED.
//
// The library is loaded on first use (nccl_library.h). Channels are
// thread-safe; a communicator is used by the device's queue threads only.
#ifndef KILN_DRIVERS_HIP_HIP_COLLECTIVES_H_
#define KILN_DRIVERS_HIP_HIP_COLLECTIVES_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "drivers/hip/hip_context.h"
#include "drivers/hip/nccl_library.h"
#include "kiln/hal/driver_abi.h"

namespace kiln::hip {

// One NCCL communicator. Shared by its channel and by the submissions that
// use it; destroyed (ncclCommAbort: ncclCommDestroy may wait for the peers,
// which deadlocks a thread that releases several ranks' channels) with the
// last reference.
class Comm {
 public:
  Comm(std::shared_ptr<const NcclLibrary> nccl, ncclComm_t handle,
       int ordinal)
      : nccl(std::move(nccl)), handle(handle), ordinal(ordinal) {}
  ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  const NcclLibrary& library() const { return *nccl; }
  const std::shared_ptr<const NcclLibrary>& libraryRef() const { return nccl; }
  ncclComm_t get() const { return handle; }
  bool aborted() const { return abortedFlag.load(std::memory_order_acquire); }
  // Aborts the communicator once (later calls do nothing); |why| is kept
  // for the ABORTED statuses of later uses.
  void abort(const std::string& why);
  // ABORTED if aborted, the asynchronous error if NCCL reports one (and
  // then aborts), else OK.
  kiln_status_t health();
  // The status of an NCCL call on this communicator that returned |result|:
  // once the communicator is aborted (from another thread, say) every call
  // fails, and the abort is what gets reported.
  kiln_status_t checkCall(int result, const char* what);

 private:
  std::shared_ptr<const NcclLibrary> nccl;
  ncclComm_t handle;
  int ordinal;
  std::mutex mutex;  // guards the abort and |reason|
  std::atomic<bool> abortedFlag{false};
  std::string reason;
};

// Wakes host threads when a stream reaches the point where it was launched:
// a host function enqueued there (Platform::launchHostFunc) sets it. A
// thread that must watch something else while it waits (the communicators'
// health) waits on this with a timeout and wakes within the host function's
// latency of the work's end, where polling an event with sleeps between
// queries would add up to the last sleep. The host function is never called
// if the device context fails, so a waiter also queries an event recorded
// at the same point.
class StreamNotification {
 public:
  // Enqueues the notification on |stream| after the work issued so far.
  static kiln_status_t launch(const DeviceContext& context, hipStream_t stream,
                              std::shared_ptr<StreamNotification>* out);
  // Whether the stream reached the notification, waiting up to |timeout|.
  bool waitFor(std::chrono::microseconds timeout);

 private:
  static void reach(void* data);  // the host function; owns |data|

  std::mutex mutex;
  std::condition_variable changed;
  bool reached = false;
};

// The communicators made on one device (weak: channels own them).
struct CommList {
  std::mutex mutex;
  std::vector<std::weak_ptr<Comm>> comms;
  void add(const std::shared_ptr<Comm>& comm);
  // Whether any communicator of the list is still alive.
  bool any();
  void abortAll(const std::string& why);
};

kiln_status_t createChannelId(std::shared_ptr<const DeviceContext> context,
                              uint8_t* outId, size_t capacity,
                              size_t* outLength);
kiln_status_t createChannel(std::shared_ptr<const DeviceContext> context,
                            const kiln_hal_channel_params_t* params,
                            kiln_hal_channel_t** outChannel);

// Record-time checks of a collective on |context|'s device: a channel of
// this driver for the same device, a valid and supported operation.
kiln_status_t checkCollective(kiln_hal_channel_t* channel,
                              const DeviceContext& context,
                              const kiln_hal_collective_op_t& op);

// The communicator of a checked channel.
std::shared_ptr<Comm> channelComm(kiln_hal_channel_t* channel);

// Gathers |bytes| bytes of |mine| from each of the |count| ranks of |comm|
// into |all| (count x bytes, by rank) on the host: an ncclAllGather on a
// stream of its own, waited for while the communicator's health is polled.
// Collective: every rank calls it in the same order relative to the
// communicator's other operations. Binds the device.
kiln_status_t
allGatherOnHost(const std::shared_ptr<const DeviceContext> &context, Comm &comm,
                int32_t rank, int32_t count, const void *mine, size_t bytes,
                void *all, const char *what);

// Enqueues |op| on |stream| (the device current). |send|/|recv| are the
// resolved ranges (device pointers and byte lengths), checked here (sizes,
// overlap) before the rank takes part in the exchange of signatures.
kiln_status_t issueCollective(kiln_hal_channel_t* channel,
                              const kiln_hal_collective_op_t& op,
                              uint8_t* send, uint64_t sendLength,
                              uint8_t* recv, uint64_t recvLength,
                              hipStream_t stream);

// Waits for |event| while polling |comms| for asynchronous errors and
// aborts (a communicator aborted because the device is being destroyed
// ends the wait). |notification|, launched right after |event| was
// recorded, wakes the wait when the stream gets there; without one (its
// launch failed) the event is polled with sleeps of up to half a
// millisecond. Device current.
kiln_status_t waitWithComms(const DeviceContext& context, hipEvent_t event,
                            StreamNotification* notification,
                            const std::vector<std::shared_ptr<Comm>>& comms);

}  // namespace kiln::hip

#endif  // KILN_DRIVERS_HIP_HIP_COLLECTIVES_H_
