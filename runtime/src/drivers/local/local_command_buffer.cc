#include "drivers/local/local_command_buffer.h"

#include <atomic>
#include <cstring>
#include <new>
#include <vector>

#include "drivers/local/local_buffer.h"
#include "drivers/local/local_collective.h"
#include "drivers/local/local_executable.h"
#include "kiln/host_abi.h"

namespace kiln::local {
namespace {

enum class CommandKind { Barrier, Fill, Update, Copy, Dispatch, Collective };

// A recorded buffer ref. |buffer| (retained) or binding-table |slot|.
struct Ref {
  kiln_hal_buffer_t* buffer = nullptr;
  uint32_t slot = 0;
  kiln_device_size_t offset = 0;
  kiln_device_size_t length = 0;  // may be WHOLE_BUFFER for slot refs
};

struct Command {
  CommandKind kind;
  Ref target;                  // fill, update, copy target
  Ref source;                  // copy source
  std::vector<uint8_t> bytes;  // fill pattern or update data
  kiln_hal_executable_t* executable = nullptr;  // retained
  uint32_t exportOrdinal = 0;
  kiln_host_kernel_fn_t kernel = nullptr;
  uint32_t workgroupCount[3] = {0, 0, 0};
  std::vector<uint32_t> pushConstants;
  std::vector<Ref> bindings;
  kiln_hal_channel_t* channel = nullptr;  // retained
  kiln_hal_collective_op_t op = {};
};

struct LocalCommandBuffer {
  kiln_hal_command_buffer_t base;
  std::vector<Command> commands;
  // Slot refs recorded, checked against each submission's binding table.
  std::vector<Ref> slotRefs;
};

LocalCommandBuffer* cast(kiln_hal_command_buffer_t* commandBuffer) {
  return reinterpret_cast<LocalCommandBuffer*>(commandBuffer);
}

void destroy(kiln_hal_command_buffer_t* base) {
  LocalCommandBuffer* commandBuffer = cast(base);
  for (Command& command : commandBuffer->commands) {
    kiln_hal_buffer_release(command.target.buffer);
    kiln_hal_buffer_release(command.source.buffer);
    for (Ref& ref : command.bindings) kiln_hal_buffer_release(ref.buffer);
    kiln_hal_executable_release(command.executable);
    kiln_hal_channel_release(command.channel);
  }
  delete commandBuffer;
}

kiln_status_t begin(kiln_hal_command_buffer_t*) { return nullptr; }
kiln_status_t end(kiln_hal_command_buffer_t*) { return nullptr; }

// Records |ref| (retaining its buffer). The buffer must be a local one.
kiln_status_t captureRef(LocalCommandBuffer* commandBuffer,
                         const kiln_hal_buffer_ref_t& ref, Ref* out) {
  if (ref.buffer && !asLocalBuffer(ref.buffer))
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "buffer was not created by the local driver");
  out->buffer = ref.buffer;
  out->slot = ref.slot;
  out->offset = ref.offset;
  out->length = ref.length;
  if (ref.buffer) {
    kiln_hal_buffer_retain(ref.buffer);
  } else {
    commandBuffer->slotRefs.push_back(*out);
  }
  return nullptr;
}

// Commands are pushed only once fully captured so that a failed record
// leaves the command buffer as it was (refs captured so far are released).
void discard(Command& command) {
  kiln_hal_buffer_release(command.target.buffer);
  kiln_hal_buffer_release(command.source.buffer);
  for (Ref& ref : command.bindings) kiln_hal_buffer_release(ref.buffer);
  kiln_hal_executable_release(command.executable);
}

kiln_status_t executionBarrier(kiln_hal_command_buffer_t* base) {
  // Commands already run one after another; keep the barrier so the command
  // list mirrors what was recorded.
  Command command;
  command.kind = CommandKind::Barrier;
  cast(base)->commands.push_back(std::move(command));
  return nullptr;
}

kiln_status_t fillBuffer(kiln_hal_command_buffer_t* base,
                         kiln_hal_buffer_ref_t target, const void* pattern,
                         size_t patternLength) {
  LocalCommandBuffer* commandBuffer = cast(base);
  Command command;
  command.kind = CommandKind::Fill;
  KILN_RETURN_IF_ERROR(captureRef(commandBuffer, target, &command.target));
  const auto* bytes = static_cast<const uint8_t*>(pattern);
  command.bytes.assign(bytes, bytes + patternLength);
  commandBuffer->commands.push_back(std::move(command));
  return nullptr;
}

kiln_status_t updateBuffer(kiln_hal_command_buffer_t* base,
                           const void* source, size_t sourceLength,
                           kiln_hal_buffer_ref_t target) {
  LocalCommandBuffer* commandBuffer = cast(base);
  Command command;
  command.kind = CommandKind::Update;
  KILN_RETURN_IF_ERROR(captureRef(commandBuffer, target, &command.target));
  const auto* bytes = static_cast<const uint8_t*>(source);
  if (sourceLength) command.bytes.assign(bytes, bytes + sourceLength);
  commandBuffer->commands.push_back(std::move(command));
  return nullptr;
}

kiln_status_t copyBuffer(kiln_hal_command_buffer_t* base,
                         kiln_hal_buffer_ref_t source,
                         kiln_hal_buffer_ref_t target) {
  LocalCommandBuffer* commandBuffer = cast(base);
  Command command;
  command.kind = CommandKind::Copy;
  KILN_RETURN_IF_ERROR(captureRef(commandBuffer, source, &command.source));
  kiln_status_t status = captureRef(commandBuffer, target, &command.target);
  if (status) {
    discard(command);
    return status;
  }
  commandBuffer->commands.push_back(std::move(command));
  return nullptr;
}

kiln_status_t dispatch(kiln_hal_command_buffer_t* base,
                       kiln_hal_executable_t* executable,
                       uint32_t exportOrdinal,
                       const uint32_t workgroupCount[3],
                       uint32_t pushConstantCount,
                       const uint32_t* pushConstants, uint32_t bindingCount,
                       const kiln_hal_buffer_ref_t* bindings) {
  LocalCommandBuffer* commandBuffer = cast(base);
  kiln_host_kernel_fn_t kernel = lookupKernel(executable, exportOrdinal);
  if (!kernel)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "executable was not prepared by the local driver");
  Command command;
  command.kind = CommandKind::Dispatch;
  command.kernel = kernel;
  command.exportOrdinal = exportOrdinal;
  std::memcpy(command.workgroupCount, workgroupCount,
              sizeof(command.workgroupCount));
  if (pushConstantCount)
    command.pushConstants.assign(pushConstants,
                                 pushConstants + pushConstantCount);
  command.bindings.resize(bindingCount);
  for (uint32_t i = 0; i < bindingCount; ++i) {
    kiln_status_t status =
        captureRef(commandBuffer, bindings[i], &command.bindings[i]);
    if (status) {
      command.bindings.resize(i);
      discard(command);
      return kiln_status_annotate(status, "dispatch binding %u", i);
    }
  }
  kiln_hal_executable_retain(executable);
  command.executable = executable;
  commandBuffer->commands.push_back(std::move(command));
  return nullptr;
}

