// Command buffers of the HIP driver.
//
// Recording stores the commands in the drivers' shared command list
// (drivers/common/command_list.h: concrete buffers, executables and
// channels retained, binding-table slots kept symbolic). At submission the queue
// thread issues them onto the device's stream:
//   - one-shot command buffers, and reusable ones when graphs are off, are
//     replayed command by command (memset/memcpy/launch calls);
//   - reusable command buffers are captured into a HIP/CUDA graph the first
//     time they are submitted with a given set of resolved binding addresses
//     and re-launched as one graph afterwards (a small per-command-buffer
//     cache keyed by those addresses, so a module function called with the
//     same buffers replays at the cost of one graph launch).
// Command semantics: commands run in stream order, so barriers need no
// device work. Fills use hipMemsetD8/D16/D32Async; an 8-byte pattern (or a
// misaligned target) is written once and doubled with device copies.
// Updates copy the bytes captured at record time. Collectives are enqueued
// on the stream in order with the other commands (hip_collectives.h); a
// reusable command buffer that has collectives is always replayed, never
// captured into a graph.
//
// Recording is single-threaded (HAL rule); after end() the command list is
// immutable and the graph cache is guarded by a mutex, so submissions may
// run concurrently.
#ifndef KILN_DRIVERS_HIP_HIP_COMMAND_BUFFER_H_
#define KILN_DRIVERS_HIP_HIP_COMMAND_BUFFER_H_

#include <memory>
#include <vector>

#include "drivers/common/command_list.h"
#include "drivers/hip/hip_context.h"
#include "kiln/hal/driver_abi.h"

namespace kiln::hip {

kiln_status_t createCommandBuffer(std::shared_ptr<const DeviceContext> context,
                                  kiln_hal_command_buffer_mode_t mode,
                                  uint32_t bindingCapacity,
                                  kiln_hal_command_buffer_t** outCommandBuffer);

// Checks that |commandBuffer| was made for |context|'s device and that
// |table| (lengths resolved) binds every slot it uses with a HIP buffer
// large enough. INVALID_ARGUMENT / OUT_OF_RANGE otherwise.
kiln_status_t validateBindingTable(kiln_hal_command_buffer_t* commandBuffer,
                                   const DeviceContext& context,
                                   const kiln_hal_binding_table_t& table);

class Comm;

// Appends the communicators of |commandBuffer|'s collectives to |out| (each
// once), for the queue to watch while the submission runs.
void collectiveComms(kiln_hal_command_buffer_t* commandBuffer,
                     std::vector<std::shared_ptr<Comm>>* out);

// Issues the commands onto |stream| (device bound by the caller). |table| was
// validated. A failure means some commands may have been issued.
kiln_status_t issueCommandBuffer(kiln_hal_command_buffer_t* commandBuffer,
                                 const kiln_hal_binding_t* table,
                                 hipStream_t stream);

// What profiled issuing calls around each timed command (all but
// barriers): mark(index, kind, stream, false) before the command's work is
// enqueued, mark(..., true) after. Implemented by the device.
class CommandTimer {
 public:
  virtual ~CommandTimer() = default;
  virtual kiln_status_t mark(size_t index, drivers::CommandKind kind,
                             hipStream_t stream, bool end) = 0;
};

// issueCommandBuffer for a profiled submission: always command by command
// (no graph), with |timer| marking each timed command.
kiln_status_t issueCommandBufferTimed(kiln_hal_command_buffer_t* commandBuffer,
                                      const kiln_hal_binding_t* table,
                                      hipStream_t stream, CommandTimer* timer);

}  // namespace kiln::hip

#endif  // KILN_DRIVERS_HIP_HIP_COMMAND_BUFFER_H_
