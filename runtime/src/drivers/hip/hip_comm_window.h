// Symmetric windows over NCCL/RCCL channels (one GPU per rank), for
// compiled collectives across GPUs and processes (docs/drivers.md,
// "Symmetric windows over NCCL/RCCL channels").
//
// Creation (collective, like the channel's other operations):
//   1. every rank allocates its data and signal slots with the plain device
//      allocator (hipMalloc; signals with Platform::mallocSignals: uncached
//      fine-grained memory on AMD), zeroes them and exports both
//      (hipIpcGetMemHandle); rank 0 also creates the group's shared-memory
//      segment (POSIX shm: the abort word, then a "closed" word per rank);
//   2. one all-gather over the communicator exchanges a record per rank:
//      its host, its process (a random token per process), its device, its
//      addresses and IPC handles, and the segment's name;
//   3. every rank maps its peers' memory: a peer of the same process by its
//      address (the devices need peer access, which opening a hip device
//      enables where the hardware allows it), a peer of another process by
//      opening its IPC handles; and maps the segment, pinned and mapped for
//      the GPU (hipHostRegister), so that the abort word is one address for
//      kernels and the host;
//   4. a second all-gather agrees on the outcome: any rank that failed
//      fails every rank (FAILED_PRECONDITION naming it); rank 0 then
//      unlinks the segment's name.
// Ranks on different hosts (IPC handles are host-local) and mismatched
// parameters fail every rank alike.
//
// Release: the rank sets the abort word (peers still waiting for it stop),
// closes its mappings of the peers' memory, sets its "closed" word, and
// frees its own memory only once every rank's "closed" word is set (no
// peer still maps it). Until then the memory is retired on its device
// (drivers/common/retired_memory.h), freed by a later release or, at the
// latest, when the device is destroyed (after waiting up to
// kRetiredWindowWait for the peers; a peer process that died never closes,
// and its mappings went with it).
#ifndef KILN_DRIVERS_HIP_HIP_COMM_WINDOW_H_
#define KILN_DRIVERS_HIP_HIP_COMM_WINDOW_H_

#include <chrono>

#include "drivers/hip/hip_collectives.h"
#include "drivers/hip/hip_context.h"
#include "kiln/hal/driver_abi.h"

namespace kiln::hip {

// How long destroying a device waits for peers to close the memory of its
// released windows (drivers/common/retired_memory.h).
constexpr auto kRetiredWindowWait = std::chrono::seconds(10);

// Frees the memory of |context|'s released windows, waiting up to
// kRetiredWindowWait for their peers to close it; reports on stderr what is
// freed before they did. Called when the device is destroyed.
void drainRetiredWindows(const DeviceContext &context);

// A symmetric window over |comm| (rank |rank| of |count|), see above.
kiln_status_t createCommWindow(std::shared_ptr<const DeviceContext> context,
                               Comm &comm, int32_t rank, int32_t count,
                               const kiln_hal_window_params_t *params,
                               kiln_hal_window_t **outWindow);

} // namespace kiln::hip

#endif // KILN_DRIVERS_HIP_HIP_COMM_WINDOW_H_