kiln_status_t collective(kiln_hal_command_buffer_t* base,
                         kiln_hal_channel_t* channel,
                         const kiln_hal_collective_op_t* op,
                         kiln_hal_buffer_ref_t send,
                         kiln_hal_buffer_ref_t recv) {
  if (!isLocalChannel(channel))
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "collective: channel was not created by the local "
                            "driver");
  KILN_RETURN_IF_ERROR(validateCollective(*op, channel->count));
  LocalCommandBuffer* commandBuffer = cast(base);
  Command command;
  command.kind = CommandKind::Collective;
  KILN_RETURN_IF_ERROR(captureRef(commandBuffer, send, &command.source));
  kiln_status_t status = captureRef(commandBuffer, recv, &command.target);
  if (status) {
    discard(command);
    return status;
  }
  kiln_hal_channel_retain(channel);
  command.channel = channel;
  command.op = *op;
  commandBuffer->commands.push_back(std::move(command));
  return nullptr;
}

const kiln_hal_command_buffer_vtable_t kVTable = {
    destroy,    begin,    end,        executionBarrier, fillBuffer,
    updateBuffer, copyBuffer, dispatch, collective};

//===----------------------------------------------------------------------===//
// Execution
//===----------------------------------------------------------------------===//

struct Span {
  uint8_t* data = nullptr;
  kiln_device_size_t length = 0;
};

