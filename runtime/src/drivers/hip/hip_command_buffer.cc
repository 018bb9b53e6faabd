#include "drivers/hip/hip_command_buffer.h"

#include <cstdio>
#include <cstring>
#include <list>
#include <mutex>
#include <new>
#include <vector>

#include "drivers/common/command_list.h"
#include "drivers/hip/hip_buffer.h"
#include "drivers/hip/hip_collectives.h"
#include "drivers/hip/hip_executable.h"

namespace kiln::hip {
namespace {

// Distinct binding sets whose graphs a reusable command buffer keeps.
constexpr size_t kGraphCacheSize = 8;

using drivers::BufferRef;
using drivers::Command;
using drivers::CommandKind;
using drivers::StorageSpan;

std::atomic<uint8_t*>* hipStorage(kiln_hal_buffer_t* buffer) {
  HipBuffer* hip = asHipBuffer(buffer);
  return hip ? &hip->storage : nullptr;
}

struct CachedGraph {
  std::vector<uintptr_t> key;  // resolved slot addresses and lengths
  hipGraph_t graph = nullptr;
  hipGraphExec_t exec = nullptr;
};

struct HipCommandBuffer {
  kiln_hal_command_buffer_t base;
  std::shared_ptr<const DeviceContext> context;
  // Communicators of the recorded collectives (one per channel). Declared
  // before |list| so that the channels are released before them.
  std::vector<std::shared_ptr<Comm>> comms;
  drivers::CommandList list{
      drivers::DriverInfo{"hip", hostApi(), hipStorage}};

