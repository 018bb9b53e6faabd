// Collectives between the devices of one local driver, through shared host
// memory. Channels created with the same rendezvous id and rank count join
// one group (the driver's CollectiveHub finds it); each collective is a
// round in which every rank publishes its buffers, waits for all ranks,
// computes its own result from the peers' send buffers into scratch memory,
// waits again (so no rank overwrites memory a peer still reads: send and
// recv may alias) and writes its recv buffer.
//
// Thread-safety: the hub and groups are guarded by mutexes; a channel may be
// used by one queue at a time (collectives on one channel are ordered by the
// queue that runs them, as with NCCL communicators).
#ifndef KILN_DRIVERS_LOCAL_LOCAL_COLLECTIVE_H_
#define KILN_DRIVERS_LOCAL_LOCAL_COLLECTIVE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "kiln/hal/driver_abi.h"

namespace kiln::local {

struct CollectiveGroup;

// Owned by the local driver, shared with its devices.
class CollectiveHub {
 public:
  kiln_status_t createChannel(const kiln_hal_channel_params_t* params,
                              kiln_hal_channel_t** outChannel);
  // A process-unique id: "local-group-<n>".
  kiln_status_t createChannelId(uint8_t* outId, size_t capacity,
                                size_t* outLength);

 private:
  std::mutex mutex;
  uint64_t nextId = 0;
  std::map<std::string, std::weak_ptr<CollectiveGroup>> groups;
};

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
