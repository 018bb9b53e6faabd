// Channels and symmetric windows of logical hip devices (the `logical`
// device option): several devices of one process that may share one GPU.
// NCCL/RCCL need one GPU per rank, so these channels are made in the process
// (a rendezvous in the driver's shared state, keyed by the channel id):
//   - channel ids carry a "kiln-logical" prefix (kiln_hal_channel_id_create
//     on a logical device); every rank's device must be logical;
//   - channel_create blocks until every rank of the group joined, like
//     ncclCommInitRank (up to kLogicalWaitSeconds, then DEADLINE_EXCEEDED);
//   - channel_split and window_create are rounds of the group: each rank
//     posts its part and waits for the others (the same bound). Ranks make
//     their splits and windows in the same order, as the HAL requires;
//   - windows: each rank allocates its data and signal slots (zeroed) in its
//     device's memory; the peer table holds every rank's device addresses,
//     which every device of the process can use (the same GPU, or peer
//     access between GPUs); a rank's memory lives until every rank's window
//     referencing it is released. Mismatched sizes fail every rank with
//     FAILED_PRECONDITION;
//   - library collectives are UNIMPLEMENTED on these channels (compile the
//     module's collectives as kernels: --collective-kernel-max-bytes).
// Thread-safe.
#ifndef KILN_DRIVERS_HIP_HIP_LOGICAL_H_
#define KILN_DRIVERS_HIP_HIP_LOGICAL_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "drivers/hip/hip_context.h"
#include "kiln/hal/driver_abi.h"

namespace kiln::hip {

// How long a rank waits for the other ranks of a logical group.
constexpr int kLogicalWaitSeconds = 300;

struct LogicalGroup;

bool isLogicalChannelId(const void* id, size_t length);
kiln_status_t createLogicalChannelId(uint8_t* outId, size_t capacity,
                                     size_t* outLength);
// Joins rank |rank| of the |count|-rank group named by |id|; blocks until
// every rank joined.
kiln_status_t joinLogicalGroup(const DeviceContext& context, const void* id,
                               size_t idLength, int32_t rank, int32_t count,
                               std::shared_ptr<LogicalGroup>* outGroup);
// MPI_Comm_split over |group|: the sub-group of the ranks with |color|,
// ordered by (key, rank).
kiln_status_t splitLogicalGroup(LogicalGroup& group, int32_t rank,
                                int32_t color, int32_t key,
                                std::shared_ptr<LogicalGroup>* outGroup,
                                int32_t* outRank, int32_t* outCount);
// A symmetric window over |group| (see above).
kiln_status_t createLogicalWindow(std::shared_ptr<const DeviceContext> context,
                                  LogicalGroup& group, int32_t rank,
                                  const kiln_hal_window_params_t* params,
                                  kiln_hal_window_t** outWindow);

}  // namespace kiln::hip

#endif  // KILN_DRIVERS_HIP_HIP_LOGICAL_H_