  // Graph state (reusable command buffers with graphs on).
  std::mutex graphMutex;
  uint8_t* pinnedBytes = nullptr;     // host payloads in pinned memory
  std::vector<size_t> pinnedOffsets;  // of each command's bytes in them
  std::list<CachedGraph> graphs;      // most recently used first
  // Capture failures. A platform without capture replays for good; any
  // other failure replays that run and tries again after 1, 2, 4, ... runs,
  // giving up after kMaxCaptureFailures (each one is reported on stderr).
  bool graphsFailed = false;
  uint32_t captureFailures = 0;
  uint64_t replaysBeforeRetry = 0;
};

constexpr uint32_t kMaxCaptureFailures = 4;

HipCommandBuffer* cast(kiln_hal_command_buffer_t* commandBuffer) {
  return reinterpret_cast<HipCommandBuffer*>(commandBuffer);
}

void destroyGraph(const DeviceContext& context, CachedGraph& entry) {
  if (entry.exec) context.platform->graphExecDestroy(entry.exec);
  if (entry.graph) context.platform->graphDestroy(entry.graph);
}

void destroy(kiln_hal_resource_t* resource) {
  HipCommandBuffer* commandBuffer =
      cast(reinterpret_cast<kiln_hal_command_buffer_t*>(resource));
  const DeviceContext& context = *commandBuffer->context;
  if (!commandBuffer->graphs.empty() || commandBuffer->pinnedBytes) {
    kiln_status_t status = context.bind();
    if (!status) {
      for (CachedGraph& entry : commandBuffer->graphs)
        destroyGraph(context, entry);
      if (commandBuffer->pinnedBytes)
        context.platform->hostFree(commandBuffer->pinnedBytes);
    }
    freeStatus(status);
  }
  delete commandBuffer;
}

kiln_status_t begin(kiln_hal_command_buffer_t*) { return nullptr; }
kiln_status_t end(kiln_hal_command_buffer_t*) { return nullptr; }

kiln_status_t executionBarrier(kiln_hal_command_buffer_t* base) {
  // Commands already run in stream order; the barrier is kept so that the
  // command list mirrors what was recorded.
  return cast(base)->list.recordBarrier();
}

kiln_status_t fillBuffer(kiln_hal_command_buffer_t* base,
                         kiln_hal_buffer_ref_t target, const void* pattern,
                         size_t patternLength) {
  return cast(base)->list.recordFill(target, pattern, patternLength);
}

kiln_status_t updateBuffer(kiln_hal_command_buffer_t* base, const void* source,
                           size_t sourceLength, kiln_hal_buffer_ref_t target) {
  return cast(base)->list.recordUpdate(source, sourceLength, target);
}

kiln_status_t copyBuffer(kiln_hal_command_buffer_t* base,
                         kiln_hal_buffer_ref_t source,
                         kiln_hal_buffer_ref_t target) {
  return cast(base)->list.recordCopy(source, target);
}

kiln_status_t dispatch(kiln_hal_command_buffer_t* base,
                       kiln_hal_executable_t* executable,
                       uint32_t exportOrdinal, const uint32_t workgroupCount[3],
                       uint32_t pushConstantCount,
                       const uint32_t* pushConstants, uint32_t bindingCount,
                       const kiln_hal_buffer_ref_t* bindings) {
  if (!lookupKernel(executable, exportOrdinal))
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "executable was not prepared by the hip driver");
  return cast(base)->list.recordDispatch(
      executable, exportOrdinal, workgroupCount, pushConstantCount,
      pushConstants, bindingCount, bindings);
}

kiln_status_t collective(kiln_hal_command_buffer_t* base,
                         kiln_hal_channel_t* channel,
                         const kiln_hal_collective_op_t* op,
                         kiln_hal_buffer_ref_t send,
                         kiln_hal_buffer_ref_t recv) {
  HipCommandBuffer* commandBuffer = cast(base);
  KILN_HIP_RETURN_IF_ERROR(
      checkCollective(channel, *commandBuffer->context, *op));
  KILN_HIP_RETURN_IF_ERROR(
      commandBuffer->list.recordCollective(channel, *op, send, recv));
  std::shared_ptr<Comm> comm = channelComm(channel);
  bool known = false;
  for (const auto& other : commandBuffer->comms) known = known || other == comm;
  if (!known) commandBuffer->comms.push_back(std::move(comm));
  return nullptr;
}

const kiln_hal_command_buffer_vtable_t kVTable = {
    destroy,      begin,      end,      executionBarrier, fillBuffer,
    updateBuffer, copyBuffer, dispatch, collective};

//===----------------------------------------------------------------------===//
// Issue
//===----------------------------------------------------------------------===//

// Issues the commands; hostBytes(index) gives the source of command
// |index|'s host payload (its vector, or its pinned copy when capturing a
// graph). With |timer| (profiling), timer->mark(index, end) records events
// around each timed command.
template <typename HostBytes>
kiln_status_t issueCommands(HipCommandBuffer* commandBuffer,
                            const kiln_hal_binding_t* table,
                            hipStream_t stream, HostBytes hostBytes,
                            CommandTimer* timer = nullptr) {
  const DeviceContext& context = *commandBuffer->context;
  Platform& platform = *context.platform;
  const drivers::CommandList& list = commandBuffer->list;
  const std::vector<Command>& commands = list.commands();
  for (size_t index = 0; index < commands.size(); ++index) {
    const Command& command = commands[index];
    const bool timed = timer && drivers::isTimedCommand(command.kind);
    if (timed)
      KILN_HIP_RETURN_IF_ERROR(timer->mark(index, command.kind, stream,
                                           /*end=*/false));
    kiln_status_t status = nullptr;
    switch (command.kind) {
      case CommandKind::Barrier:
        break;
      case CommandKind::Fill: {
        StorageSpan target;
        status = list.resolve(command.target, table, &target);
        if (status || target.length == 0) break;
        size_t n = command.bytes.size();
        if (target.length % n != 0) {
          status = makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                              "fill of %llu bytes is not a multiple of its "
                              "%zu-byte pattern",
                              (unsigned long long)target.length, n);
          break;
        }
        size_t count = size_t(target.length / n);
        const uint8_t* p = command.bytes.data();
        bool aligned = reinterpret_cast<uintptr_t>(target.data) % n == 0;
        uint32_t low = 0, high = 0;
        if (n == 8) {
          std::memcpy(&low, p, 4);
          std::memcpy(&high, p + 4, 4);
        }
        if (n == 1) {
          status = context.check(
              platform.memsetD8Async(target.data, p[0], count, stream),
              "hipMemsetD8Async");
        } else if (n == 2 && aligned) {
          uint16_t value;
          std::memcpy(&value, p, 2);
          status = context.check(
              platform.memsetD16Async(target.data, value, count, stream),
              "hipMemsetD16Async");
        } else if (n == 4 && aligned) {
          uint32_t value;
          std::memcpy(&value, p, 4);
          status = context.check(
              platform.memsetD32Async(target.data, value, count, stream),
              "hipMemsetD32Async");
        } else if (n == 8 && aligned && low == high) {
          status = context.check(
              platform.memsetD32Async(target.data, low, count * 2, stream),
              "hipMemsetD32Async");
        } else {
          // Write the pattern once, then double the filled prefix with
          // device copies (non-overlapping): log2(count) copies.
          status = context.check(
              platform.memcpyAsync(target.data, hostBytes(index), n, stream),
              "hipMemcpyAsync (fill pattern)");
          size_t done = n, total = size_t(target.length);
          while (!status && done < total) {
            size_t chunk = done < total - done ? done : total - done;
            status = context.check(
                platform.memcpyAsync(target.data + done, target.data, chunk,
                                     stream),
                "hipMemcpyAsync (fill)");
            done += chunk;
          }
        }
        break;
      }
      case CommandKind::Update: {
        StorageSpan target;
        status = list.resolve(command.target, table, &target);
        if (status || command.bytes.empty()) break;
        status = context.check(
            platform.memcpyAsync(target.data, hostBytes(index),
                                 command.bytes.size(), stream),
            "hipMemcpyAsync (update)");
        break;
      }
      case CommandKind::Copy: {
        StorageSpan source, target;
        status = list.resolve(command.source, table, &source);
        if (!status) status = list.resolve(command.target, table, &target);
        if (status || source.length == 0) break;
        if (source.length != target.length) {
          status = makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                              "copy source has %llu bytes but target %llu",
                              (unsigned long long)source.length,
                              (unsigned long long)target.length);
          break;
        }
        status = context.check(
            platform.memcpyAsync(target.data, source.data,
                                 size_t(source.length), stream),
            "hipMemcpyAsync (copy)");
        break;
      }
      case CommandKind::Dispatch: {
        // Checked when the dispatch was recorded.
        const KernelInfo& kernel =
            *lookupKernel(command.executable, command.exportOrdinal);
        if (command.workgroupCount[0] == 0 || command.workgroupCount[1] == 0 ||
            command.workgroupCount[2] == 0)
          break;  // an empty grid does nothing
        size_t bindingCount = command.bindings.size();
        size_t pushCount = command.pushConstants.size();
        std::vector<void*> pointers(bindingCount);
        std::vector<uint32_t> constants(command.pushConstants);
        std::vector<void*> arguments(bindingCount + pushCount);
        for (size_t i = 0; i < bindingCount && !status; ++i) {
          StorageSpan span;
          status = list.resolve(command.bindings[i], table, &span);
          if (status) {
            status = annotate(status, "dispatch binding %zu", i);
            break;
          }
          pointers[i] = span.data;
          arguments[i] = &pointers[i];
        }
        if (status) break;
        for (size_t i = 0; i < pushCount; ++i)
          arguments[bindingCount + i] = &constants[i];
        hipError_t error = platform.moduleLaunchKernel(
            kernel.function, command.workgroupCount, kernel.blockSize,
            kernel.dynamicSharedBytes, stream, arguments.data());
        if (error != hipSuccess) {
          const kiln_hal_executable_export_t& exp =
              command.executable->exports[command.exportOrdinal];
          status = annotate(context.check(error, "hipModuleLaunchKernel",
                                          KILN_STATUS_ABORTED),
                            "launching kernel '%s' (grid %ux%ux%u, block "
                            "%ux%ux%u)",
                            exp.name, command.workgroupCount[0],
                            command.workgroupCount[1],
                            command.workgroupCount[2], kernel.blockSize[0],
                            kernel.blockSize[1], kernel.blockSize[2]);
        }
        break;
      }
      case CommandKind::Collective: {
        StorageSpan send, recv;
        status = list.resolve(command.source, table, &send);
        if (!status) status = list.resolve(command.target, table, &recv);
        if (status) break;
        status = issueCollective(command.channel, command.op, send.data,
                                 send.length, recv.data, recv.length, stream);
        break;
      }
    }
    if (status) return annotate(status, "command %zu", index);
    if (timed)
      KILN_HIP_RETURN_IF_ERROR(timer->mark(index, command.kind, stream,
                                           /*end=*/true));
  }
  return nullptr;
}