// Resolves |ref| to host memory for this execution.
kiln_status_t resolve(const Ref& ref, const kiln_hal_binding_t* table,
                      Span* out) {
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
      static_cast<LocalBuffer*>(static_cast<void*>(buffer))->storage.load(
          std::memory_order_acquire);
  if (!storage)
    return kiln_make_status(KILN_STATUS_FAILED_PRECONDITION,
                            "a command uses a buffer without storage (used "
                            "before its queue_alloca or after its "
                            "queue_dealloca)");
  out->data = storage + offset;
  out->length = length;
  return nullptr;
}

void fill(Span target, const std::vector<uint8_t>& pattern) {
  size_t n = pattern.size();
  if (n == 1) {
    std::memset(target.data, pattern[0], size_t(target.length));
    return;
  }
  for (kiln_device_size_t i = 0; i < target.length; i += n)
    std::memcpy(target.data + i, pattern.data(), n);
}

kiln_status_t runDispatch(const Command& command,
                          const kiln_hal_binding_t* table, ThreadPool& pool) {
  size_t bindingCount = command.bindings.size();
  std::vector<void*> pointers(bindingCount);
  std::vector<uint64_t> lengths(bindingCount);
  for (size_t i = 0; i < bindingCount; ++i) {
    Span span;
    kiln_status_t status = resolve(command.bindings[i], table, &span);
    if (status) return kiln_status_annotate(status, "dispatch binding %zu", i);
    pointers[i] = span.data;
    lengths[i] = span.length;
  }
  kiln_host_dispatch_state_t state;
  state.bindings = pointers.data();
  state.binding_lengths = lengths.data();
  state.push_constants = command.pushConstants.data();
  state.binding_count = uint32_t(bindingCount);
  state.push_constant_count = uint32_t(command.pushConstants.size());
  std::memcpy(state.workgroup_count, command.workgroupCount,
              sizeof(state.workgroup_count));
  uint64_t countX = command.workgroupCount[0];
  uint64_t countY = command.workgroupCount[1];
  uint64_t total = countX * countY * command.workgroupCount[2];

  // The first failing workgroup (lowest claim wins; the rest are skipped).
  std::atomic<bool> failed{false};
  int32_t failureCode = 0;
  uint64_t failureIndex = 0;
  kiln_host_kernel_fn_t kernel = command.kernel;
  pool.parallelFor(total, [&](uint64_t index) {
    uint32_t x = uint32_t(index % countX);
    uint32_t y = uint32_t((index / countX) % countY);
    uint32_t z = uint32_t(index / (countX * countY));
    int32_t result = kernel(&state, x, y, z);
    if (result == 0) return true;
    if (!failed.exchange(true)) {
      failureCode = result;
      failureIndex = index;
    }
    return false;
  });
  if (failed.load()) {
    const kiln_hal_executable_export_t& exp =
        command.executable->exports[command.exportOrdinal];
    return kiln_make_status(
        KILN_STATUS_ABORTED,
        "kernel '%s' failed with code %d in workgroup (%llu, %llu, %llu)",
        exp.name, failureCode, (unsigned long long)(failureIndex % countX),
        (unsigned long long)((failureIndex / countX) % countY),
        (unsigned long long)(failureIndex / (countX * countY)));
  }
  return nullptr;
}

