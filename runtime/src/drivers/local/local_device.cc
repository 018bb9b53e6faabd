#include "drivers/local/local_device.h"

#include <cstdio>
#include <memory>
#include <new>
#include <thread>

#include "drivers/common/driver_queue.h"
#include "drivers/local/local_buffer.h"
#include "drivers/local/local_command_buffer.h"
#include "drivers/local/local_executable.h"
#include "drivers/local/local_semaphore.h"

namespace kiln::local {
namespace {

// How often a queue thread blocked on a wait semaphore checks whether its
// device is being destroyed. Wake-ups on signals are immediate; this only
// bounds how long device destruction takes when a wait never resolves.
constexpr kiln_duration_t kShutdownPollNs = 20 * 1000 * 1000;

using drivers::OperationKind;
using drivers::semaphoreVTable;
using Operation = drivers::QueueOperation;

struct LocalDevice {
  kiln_hal_device_t base;
  kiln_hal_driver_t* driver = nullptr;  // retained
  uint32_t ordinal = 0;
  std::shared_ptr<ThreadPool> pool;
  std::shared_ptr<CollectiveHub> hub;
  std::shared_ptr<drivers::BlockCache> blocks;
  // The abort words of the windows of this device's channels: set when a
  // submission fails (drivers/common/window_aborts.h).
  std::shared_ptr<drivers::WindowAborts> windowAborts =
      std::make_shared<drivers::WindowAborts>();
  LocalAllocator allocator;

  drivers::OperationQueue<Operation> queue;
  std::thread thread;