kiln_status_t replay(HipCommandBuffer* commandBuffer,
                     const kiln_hal_binding_t* table, hipStream_t stream) {
  const std::vector<Command>& commands = commandBuffer->list.commands();
  return issueCommands(commandBuffer, table, stream, [&commands](size_t index) {
    return static_cast<const void*>(commands[index].bytes.data());
  });
}

// Copies every host payload into one pinned allocation: graph memcpy nodes
// cannot read pageable memory. Caller holds graphMutex.
kiln_status_t pinHostBytes(HipCommandBuffer* commandBuffer) {
  if (commandBuffer->pinnedBytes) return nullptr;
  size_t total = 0;
  const std::vector<Command>& commands = commandBuffer->list.commands();
  std::vector<size_t> offsets;
  offsets.reserve(commands.size());
  for (const Command& command : commands) {
    offsets.push_back(total);
    total += (command.bytes.size() + 15) & ~size_t(15);
  }
  if (total == 0) return nullptr;
  const DeviceContext& context = *commandBuffer->context;
  void* pinned = nullptr;
  KILN_HIP_RETURN_IF_ERROR(context.check(
      context.platform->hostMalloc(&pinned, total), "hipHostMalloc",
      KILN_STATUS_RESOURCE_EXHAUSTED));
  for (size_t i = 0; i < commands.size(); ++i)
    if (!commands[i].bytes.empty())
      std::memcpy(static_cast<uint8_t*>(pinned) + offsets[i],
                  commands[i].bytes.data(), commands[i].bytes.size());
  commandBuffer->pinnedBytes = static_cast<uint8_t*>(pinned);
  commandBuffer->pinnedOffsets = std::move(offsets);
  return nullptr;
}

