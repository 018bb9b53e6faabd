#include "drivers/local/local_device.h"

#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

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

// A retained copy of a semaphore list.
struct SemaphoreList {
  std::vector<kiln_hal_semaphore_t*> semaphores;
  std::vector<uint64_t> values;

  void assign(const kiln_hal_semaphore_list_t& list) {
    semaphores.assign(list.semaphores, list.semaphores + list.count);
    values.assign(list.payload_values, list.payload_values + list.count);
    for (kiln_hal_semaphore_t* semaphore : semaphores)
      kiln_hal_semaphore_retain(semaphore);
  }
  ~SemaphoreList() {
    for (kiln_hal_semaphore_t* semaphore : semaphores)
      kiln_hal_semaphore_release(semaphore);
  }
};

const kiln_hal_semaphore_vtable_t* semaphoreVTable(kiln_hal_semaphore_t* s) {
  return static_cast<const kiln_hal_semaphore_vtable_t*>(s->resource.vtable);
}

enum class OperationKind { Alloca, Dealloca, Execute };

// One queue operation; owns references to everything it uses.
struct Operation {
  OperationKind kind;
  SemaphoreList wait;
  SemaphoreList signal;
  kiln_hal_buffer_t* buffer = nullptr;  // alloca / dealloca, retained
  std::vector<kiln_hal_command_buffer_t*> commandBuffers;  // retained
  // One resolved binding table per command buffer (buffers retained).
  std::vector<std::vector<kiln_hal_binding_t>> tables;

  ~Operation() {
    kiln_hal_buffer_release(buffer);
    for (kiln_hal_command_buffer_t* commandBuffer : commandBuffers)
      kiln_hal_command_buffer_release(commandBuffer);
    for (auto& table : tables)
      for (kiln_hal_binding_t& binding : table)
        kiln_hal_buffer_release(binding.buffer);
  }
};

struct LocalDevice {
  kiln_hal_device_t base;
  kiln_hal_driver_t* driver = nullptr;  // retained
  uint32_t ordinal = 0;
  std::shared_ptr<ThreadPool> pool;
  std::shared_ptr<CollectiveHub> hub;
  LocalAllocator allocator;

  std::mutex mutex;
  std::condition_variable queueChanged;
  std::deque<std::unique_ptr<Operation>> queue;
  bool stopping = false;
  std::thread thread;

  void queueMain();
  kiln_status_t waitFor(kiln_hal_semaphore_t* semaphore, uint64_t value);
  kiln_status_t run(Operation& operation);
  void enqueue(std::unique_ptr<Operation> operation);
};

LocalDevice* cast(kiln_hal_device_t* device) {
  return reinterpret_cast<LocalDevice*>(device);
}

bool isStopping(LocalDevice* device) {
  std::lock_guard<std::mutex> lock(device->mutex);
  return device->stopping;
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
    if (isStopping(this))
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
    case OperationKind::Execute:
      for (size_t i = 0; i < operation.commandBuffers.size(); ++i) {
        const auto& table = operation.tables[i];
        kiln_status_t status = executeCommandBuffer(
            operation.commandBuffers[i], table.data(), *pool,
            [this] { return isStopping(this); });
        if (status)
          return kiln_status_annotate(status, "command buffer %zu of a "
                                              "submission to local://%u",
                                      i, ordinal);
      }
      return nullptr;
  }
  return nullptr;
}

void LocalDevice::queueMain() {
  while (true) {
    std::unique_ptr<Operation> operation;
    {
      std::unique_lock<std::mutex> lock(mutex);
      queueChanged.wait(lock, [this] { return stopping || !queue.empty(); });
      if (queue.empty()) return;  // stopping and drained
      operation = std::move(queue.front());
      queue.pop_front();
    }
    kiln_status_t status = run(*operation);
    SemaphoreList& signal = operation->signal;
    for (size_t i = 0; i < signal.semaphores.size(); ++i) {
      kiln_hal_semaphore_t* semaphore = signal.semaphores[i];
      const kiln_hal_semaphore_vtable_t* vtable = semaphoreVTable(semaphore);
      if (status) {
        vtable->fail(semaphore, kiln_status_clone(status));
        continue;
      }
      kiln_status_t signalStatus = vtable->signal(semaphore, signal.values[i]);
      // A semaphore that cannot take the value (already past it, or failed)
      // is failed so that its waiters learn about it.
      if (signalStatus) vtable->fail(semaphore, signalStatus);
    }
    kiln_status_free(status);
  }
}