  void queueMain();
  kiln_status_t waitFor(kiln_hal_semaphore_t* semaphore, uint64_t value);
  kiln_status_t run(Operation& operation);
};

LocalDevice* cast(kiln_hal_device_t* device) {
  return reinterpret_cast<LocalDevice*>(device);
}

kiln_status_t LocalDevice::waitFor(kiln_hal_semaphore_t* semaphore,
                                   uint64_t value) {
  const kiln_hal_semaphore_vtable_t* vtable = semaphoreVTable(semaphore);
  while (true) {
    kiln_status_t status = vtable->wait(
        semaphore, value, kiln_deadline_from_timeout(kShutdownPollNs));
    if (kiln_status_code(status) != KILN_STATUS_DEADLINE_EXCEEDED)
      return status;
    kiln_status_free(status);
    if (queue.isStopping())
      return kiln_make_status(KILN_STATUS_ABORTED,
                              "local://%u was destroyed while a queue "
                              "operation still waited for a semaphore to "
                              "reach %llu",
                              ordinal, (unsigned long long)value);
  }
}

kiln_status_t LocalDevice::run(Operation& operation) {
  for (size_t i = 0; i < operation.wait.semaphores.size(); ++i) {
    kiln_status_t status =
        waitFor(operation.wait.semaphores[i], operation.wait.values[i]);
    if (status)
      return kiln_status_annotate(status, "wait semaphore %zu of a queue "
                                          "operation on local://%u",
                                  i, ordinal);
  }
  switch (operation.kind) {
    case OperationKind::Alloca:
      return allocateStorage(asLocalBuffer(operation.buffer));
    case OperationKind::Dealloca: {
      LocalBuffer* buffer = asLocalBuffer(operation.buffer);
      if (buffer->queueAllocated) freeStorage(buffer);
      return nullptr;
    }
    case OperationKind::Execute: {
      const bool timeCommands =
          operation.profile &&
          operation.profile->mode == KILN_HAL_PROFILE_COMMANDS;
      kiln_time_t start = kiln_time_now();
      for (size_t i = 0; i < operation.commandBuffers.size(); ++i) {
        const auto& table = operation.tables[i];
        kiln_status_t status = executeCommandBuffer(
            operation.commandBuffers[i], table.data(), *pool,
            [this] { return queue.isStopping(); },
            timeCommands ? operation.profile : nullptr, uint32_t(i));
        if (status)
          return kiln_status_annotate(status, "command buffer %zu of a "
                                              "submission to local://%u",
                                      i, ordinal);
      }
      if (operation.profile)
        operation.profile->span_ns = uint64_t(kiln_time_now() - start);
      return nullptr;
    }
  }
  return nullptr;
}

void LocalDevice::queueMain() {
  while (std::unique_ptr<Operation> operation = queue.pop()) {
    kiln_status_t status = run(*operation);
    // Signal after releasing the operation's references, so that a waiter
    // sees the buffers it handed over released (their storage back in the
    // block cache for its next call).
    drivers::SemaphoreList signal;
    signal.semaphores.swap(operation->signal.semaphores);
    signal.values.swap(operation->signal.values);
    operation.reset();
    // This rank's part of later collective calls never runs: its peers'
    // compiled collectives must not wait for it.
    if (status) windowAborts->abortAll();
    drivers::signalOrFail(*kiln_hal_host_api(), signal, status);
    kiln_status_free(status);
  }
}

//===----------------------------------------------------------------------===//
// Vtable
//===----------------------------------------------------------------------===//

void destroy(kiln_hal_resource_t* resource) {
  LocalDevice* device = cast(reinterpret_cast<kiln_hal_device_t*>(resource));
  device->queue.stop();
  device->thread.join();
  // Buffers that outlive the device free their storage directly.
  device->blocks->close();
  kiln_hal_driver_t* driver = device->driver;
  delete device;
  kiln_hal_driver_release(driver);
}

kiln_status_t queryInfo(kiln_hal_device_t* base,
                        kiln_hal_device_info_t* outInfo) {
  LocalDevice* device = cast(base);
  outInfo->ordinal = device->ordinal;
  std::snprintf(outInfo->name, sizeof(outInfo->name),
                "local CPU device %u (%u worker threads)", device->ordinal,
                device->pool->workerCount() + 1);
  return nullptr;
}

kiln_hal_allocator_t* allocator(kiln_hal_device_t* base) {
  return &cast(base)->allocator.base;
}

kiln_status_t createSemaphoreFn(kiln_hal_device_t*, uint64_t initialValue,
                                kiln_hal_semaphore_t** outSemaphore) {
  return createSemaphore(initialValue, outSemaphore);
}

kiln_status_t createCommandBufferFn(
    kiln_hal_device_t*, kiln_hal_command_buffer_mode_t mode,
    uint32_t bindingCapacity, kiln_hal_command_buffer_t** outCommandBuffer) {
  return createCommandBuffer(mode, bindingCapacity, outCommandBuffer);
}

kiln_status_t createExecutableCacheFn(kiln_hal_device_t*,
                                      kiln_hal_executable_cache_t** outCache) {
  return createExecutableCache(outCache);
}

kiln_status_t createChannel(kiln_hal_device_t* base,
                            const kiln_hal_channel_params_t* params,
                            kiln_hal_channel_t** outChannel) {
  return cast(base)->hub->createChannel(params, cast(base)->blocks,
                                       cast(base)->windowAborts, outChannel);
}

kiln_status_t createChannelId(kiln_hal_device_t* base, uint8_t* outId,
                              size_t capacity, size_t* outLength) {
  return cast(base)->hub->createChannelId(outId, capacity, outLength);
}

kiln_status_t queueAlloca(kiln_hal_device_t* base, kiln_hal_queue_affinity_t,
                          const kiln_hal_semaphore_list_t* wait,
                          const kiln_hal_semaphore_list_t* signal,
                          const kiln_hal_buffer_params_t* params,
                          kiln_device_size_t size,
                          kiln_hal_buffer_t** outBuffer) {
  kiln_hal_buffer_t* buffer = nullptr;
  KILN_RETURN_IF_ERROR(createBuffer(cast(base)->blocks, params, size,
                                    /*allocateNow=*/false, &buffer));
  auto operation =
      std::make_unique<Operation>(OperationKind::Alloca, *wait, *signal);
  operation->setBuffer(buffer);
  cast(base)->queue.push(std::move(operation));
  *outBuffer = buffer;
  return nullptr;
}

kiln_status_t queueDealloca(kiln_hal_device_t* base, kiln_hal_queue_affinity_t,
                            const kiln_hal_semaphore_list_t* wait,
                            const kiln_hal_semaphore_list_t* signal,
                            kiln_hal_buffer_t* buffer) {
  if (!asLocalBuffer(buffer))
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "queue_dealloca: buffer was not created by the "
                            "local driver");
  auto operation =
      std::make_unique<Operation>(OperationKind::Dealloca, *wait, *signal);
  operation->setBuffer(buffer);
  cast(base)->queue.push(std::move(operation));
  return nullptr;
}

kiln_status_t queueExecuteProfiled(
    kiln_hal_device_t* base, kiln_hal_queue_affinity_t,
    const kiln_hal_semaphore_list_t* wait,
    const kiln_hal_semaphore_list_t* signal, uint32_t commandBufferCount,
    kiln_hal_command_buffer_t* const* commandBuffers,
    const kiln_hal_binding_table_t* bindingTables,
    kiln_hal_execution_profile_t* profile) {
  auto operation =
      std::make_unique<Operation>(OperationKind::Execute, *wait, *signal);
  for (uint32_t i = 0; i < commandBufferCount; ++i) {
    kiln_hal_binding_table_t resolved =
        operation->addBindingTable(bindingTables[i]);
    kiln_status_t status = validateBindingTable(commandBuffers[i], resolved);
    if (status)
      return kiln_status_annotate(status, "command buffer %u of a submission "
                                          "to local://%u",
                                  i, cast(base)->ordinal);
  }
  for (uint32_t i = 0; i < commandBufferCount; ++i)
    operation->addCommandBuffer(commandBuffers[i]);
  operation->profile = profile;
  cast(base)->queue.push(std::move(operation));
  return nullptr;
}

kiln_status_t queueExecute(kiln_hal_device_t* base,
                           kiln_hal_queue_affinity_t affinity,
                           const kiln_hal_semaphore_list_t* wait,
                           const kiln_hal_semaphore_list_t* signal,
                           uint32_t commandBufferCount,
                           kiln_hal_command_buffer_t* const* commandBuffers,
                           const kiln_hal_binding_table_t* bindingTables) {
  return queueExecuteProfiled(base, affinity, wait, signal, commandBufferCount,
                              commandBuffers, bindingTables, nullptr);
}

kiln_status_t queueFlush(kiln_hal_device_t*, kiln_hal_queue_affinity_t) {
  return nullptr;  // operations are issued as soon as they are enqueued
}

kiln_status_t queryMemoryStats(kiln_hal_device_t* base,
                               kiln_hal_device_memory_stats_t* outStats) {
  cast(base)->blocks->stats(outStats);
  return nullptr;
}

kiln_status_t trim(kiln_hal_device_t* base) {
  cast(base)->blocks->trim();
  return nullptr;
}

// Local devices compute on host memory and run no streams.
kiln_status_t queryExternalInfo(kiln_hal_device_t*,
                                kiln_hal_device_external_info_t* outInfo) {
  outInfo->memory_type = KILN_HAL_EXTERNAL_MEMORY_HOST;
  outInfo->device_ordinal = 0;
  outInfo->stream = 0;
  return nullptr;
}

const kiln_hal_device_vtable_t kVTable = {
    destroy,
    queryInfo,
    allocator,
    createSemaphoreFn,
    createCommandBufferFn,
    createExecutableCacheFn,
    createChannel,
    createChannelId,
    queueAlloca,
    queueDealloca,
    queueExecute,
    queueFlush,
    queryMemoryStats,
    trim,
    queueExecuteProfiled,
    queryExternalInfo,
    /*wait_external_stream=*/nullptr,  // no streams: program order suffices
};

}  // namespace

kiln_status_t createDevice(kiln_hal_driver_t* driver, uint32_t ordinal,
                           std::shared_ptr<ThreadPool> pool,
                           std::shared_ptr<CollectiveHub> hub,
                           uint64_t memoryLimit, kiln_hal_device_t** outDevice) {
  auto* device = new (std::nothrow) LocalDevice();
  if (!device)
    return kiln_make_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory creating local://%u", ordinal);
  kiln_hal_resource_initialize(&kVTable, &device->base.resource);
  device->base.driver_name = driver->name;
  kiln_hal_driver_retain(driver);
  device->driver = driver;
  device->ordinal = ordinal;
  device->pool = std::move(pool);
  device->hub = std::move(hub);
  device->blocks = createBlockCache(ordinal, memoryLimit);
  initializeAllocator(device->blocks, &device->allocator);
  device->thread = std::thread([device] { device->queueMain(); });
  *outDevice = &device->base;
  return nullptr;
}

}  // namespace kiln::local