// The cache key: every slot's resolved address and length (what the
// captured commands baked in).
std::vector<uintptr_t> graphKey(HipCommandBuffer* commandBuffer,
                                const kiln_hal_binding_t* table) {
  std::vector<uintptr_t> key;
  key.reserve(commandBuffer->base.binding_capacity * 2);
  for (uint32_t slot = 0; slot < commandBuffer->base.binding_capacity; ++slot) {
    const kiln_hal_binding_t& binding = table[slot];
    HipBuffer* buffer = asHipBuffer(binding.buffer);
    uint8_t* storage =
        buffer ? buffer->storage.load(std::memory_order_acquire) : nullptr;
    key.push_back(storage ? reinterpret_cast<uintptr_t>(storage) + binding.offset
                          : 0);
    key.push_back(uintptr_t(binding.length));
  }
  return key;
}

// Captures the commands into a graph. Caller holds graphMutex.
kiln_status_t captureGraph(HipCommandBuffer* commandBuffer,
                           const kiln_hal_binding_t* table, hipStream_t stream,
                           CachedGraph* out) {
  const DeviceContext& context = *commandBuffer->context;
  Platform& platform = *context.platform;
  KILN_HIP_RETURN_IF_ERROR(pinHostBytes(commandBuffer));
  hipError_t beginError = platform.streamBeginCapture(stream);
  if (beginError != hipSuccess)
    return context.check(beginError, "hipStreamBeginCapture",
                         beginError == hipErrorNotSupported
                             ? KILN_STATUS_UNIMPLEMENTED
                             : KILN_STATUS_UNAVAILABLE);
  const uint8_t* pinned = commandBuffer->pinnedBytes;
  const std::vector<size_t>& offsets = commandBuffer->pinnedOffsets;
  kiln_status_t status = issueCommands(
      commandBuffer, table, stream, [pinned, &offsets](size_t index) {
        return static_cast<const void*>(pinned + offsets[index]);
      });
  // Capture must end whatever happened, or the stream stays unusable.
  hipGraph_t graph = nullptr;
  hipError_t error = platform.streamEndCapture(stream, &graph);
  const uint64_t every = context.options.injectCaptureFailureEvery;
  const uint64_t capture =
      context.captures.fetch_add(1, std::memory_order_relaxed) + 1;
  if (!status && error == hipSuccess && every != 0 && capture % every == 0)
    status = makeStatus(KILN_STATUS_UNAVAILABLE,
                        "injected failure ($KILN_HIP_INJECT_CAPTURE_FAILURE="
                        "%llu): capture %llu on hip://%d was invalidated",
                        (unsigned long long)every, (unsigned long long)capture,
                        context.ordinal);
  if (!status && error != hipSuccess)
    status =
        context.check(error, "hipStreamEndCapture", KILN_STATUS_UNAVAILABLE);
  if (!status) {
    status = context.check(platform.graphInstantiate(&out->exec, graph),
                           "hipGraphInstantiate", KILN_STATUS_UNAVAILABLE);
  }
  if (status) {
    if (graph) platform.graphDestroy(graph);
    out->exec = nullptr;
    return status;
  }
  out->graph = graph;
  return nullptr;
}

