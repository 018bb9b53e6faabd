// Options of hip devices: defaults from the environment, overridden per
// device by the query of its URI (hip://0?graphs=0&inject_failure=3).
//
//   key                 environment default          values
// clang-format off
//   graphs              $KILN_HIP_GRAPHS=1           0|1: reusable command buffers as graphs
//   memory_pools        $KILN_HIP_MEMORY_POOLS=1     0|1: stream-ordered pools for queue_alloca
//   inject_failure      $KILN_HIP_INJECT_FAILURE=0   N: every N-th queue_execute fails (0: never)
//   inject_capture_failure  $KILN_HIP_INJECT_CAPTURE_FAILURE=0  N: every N-th graph capture fails (0: never)
//   collective_checks   $KILN_HIP_COLLECTIVE_CHECKS=0  0|1: compare collective arguments across ranks
//   peer_access         $KILN_HIP_PEER_ACCESS=1      0|1: enable peer access to the process's other hip devices
//   memory_limit        $KILN_HIP_MEMORY_LIMIT=0     BYTES (512M, 8G): cap on device memory reserved, in use + cached (0: none)
//   spin_wait_us        $KILN_HIP_SPIN_WAIT_US=100000  N: poll for up to N us before a blocking wait
//   logical             $KILN_HIP_LOGICAL=0          0|1: a logical device: several may share one GPU; in-process channels; no graphs
// clang-format on
//
// Booleans accept 1/0, on/off, true/false, yes/no. The platform
// ($KILN_HIP_PLATFORM and the library paths) is chosen once per driver and
// is not a device option. Pure functions; thread-safe.
#ifndef KILN_DRIVERS_HIP_HIP_OPTIONS_H_
#define KILN_DRIVERS_HIP_HIP_OPTIONS_H_

#include <cstdint>

#include "kiln/status.h"

namespace kiln::hip {

struct DeviceOptions {
  // Record reusable command buffers as HIP/CUDA graphs (off: replay their
  // command list on the stream). Command buffers with collectives are
  // always replayed.
  bool graphs = true;
  // Use stream-ordered memory pools for queue_alloca.
  bool memoryPools = true;
  // Failure injection: the N-th queue_execute of the device (1-based)
  // fails as if its kernel launch had failed, and so does every later N-th
  // one. 0 disables it.
  uint64_t injectFailureEvery = 0;
  // The N-th graph capture of the device (1-based) and every later N-th one
  // fail as an invalidated capture would (tests the replay and retry of
  // command buffers that cannot be captured). 0 disables it.
  uint64_t injectCaptureFailureEvery = 0;
  // Before each collective, the ranks exchange its arguments (one small
  // all-gather and a host round trip) so that mismatched or locally invalid
  // collectives fail on every rank instead of hanging or corrupting data.
  // Off by default: the round trip costs up to 3x in all_reduce bandwidth
  // below 8 MiB on 2 H200s (docs/performance.md). Compiled SPMD modules run
  // the same command program on every rank, so their collectives match by
  // construction; turn it on to debug hand-written HAL collectives.
  bool collectiveChecks = false;
  // Enable peer access between this device and the other hip devices the
  // process has open.
  bool peerAccess = true;
  // Cap on the device memory the device's block cache reserves (buffers in
  // use plus cached storage); 0 for none.
  // A logical device: several devices of the process may open the same GPU
  // (hip://0?logical=1 twice), and the channels of logical devices are
  // made in the process, without NCCL/RCCL (which need one GPU per rank):
  // they split and hold symmetric windows (compiled collectives), but run no
  // library collectives (UNIMPLEMENTED). They record no graphs (graphs is
  // ignored): capturing, instantiating or destroying one waits for the
  // GPU's work, which may be a peer's kernel waiting for this rank. For
  // testing multi-rank programs on one GPU.
  bool logical = false;
  uint64_t memoryLimit = 0;
  // How long the completion thread polls a submission's event before it
  // blocks on it. Polling sees the end of short work within microseconds;
  // a blocking wait sleeps until the driver's interrupt, tens of
  // microseconds later, but frees the core during long work.
  uint64_t spinWaitUs = 100000;
};

// The defaults: DeviceOptions{} overridden by the environment variables.
// INVALID_ARGUMENT naming the variable for a bad value.
kiln_status_t readEnvironmentOptions(DeviceOptions* options);

// Applies a URI query ("key=value&key=value", "" for none) to |options|.
// INVALID_ARGUMENT naming the key or value and listing the accepted keys.
kiln_status_t parseDeviceOptions(const char* query, DeviceOptions* options);

}  // namespace kiln::hip

#endif  // KILN_DRIVERS_HIP_HIP_OPTIONS_H_
