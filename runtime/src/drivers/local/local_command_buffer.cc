#include "drivers/local/local_command_buffer.h"

#include <atomic>
#include <cstring>
#include <new>
#include <vector>

#include "drivers/common/command_list.h"
#include "drivers/local/local_buffer.h"
#include "drivers/local/local_collective.h"
#include "drivers/local/local_executable.h"
#include "kiln/host_abi.h"

namespace kiln::local {
namespace {

using drivers::Command;
using drivers::CommandKind;
using drivers::StorageSpan;

std::atomic<uint8_t*>* localStorage(kiln_hal_buffer_t* buffer) {
  LocalBuffer* local = asLocalBuffer(buffer);
  return local ? &local->storage : nullptr;
}

struct LocalCommandBuffer {
  kiln_hal_command_buffer_t base;
  drivers::CommandList list{
      drivers::DriverInfo{"local", kiln_hal_host_api(), localStorage}};
};

LocalCommandBuffer* cast(kiln_hal_command_buffer_t* commandBuffer) {
  return reinterpret_cast<LocalCommandBuffer*>(commandBuffer);
}

void destroy(kiln_hal_resource_t* resource) {
  delete cast(reinterpret_cast<kiln_hal_command_buffer_t*>(resource));
}

kiln_status_t begin(kiln_hal_command_buffer_t*) { return nullptr; }
kiln_status_t end(kiln_hal_command_buffer_t*) { return nullptr; }

kiln_status_t executionBarrier(kiln_hal_command_buffer_t* base) {
  // Commands already run one after another; keep the barrier so the command
  // list mirrors what was recorded.
  return cast(base)->list.recordBarrier();
}

kiln_status_t fillBuffer(kiln_hal_command_buffer_t* base,
                         kiln_hal_buffer_ref_t target, const void* pattern,
                         size_t patternLength) {
  return cast(base)->list.recordFill(target, pattern, patternLength);
}

kiln_status_t updateBuffer(kiln_hal_command_buffer_t* base,
                           const void* source, size_t sourceLength,
                           kiln_hal_buffer_ref_t target) {
  return cast(base)->list.recordUpdate(source, sourceLength, target);
}

kiln_status_t copyBuffer(kiln_hal_command_buffer_t* base,
                         kiln_hal_buffer_ref_t source,
                         kiln_hal_buffer_ref_t target) {
  return cast(base)->list.recordCopy(source, target);
}

kiln_status_t dispatch(kiln_hal_command_buffer_t* base,
                       kiln_hal_executable_t* executable,
                       uint32_t exportOrdinal,
                       const uint32_t workgroupCount[3],
                       uint32_t pushConstantCount,
                       const uint32_t* pushConstants, uint32_t bindingCount,
                       const kiln_hal_buffer_ref_t* bindings) {
  if (!lookupKernel(executable, exportOrdinal))
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "executable was not prepared by the local driver");
  return cast(base)->list.recordDispatch(
      executable, exportOrdinal, workgroupCount, pushConstantCount,
      pushConstants, bindingCount, bindings);
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
  return cast(base)->list.recordCollective(channel, *op, send, recv);
}

const kiln_hal_command_buffer_vtable_t kVTable = {
    destroy,    begin,    end,        executionBarrier, fillBuffer,
    updateBuffer, copyBuffer, dispatch, collective};

//===----------------------------------------------------------------------===//
// Execution
//===----------------------------------------------------------------------===//

void fill(StorageSpan target, const std::vector<uint8_t>& pattern) {
  size_t n = pattern.size();
  if (n == 1) {
    std::memset(target.data, pattern[0], size_t(target.length));
    return;
  }
  for (kiln_device_size_t i = 0; i < target.length; i += n)
    std::memcpy(target.data + i, pattern.data(), n);
}

kiln_status_t runDispatch(const drivers::CommandList& list,
                          const Command& command,
                          const kiln_hal_binding_t* table, ThreadPool& pool) {
  size_t bindingCount = command.bindings.size();
  std::vector<void*> pointers(bindingCount);
  std::vector<uint64_t> lengths(bindingCount);
  for (size_t i = 0; i < bindingCount; ++i) {
    StorageSpan span;
    kiln_status_t status = list.resolve(command.bindings[i], table, &span);
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
  // Checked when the dispatch was recorded.
  kiln_host_kernel_fn_t kernel =
      lookupKernel(command.executable, command.exportOrdinal);
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

kiln_status_t runCommand(const drivers::CommandList& list,
                         const Command& command,
                         const kiln_hal_binding_t* table, ThreadPool& pool,
                         const std::function<bool()>& cancelled) {
  switch (command.kind) {
    case CommandKind::Barrier:
      return nullptr;
    case CommandKind::Fill: {
      StorageSpan target;
      KILN_RETURN_IF_ERROR(list.resolve(command.target, table, &target));
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
      StorageSpan target;
      KILN_RETURN_IF_ERROR(list.resolve(command.target, table, &target));
      if (!command.bytes.empty())
        std::memcpy(target.data, command.bytes.data(), command.bytes.size());
      return nullptr;
    }
    case CommandKind::Copy: {
      StorageSpan source, target;
      KILN_RETURN_IF_ERROR(list.resolve(command.source, table, &source));
      KILN_RETURN_IF_ERROR(list.resolve(command.target, table, &target));
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
      return runDispatch(list, command, table, pool);
    case CommandKind::Collective: {
      StorageSpan send, recv;
      KILN_RETURN_IF_ERROR(list.resolve(command.source, table, &send));
      KILN_RETURN_IF_ERROR(list.resolve(command.target, table, &recv));
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
  return cast(base)->list.validateBindingTable(table);
}

kiln_status_t executeCommandBuffer(kiln_hal_command_buffer_t* base,
                                   const kiln_hal_binding_t* table,
                                   ThreadPool& pool,
                                   const std::function<bool()>& cancelled,
                                   kiln_hal_execution_profile_t* profile,
                                   uint32_t commandBufferIndex) {
  const drivers::CommandList& list = cast(base)->list;
  const std::vector<Command>& commands = list.commands();
  for (size_t i = 0; i < commands.size(); ++i) {
    kiln_time_t start = profile ? kiln_time_now() : 0;
    kiln_status_t status =
        runCommand(list, commands[i], table, pool, cancelled);
    if (status) return kiln_status_annotate(status, "command %zu", i);
    if (profile && drivers::isTimedCommand(commands[i].kind))
      drivers::appendTiming(profile, commandBufferIndex, uint32_t(i),
                            commands[i].kind,
                            uint64_t(kiln_time_now() - start));
  }
  return nullptr;
}

}  // namespace kiln::local