// Records a failed capture (and frees |status|): a platform without capture
// (UNIMPLEMENTED) or kMaxCaptureFailures failures in a row end the graphs of
// this command buffer; otherwise the next capture comes after 2^(n-1)
// captures that miss the cache would have made (replayed instead). Each failure
// is reported once on stderr, as replays cost a launch per command. Caller
// holds graphMutex.
void noteCaptureFailure(HipCommandBuffer *commandBuffer, kiln_status_t status) {
  const uint32_t failures = ++commandBuffer->captureFailures;
  const bool final = statusCode(status) == KILN_STATUS_UNIMPLEMENTED ||
                     failures >= kMaxCaptureFailures;
  commandBuffer->graphsFailed = final;
  commandBuffer->replaysBeforeRetry = final ? 0 : uint64_t(1) << (failures - 1);
  std::fprintf(stderr,
               "kiln hip: a command buffer of %zu commands on hip://%d could "
               "not be captured into a graph (%s); %s\n",
               commandBuffer->list.commands().size(),
               commandBuffer->context->ordinal, statusMessage(status),
               final
                   ? "its commands are replayed on the stream from now on"
                   : "this run replays its commands, a later run tries again");
  freeStatus(status);
}

}  // namespace

kiln_status_t createCommandBuffer(std::shared_ptr<const DeviceContext> context,
                                  kiln_hal_command_buffer_mode_t mode,
                                  uint32_t bindingCapacity,
                                  kiln_hal_command_buffer_t** outCommandBuffer) {
  auto* commandBuffer = new (std::nothrow) HipCommandBuffer();
  if (!commandBuffer)
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED,
                      "out of memory creating a command buffer");
  kiln_hal_command_buffer_initialize(&kVTable, mode, bindingCapacity,
                                     &commandBuffer->base);
  commandBuffer->context = std::move(context);
  *outCommandBuffer = &commandBuffer->base;
  return nullptr;
}

kiln_status_t validateBindingTable(kiln_hal_command_buffer_t* base,
                                   const DeviceContext& context,
                                   const kiln_hal_binding_table_t& table) {
  if (base->resource.vtable != &kVTable)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "command buffer was not created by the hip driver");
  HipCommandBuffer* commandBuffer = cast(base);
  if (commandBuffer->context->ordinal != context.ordinal ||
      commandBuffer->context->platform != context.platform)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "command buffer was created for hip://%d, not hip://%d",
                      commandBuffer->context->ordinal, context.ordinal);
  return commandBuffer->list.validateBindingTable(table);
}

