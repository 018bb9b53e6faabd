#include "drivers/common/command_list.h"

#include <cstring>
#include <utility>

#include "drivers/common/host_status.h"
#include "drivers/common/resource.h"

namespace kiln::drivers {
namespace {

void releaseCommand(Command& command) {
  release(command.target.buffer);
  release(command.source.buffer);
  for (BufferRef& ref : command.bindings) release(ref.buffer);
  release(command.executable);
  release(command.channel);
}

}  // namespace

CommandList::~CommandList() {
  for (Command& command : list) releaseCommand(command);
}

// Records |ref| (retaining its buffer).
kiln_status_t CommandList::captureRef(const kiln_hal_buffer_ref_t& ref,
                                      BufferRef* out) {
  if (ref.buffer && !driver.bufferStorage(ref.buffer))
    return makeStatus(*driver.host, KILN_STATUS_INVALID_ARGUMENT,
                      "buffer was not created by the %s driver", driver.name);
  out->buffer = ref.buffer;
  out->slot = ref.slot;
  out->offset = ref.offset;
  out->length = ref.length;
  if (ref.buffer) {
    retain(ref.buffer);
  } else {
    slots.push_back(*out);
  }
  return nullptr;
}

kiln_status_t CommandList::recordBarrier() {
  Command command;
  command.kind = CommandKind::Barrier;
  list.push_back(std::move(command));
  return nullptr;
}

kiln_status_t CommandList::recordFill(const kiln_hal_buffer_ref_t& target,
                                      const void* pattern,
                                      size_t patternLength) {
  Command command;
  command.kind = CommandKind::Fill;
  kiln_status_t status = captureRef(target, &command.target);
  if (status) return status;
  const auto* bytes = static_cast<const uint8_t*>(pattern);
  command.bytes.assign(bytes, bytes + patternLength);
  list.push_back(std::move(command));
  return nullptr;
}

kiln_status_t CommandList::recordUpdate(const void* source,
                                        size_t sourceLength,
                                        const kiln_hal_buffer_ref_t& target) {
  Command command;
  command.kind = CommandKind::Update;
  kiln_status_t status = captureRef(target, &command.target);
  if (status) return status;
  const auto* bytes = static_cast<const uint8_t*>(source);
  if (sourceLength) command.bytes.assign(bytes, bytes + sourceLength);
  list.push_back(std::move(command));
  return nullptr;
}

// Commands are pushed only once fully captured; on a failure the refs
// captured so far are released with the command.
kiln_status_t CommandList::recordCopy(const kiln_hal_buffer_ref_t& source,
                                      const kiln_hal_buffer_ref_t& target) {
  Command command;
  command.kind = CommandKind::Copy;
  kiln_status_t status = captureRef(source, &command.source);
  if (!status) status = captureRef(target, &command.target);
  if (status) {
    releaseCommand(command);
    return status;
  }
  list.push_back(std::move(command));
  return nullptr;
}

kiln_status_t CommandList::recordDispatch(
    kiln_hal_executable_t* executable, uint32_t exportOrdinal,
    const uint32_t workgroupCount[3], uint32_t pushConstantCount,
    const uint32_t* pushConstants, uint32_t bindingCount,
    const kiln_hal_buffer_ref_t* bindings) {
  Command command;
  command.kind = CommandKind::Dispatch;
  command.exportOrdinal = exportOrdinal;
  std::memcpy(command.workgroupCount, workgroupCount,
              sizeof(command.workgroupCount));
  if (pushConstantCount)
    command.pushConstants.assign(pushConstants,
                                 pushConstants + pushConstantCount);
  command.bindings.resize(bindingCount);
  for (uint32_t i = 0; i < bindingCount; ++i) {
    kiln_status_t status = captureRef(bindings[i], &command.bindings[i]);
    if (status) {
      command.bindings.resize(i);
      releaseCommand(command);
      return annotateStatus(*driver.host, status, "dispatch binding %u", i);
    }
  }
  retain(executable);
  command.executable = executable;
  list.push_back(std::move(command));
  return nullptr;
}

kiln_status_t CommandList::recordCollective(kiln_hal_channel_t* channel,
                                            const kiln_hal_collective_op_t& op,
                                            const kiln_hal_buffer_ref_t& send,
                                            const kiln_hal_buffer_ref_t& recv) {
  Command command;
  command.kind = CommandKind::Collective;
  command.op = op;
  kiln_status_t status = captureRef(send, &command.source);
  if (status) return annotateStatus(*driver.host, status, "collective send");
  status = captureRef(recv, &command.target);
  if (status) {
    releaseCommand(command);
    return annotateStatus(*driver.host, status, "collective recv");
  }
  retain(channel);
  command.channel = channel;
  list.push_back(std::move(command));
  return nullptr;
}

kiln_status_t CommandList::validateBindingTable(
    const kiln_hal_binding_table_t& table) const {
  const kiln_hal_host_api_t& host = *driver.host;
  for (const BufferRef& ref : slots) {
    const kiln_hal_binding_t& binding = table.bindings[ref.slot];
    if (!binding.buffer)
      return makeStatus(host, KILN_STATUS_INVALID_ARGUMENT,
                        "binding table slot %u is used by the command buffer "
                        "but not bound",
                        ref.slot);
    if (!driver.bufferStorage(binding.buffer))
      return makeStatus(host, KILN_STATUS_INVALID_ARGUMENT,
                        "binding table slot %u: buffer was not created by the "
                        "%s driver",
                        ref.slot, driver.name);
    bool fits = ref.offset <= binding.length &&
                (ref.length == KILN_HAL_WHOLE_BUFFER ||
                 ref.length <= binding.length - ref.offset);
    if (!fits)
      return makeStatus(
          host, KILN_STATUS_OUT_OF_RANGE,
          "binding table slot %u binds %llu bytes but the command buffer uses "
          "[%llu, %llu + %llu) of it",
          ref.slot, (unsigned long long)binding.length,
          (unsigned long long)ref.offset, (unsigned long long)ref.offset,
          (unsigned long long)(ref.length == KILN_HAL_WHOLE_BUFFER
                                   ? 0
                                   : ref.length));
  }
  return nullptr;
}

kiln_status_t CommandList::resolve(const BufferRef& ref,
                                   const kiln_hal_binding_t* table,
                                   StorageSpan* out) const {
  kiln_hal_buffer_t* buffer = ref.buffer;
  kiln_device_size_t offset = ref.offset;
  kiln_device_size_t length = ref.length;
  if (!buffer) {
    const kiln_hal_binding_t& binding = table[ref.slot];
    buffer = binding.buffer;
    offset += binding.offset;
    if (length == KILN_HAL_WHOLE_BUFFER) length = binding.length - ref.offset;
  }
  uint8_t* storage =
      driver.bufferStorage(buffer)->load(std::memory_order_acquire);
  if (!storage)
    return makeStatus(*driver.host, KILN_STATUS_FAILED_PRECONDITION,
                      "a command uses a buffer without storage (used before "
                      "its queue_alloca or after its queue_dealloca)");
  out->data = storage + offset;
  out->length = length;
  return nullptr;
}

bool isTimedCommand(CommandKind kind) { return kind != CommandKind::Barrier; }

void appendTiming(kiln_hal_execution_profile_t* profile, uint32_t commandBuffer,
                  uint32_t command, CommandKind kind, uint64_t deviceNs) {
  uint32_t index = profile->timing_count++;
  if (index >= profile->timing_capacity) return;
  kiln_hal_command_kind_t halKind = KILN_HAL_COMMAND_KIND_DISPATCH;
  switch (kind) {
    case CommandKind::Fill: halKind = KILN_HAL_COMMAND_KIND_FILL; break;
    case CommandKind::Update: halKind = KILN_HAL_COMMAND_KIND_UPDATE; break;
    case CommandKind::Copy: halKind = KILN_HAL_COMMAND_KIND_COPY; break;
    case CommandKind::Dispatch: halKind = KILN_HAL_COMMAND_KIND_DISPATCH; break;
    case CommandKind::Collective:
      halKind = KILN_HAL_COMMAND_KIND_COLLECTIVE;
      break;
    case CommandKind::Barrier: break;  // never timed
  }
  kiln_hal_command_timing_t& timing = profile->timings[index];
  timing.command_buffer = commandBuffer;
  timing.command = command;
  timing.kind = halKind;
  timing.device_ns = deviceNs;
}

}  // namespace kiln::drivers