void LocalDevice::enqueue(std::unique_ptr<Operation> operation) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    queue.push_back(std::move(operation));
  }
  queueChanged.notify_one();
}

//===----------------------------------------------------------------------===//
// Vtable
//===----------------------------------------------------------------------===//

void destroy(kiln_hal_device_t* base) {
  LocalDevice* device = cast(base);
  {
    std::lock_guard<std::mutex> lock(device->mutex);
    device->stopping = true;
  }
  device->queueChanged.notify_all();
  device->thread.join();
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
  return cast(base)->hub->createChannel(params, outChannel);
}

kiln_status_t createChannelId(kiln_hal_device_t* base, uint8_t* outId,
                              size_t capacity, size_t* outLength) {
  return cast(base)->hub->createChannelId(outId, capacity, outLength);
}

std::unique_ptr<Operation> newOperation(OperationKind kind,
                                        const kiln_hal_semaphore_list_t* wait,
                                        const kiln_hal_semaphore_list_t* signal) {
  std::unique_ptr<Operation> operation(new Operation());
  operation->kind = kind;
  operation->wait.assign(*wait);
  operation->signal.assign(*signal);
  return operation;
}

kiln_status_t queueAlloca(kiln_hal_device_t* base, kiln_hal_queue_affinity_t,
                          const kiln_hal_semaphore_list_t* wait,
                          const kiln_hal_semaphore_list_t* signal,
                          const kiln_hal_buffer_params_t* params,
                          kiln_device_size_t size,
                          kiln_hal_buffer_t** outBuffer) {
  kiln_hal_buffer_t* buffer = nullptr;
  KILN_RETURN_IF_ERROR(createBuffer(params, size, /*allocateNow=*/false,
                                    &buffer));
  auto operation = newOperation(OperationKind::Alloca, wait, signal);
  kiln_hal_buffer_retain(buffer);
  operation->buffer = buffer;
  cast(base)->enqueue(std::move(operation));
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
  auto operation = newOperation(OperationKind::Dealloca, wait, signal);
  kiln_hal_buffer_retain(buffer);
  operation->buffer = buffer;
  cast(base)->enqueue(std::move(operation));
  return nullptr;
}

kiln_status_t queueExecute(kiln_hal_device_t* base, kiln_hal_queue_affinity_t,
                           const kiln_hal_semaphore_list_t* wait,
                           const kiln_hal_semaphore_list_t* signal,
                           uint32_t commandBufferCount,
                           kiln_hal_command_buffer_t* const* commandBuffers,
                           const kiln_hal_binding_table_t* bindingTables) {
  auto operation = newOperation(OperationKind::Execute, wait, signal);
  operation->tables.resize(commandBufferCount);
  for (uint32_t i = 0; i < commandBufferCount; ++i) {
    const kiln_hal_binding_table_t& source = bindingTables[i];
    auto& table = operation->tables[i];
    table.resize(source.count);
    for (uint32_t slot = 0; slot < source.count; ++slot) {
      kiln_hal_binding_t binding = source.bindings[slot];
      if (binding.buffer) {
        // The core checked the range; resolve an open length.
        if (binding.length == KILN_HAL_WHOLE_BUFFER)
          binding.length = binding.buffer->byte_length - binding.offset;
        kiln_hal_buffer_retain(binding.buffer);
      }
      table[slot] = binding;
    }
    kiln_hal_binding_table_t resolved = {source.count, table.data()};
    kiln_status_t status = validateBindingTable(commandBuffers[i], resolved);
    if (status)
      return kiln_status_annotate(status, "command buffer %u of a submission "
                                          "to local://%u",
                                  i, cast(base)->ordinal);
  }
  for (uint32_t i = 0; i < commandBufferCount; ++i) {
    kiln_hal_command_buffer_retain(commandBuffers[i]);
    operation->commandBuffers.push_back(commandBuffers[i]);
  }
  cast(base)->enqueue(std::move(operation));
  return nullptr;
}

kiln_status_t queueFlush(kiln_hal_device_t*, kiln_hal_queue_affinity_t) {
  return nullptr;  // operations are issued as soon as they are enqueued
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
};

}  // namespace

kiln_status_t createDevice(kiln_hal_driver_t* driver, uint32_t ordinal,
                           std::shared_ptr<ThreadPool> pool,
                           std::shared_ptr<CollectiveHub> hub,
                           kiln_hal_device_t** outDevice) {
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
  initializeAllocator(&device->allocator);
  device->thread = std::thread([device] { device->queueMain(); });
  *outDevice = &device->base;
  return nullptr;
}

}  // namespace kiln::local