void collectiveComms(kiln_hal_command_buffer_t* base,
                     std::vector<std::shared_ptr<Comm>>* out) {
  for (const auto& comm : cast(base)->comms) {
    bool known = false;
    for (const auto& other : *out) known = known || other == comm;
    if (!known) out->push_back(comm);
  }
}

kiln_status_t issueCommandBufferTimed(kiln_hal_command_buffer_t* base,
                                      const kiln_hal_binding_t* table,
                                      hipStream_t stream, CommandTimer* timer) {
  HipCommandBuffer* commandBuffer = cast(base);
  const std::vector<Command>& commands = commandBuffer->list.commands();
  return issueCommands(
      commandBuffer, table, stream,
      [&commands](size_t index) {
        return static_cast<const void*>(commands[index].bytes.data());
      },
      timer);
}

kiln_status_t issueCommandBuffer(kiln_hal_command_buffer_t* base,
                                 const kiln_hal_binding_t* table,
                                 hipStream_t stream) {
  HipCommandBuffer* commandBuffer = cast(base);
  const DeviceContext& context = *commandBuffer->context;
  // Command buffers with collectives are replayed: NCCL calls captured into
  // graphs have been seen to hang (docs/drivers.md), and the argument check
  // between the ranks (collective_checks) needs the host at every run.
  bool useGraph = !(base->mode & KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT) &&
                  context.options.graphs && !commandBuffer->list.commands().empty() &&
                  commandBuffer->comms.empty();
  if (!useGraph) return replay(commandBuffer, table, stream);

  std::lock_guard<std::mutex> lock(commandBuffer->graphMutex);
  if (commandBuffer->graphsFailed) return replay(commandBuffer, table, stream);
  // Every storage pointer must exist now; a missing one is reported by the
  // replay's own resolution.
  for (const Command& command : commandBuffer->list.commands()) {
    for (const BufferRef* ref : {&command.target, &command.source}) {
      if (ref->buffer &&
          !asHipBuffer(ref->buffer)->storage.load(std::memory_order_acquire))
        return replay(commandBuffer, table, stream);
    }
    for (const BufferRef& ref : command.bindings)
      if (ref.buffer &&
          !asHipBuffer(ref.buffer)->storage.load(std::memory_order_acquire))
        return replay(commandBuffer, table, stream);
  }
  for (const BufferRef& ref : commandBuffer->list.slotRefs()) {
    HipBuffer* buffer = asHipBuffer(table[ref.slot].buffer);
    if (!buffer->storage.load(std::memory_order_acquire))
      return replay(commandBuffer, table, stream);
  }
  std::vector<uintptr_t> key = graphKey(commandBuffer, table);
  auto& graphs = commandBuffer->graphs;
  auto hit = graphs.begin();
  while (hit != graphs.end() && hit->key != key) ++hit;
  if (hit == graphs.end()) {
    if (commandBuffer->replaysBeforeRetry > 0) {
      --commandBuffer->replaysBeforeRetry;
      return replay(commandBuffer, table, stream);
    }
    CachedGraph entry;
    entry.key = std::move(key);
    kiln_status_t status = captureGraph(commandBuffer, table, stream, &entry);
    kiln_status_code_t code = statusCode(status);
    if (code == KILN_STATUS_UNIMPLEMENTED || code == KILN_STATUS_UNAVAILABLE) {
      // The platform cannot capture (old HIP): replay from now on. Any other
      // capture failure replays this run and retries later.
      noteCaptureFailure(commandBuffer, status);
      return replay(commandBuffer, table, stream);
    }
    KILN_HIP_RETURN_IF_ERROR(status);
    commandBuffer->captureFailures = 0;
    if (graphs.size() >= kGraphCacheSize) {
      destroyGraph(context, graphs.back());
      graphs.pop_back();
    }
    graphs.push_front(std::move(entry));
  } else if (hit != graphs.begin()) {
    graphs.splice(graphs.begin(), graphs, hit);
  }
  return context.check(
      context.platform->graphLaunch(graphs.front().exec, stream),
      "hipGraphLaunch", KILN_STATUS_ABORTED);
}

}  // namespace kiln::hip
