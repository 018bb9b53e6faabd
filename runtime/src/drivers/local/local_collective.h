// Collectives between the devices of one local driver, through shared host
// memory. Channels created with the same rendezvous id and rank count join
// one group (the driver's CollectiveHub finds it); kiln_hal_channel_split
// makes sub-groups of a group (MPI_Comm_split semantics). Each collective is
// a round in which every rank publishes its send and recv ranges and all
// ranks meet in a barrier; every rank then does its share of the work and
// all meet again before returning (so no rank overwrites or reuses memory a
// peer still reads: send and recv may alias).
//
// Symmetric windows (kiln_hal_window_create): every rank allocates its data
// and signals from its own device's memory and publishes them in a round of
// the group; every window then holds all ranks' memory (shared ownership),
// so a rank's memory outlives its own window while a peer's window may still
// address it. The peer table holds host addresses, which the local driver's
// kernels use as they are.
//
// Algorithms (chosen per collective; every rank chooses the same one):
//  - direct: each rank computes its own result from the peers' send buffers.
//    all_gather, all_to_all and broadcast are copies into the rank's own
//    recv; reduce_scatter reduces only the rank's own chunk. Used for
//    everything but large all_reduces.
//  - parallel (all_reduce of at least the group's threshold,
//    KILN_LOCAL_COLLECTIVE_PARALLEL_THRESHOLD bytes, default 256 KiB): rank
//    r reduces slice r (1/N of the elements) of all inputs, then copies the
//    reduced slice into every rank's recv, so the reduction is spread over
//    the ranks' queue threads instead of every rank reducing everything.
// Both reduce every element in rank order 0..N-1, so all ranks get bitwise
// identical results whichever algorithm ran. Integer reductions wrap around;
// f16 and bf16 reduce in float; avg is sum then divide by N (integer
// division for integer types, as NCCL's ncclAvg); i1 reduces as a logical
// value (sum and max: or; prod and min: and; avg: UNIMPLEMENTED).
//
// Thread-safety: the hub and groups are guarded by mutexes; a channel may be
// used by one queue at a time (collectives on one channel are ordered by the
// queue that runs them, as with NCCL communicators), and a split must not run
// while the group runs collectives.
#ifndef KILN_DRIVERS_LOCAL_LOCAL_COLLECTIVE_H_
#define KILN_DRIVERS_LOCAL_LOCAL_COLLECTIVE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "drivers/common/block_cache.h"
#include "drivers/common/window_aborts.h"
#include "kiln/hal/driver_abi.h"

// All-reduces of at least this many bytes use the parallel algorithm
// (decimal bytes; 0: always). Read when a group is created.
#define KILN_LOCAL_COLLECTIVE_PARALLEL_THRESHOLD_ENV \
  "KILN_LOCAL_COLLECTIVE_PARALLEL_THRESHOLD"
#define KILN_LOCAL_COLLECTIVE_DEFAULT_PARALLEL_THRESHOLD (256u * 1024u)

namespace kiln::local {

struct CollectiveGroup;

// Owned by the local driver, shared with its devices.
class CollectiveHub {
 public:
  // |blocks| is the memory of the device the channel is created on (where
  // its symmetric windows live); its windows' abort words go to |aborts|,
  // which that device sets when a submission fails (window_aborts.h).
  kiln_status_t createChannel(const kiln_hal_channel_params_t* params,
                              std::shared_ptr<drivers::BlockCache> blocks,
                              std::shared_ptr<drivers::WindowAborts> aborts,
                              kiln_hal_channel_t** outChannel);
  // A process-unique id: "local-group-<n>".
  kiln_status_t createChannelId(uint8_t* outId, size_t capacity,
                                size_t* outLength);

 private:
  std::mutex mutex;
  uint64_t nextId = 0;
  std::map<std::string, std::weak_ptr<CollectiveGroup>> groups;
};

// Checks |op| for a group of |ranks| ranks at record time: INVALID_ARGUMENT
// for malformed ops, UNIMPLEMENTED for combinations the driver lacks.
kiln_status_t validateCollective(const kiln_hal_collective_op_t& op,
                                 int32_t ranks);

// Runs |op| for the rank of |channel| (a local channel: INVALID_ARGUMENT
// otherwise). |cancelled| is polled while waiting for peers; when it turns
// true the collective fails with ABORTED and the group is unusable.
kiln_status_t runCollective(kiln_hal_channel_t* channel,
                            const kiln_hal_collective_op_t& op,
                            const uint8_t* send, uint64_t sendLength,
                            uint8_t* recv, uint64_t recvLength,
                            const std::function<bool()>& cancelled);

bool isLocalChannel(kiln_hal_channel_t* channel);

}  // namespace kiln::local

#endif  // KILN_DRIVERS_LOCAL_LOCAL_COLLECTIVE_H_