kiln_status_t runCommand(const Command& command,
                         const kiln_hal_binding_t* table, ThreadPool& pool,
                         const std::function<bool()>& cancelled) {
  switch (command.kind) {
    case CommandKind::Barrier:
      return nullptr;
    case CommandKind::Fill: {
      Span target;
      KILN_RETURN_IF_ERROR(resolve(command.target, table, &target));
      if (target.length % command.bytes.size() != 0)
        return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                                "fill of %llu bytes is not a multiple of its "
                                "%zu-byte pattern",
                                (unsigned long long)target.length,
                                command.bytes.size());
      fill(target, command.bytes);
      return nullptr;
    }
    case CommandKind::Update: {
      Span target;
      KILN_RETURN_IF_ERROR(resolve(command.target, table, &target));
      if (!command.bytes.empty())
        std::memcpy(target.data, command.bytes.data(), command.bytes.size());
      return nullptr;
    }
    case CommandKind::Copy: {
      Span source, target;
      KILN_RETURN_IF_ERROR(resolve(command.source, table, &source));
      KILN_RETURN_IF_ERROR(resolve(command.target, table, &target));
      if (source.length != target.length)
        return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                                "copy source has %llu bytes but target %llu",
                                (unsigned long long)source.length,
                                (unsigned long long)target.length);
      // memmove: two slots may alias one buffer at overlapping ranges.
      std::memmove(target.data, source.data, size_t(source.length));
      return nullptr;
    }
    case CommandKind::Dispatch:
      return runDispatch(command, table, pool);
    case CommandKind::Collective: {
      Span send, recv;
      KILN_RETURN_IF_ERROR(resolve(command.source, table, &send));
      KILN_RETURN_IF_ERROR(resolve(command.target, table, &recv));
      return runCollective(command.channel, command.op, send.data, send.length,
                           recv.data, recv.length, cancelled);
    }
  }
  return kiln_make_status(KILN_STATUS_UNIMPLEMENTED,
                          "unsupported command in a local command buffer");
}

}  // namespace

kiln_status_t createCommandBuffer(kiln_hal_command_buffer_mode_t mode,
                                  uint32_t bindingCapacity,
                                  kiln_hal_command_buffer_t** outCommandBuffer) {
  auto* commandBuffer = new (std::nothrow) LocalCommandBuffer();
  if (!commandBuffer)
    return kiln_make_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory creating a command buffer");
  kiln_hal_command_buffer_initialize(&kVTable, mode, bindingCapacity,
                                     &commandBuffer->base);
  *outCommandBuffer = &commandBuffer->base;
  return nullptr;
}

kiln_status_t validateBindingTable(kiln_hal_command_buffer_t* base,
                                   const kiln_hal_binding_table_t& table) {
  if (base->resource.vtable != &kVTable)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "command buffer was not created by the local "
                            "driver");
  for (const Ref& ref : cast(base)->slotRefs) {
    const kiln_hal_binding_t& binding = table.bindings[ref.slot];
    if (!binding.buffer)
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "binding table slot %u is used by the command "
                              "buffer but not bound",
                              ref.slot);
    if (!asLocalBuffer(binding.buffer))
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "binding table slot %u: buffer was not created "
                              "by the local driver",
                              ref.slot);
    // binding.length is resolved by the caller (never WHOLE_BUFFER).
    bool fits = ref.offset <= binding.length &&
                (ref.length == KILN_HAL_WHOLE_BUFFER ||
                 ref.length <= binding.length - ref.offset);
    if (!fits)
      return kiln_make_status(
          KILN_STATUS_OUT_OF_RANGE,
          "binding table slot %u binds %llu bytes but the command buffer "
          "uses [%llu, %llu + %llu) of it",
          ref.slot, (unsigned long long)binding.length,
          (unsigned long long)ref.offset, (unsigned long long)ref.offset,
          (unsigned long long)(ref.length == KILN_HAL_WHOLE_BUFFER
                                   ? 0
                                   : ref.length));
  }
  return nullptr;
}

kiln_status_t executeCommandBuffer(kiln_hal_command_buffer_t* base,
                                   const kiln_hal_binding_t* table,
                                   ThreadPool& pool,
                                   const std::function<bool()>& cancelled) {
  const std::vector<Command>& commands = cast(base)->commands;
  for (size_t i = 0; i < commands.size(); ++i) {
    kiln_status_t status = runCommand(commands[i], table, pool, cancelled);
    if (status) return kiln_status_annotate(status, "command %zu", i);
  }
  return nullptr;
}

}  // namespace kiln::local
