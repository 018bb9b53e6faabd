// The recorded command list of a command buffer, shared by the drivers:
// recording (capturing buffer refs, retaining buffers, executables and
// channels), the check of a submission's binding table against the slots
// the commands use, and the resolution of a recorded ref to storage for one
// execution. How the commands run is the driver's (local runs them on the
// host, hip issues them onto a stream).
//
// A ref names either a concrete buffer (retained while recorded) or a
// binding-table slot (resolved at each submission). Every buffer must be one
// of the driver's own: the driver says which through DriverInfo.
//
// Recording is single-threaded (HAL rule). After the command buffer's end()
// the list is immutable, so the const functions may run concurrently.
#ifndef KILN_DRIVERS_COMMON_COMMAND_LIST_H_
#define KILN_DRIVERS_COMMON_COMMAND_LIST_H_

#include <atomic>
#include <cstdint>
#include <vector>

#include "kiln/hal/driver_abi.h"

namespace kiln::drivers {

// What the shared code needs to know about the driver it works for.
struct DriverInfo {
  const char* name;                 // "local", "hip": named in messages
  const kiln_hal_host_api_t* host;  // makes the statuses (host_status.h)
  // The storage of |buffer| if this driver made it, else nullptr (also for
  // a null |buffer|). The pointer inside is null while a queue_alloca'd
  // buffer has no storage; atomic because the queue thread sets it.
  std::atomic<uint8_t*>* (*bufferStorage)(kiln_hal_buffer_t* buffer);
};

enum class CommandKind { Barrier, Fill, Update, Copy, Dispatch, Collective };

// A recorded buffer ref: |buffer| (retained) or binding-table |slot|.
struct BufferRef {
  kiln_hal_buffer_t* buffer = nullptr;
  uint32_t slot = 0;
  kiln_device_size_t offset = 0;
  kiln_device_size_t length = 0;  // may be WHOLE_BUFFER for slot refs
};

struct Command {
  CommandKind kind = CommandKind::Barrier;
  BufferRef target;            // fill, update, copy target; collective recv
  BufferRef source;            // copy source; collective send
  std::vector<uint8_t> bytes;  // fill pattern or update data
  kiln_hal_executable_t* executable = nullptr;  // retained
  uint32_t exportOrdinal = 0;
  uint32_t workgroupCount[3] = {0, 0, 0};
  std::vector<uint32_t> pushConstants;
  std::vector<BufferRef> bindings;
  kiln_hal_channel_t* channel = nullptr;  // retained
  kiln_hal_collective_op_t op = {};
};

// Profiled submissions (queue_execute_profiled): the commands that get a
// timing (all but barriers), and appending one to |profile| (the count goes
// on past the capacity, so the caller learns how many there were).
bool isTimedCommand(CommandKind kind);
void appendTiming(kiln_hal_execution_profile_t* profile, uint32_t commandBuffer,
                  uint32_t command, CommandKind kind, uint64_t deviceNs);

// A range of a buffer's storage, resolved for one execution.
struct StorageSpan {
  uint8_t* data = nullptr;
  kiln_device_size_t length = 0;
};

class CommandList {
 public:
  explicit CommandList(const DriverInfo& driver) : driver(driver) {}
  // Releases everything the commands retain.
  ~CommandList();
  CommandList(const CommandList&) = delete;
  CommandList& operator=(const CommandList&) = delete;

  // Recording: the command buffer vtable functions of driver_abi.h, after
  // the driver's own checks. A failure records no command (slot refs
  // captured before it stay listed for validation); a buffer
  // of another driver is INVALID_ARGUMENT.
  kiln_status_t recordBarrier();
  kiln_status_t recordFill(const kiln_hal_buffer_ref_t& target,
                           const void* pattern, size_t patternLength);
  kiln_status_t recordUpdate(const void* source, size_t sourceLength,
                             const kiln_hal_buffer_ref_t& target);
  kiln_status_t recordCopy(const kiln_hal_buffer_ref_t& source,
                           const kiln_hal_buffer_ref_t& target);
  // The driver has checked that |executable| is its own and has export
  // |exportOrdinal|.
  kiln_status_t recordDispatch(kiln_hal_executable_t* executable,
                               uint32_t exportOrdinal,
                               const uint32_t workgroupCount[3],
                               uint32_t pushConstantCount,
                               const uint32_t* pushConstants,
                               uint32_t bindingCount,
                               const kiln_hal_buffer_ref_t* bindings);
  // The driver has checked that |channel| is its own and |op| valid for it.
  kiln_status_t recordCollective(kiln_hal_channel_t* channel,
                                 const kiln_hal_collective_op_t& op,
                                 const kiln_hal_buffer_ref_t& send,
                                 const kiln_hal_buffer_ref_t& recv);

  const std::vector<Command>& commands() const { return list; }
  // The slot refs recorded, in recording order.
  const std::vector<BufferRef>& slotRefs() const { return slots; }

  // Checks that |table| (lengths resolved, never WHOLE_BUFFER) binds every
  // slot the commands use, with buffers of this driver large enough for the
  // recorded ranges. INVALID_ARGUMENT or OUT_OF_RANGE otherwise.
  kiln_status_t validateBindingTable(
      const kiln_hal_binding_table_t& table) const;

  // Resolves |ref| against |table| (validated) to the buffer's storage.
  // FAILED_PRECONDITION if the buffer has no storage (used before its
  // queue_alloca or after its queue_dealloca).
  kiln_status_t resolve(const BufferRef& ref, const kiln_hal_binding_t* table,
                        StorageSpan* out) const;

 private:
  kiln_status_t captureRef(const kiln_hal_buffer_ref_t& ref, BufferRef* out);

  DriverInfo driver;
  std::vector<Command> list;
  std::vector<BufferRef> slots;
};

}  // namespace kiln::drivers

#endif  // KILN_DRIVERS_COMMON_COMMAND_LIST_H_
