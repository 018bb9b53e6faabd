#include "drivers/common/driver_queue.h"

#include "drivers/common/resource.h"

namespace kiln::drivers {

SemaphoreList::~SemaphoreList() {
  for (kiln_hal_semaphore_t* semaphore : semaphores) release(semaphore);
}

void SemaphoreList::assign(const kiln_hal_semaphore_list_t& list) {
  semaphores.assign(list.semaphores, list.semaphores + list.count);
  values.assign(list.payload_values, list.payload_values + list.count);
  for (kiln_hal_semaphore_t* semaphore : semaphores) retain(semaphore);
}

void signalOrFail(const kiln_hal_host_api_t& host, const SemaphoreList& signal,
                  kiln_status_t status) {
  for (size_t i = 0; i < signal.semaphores.size(); ++i) {
    kiln_hal_semaphore_t* semaphore = signal.semaphores[i];
    const kiln_hal_semaphore_vtable_t* vtable = semaphoreVTable(semaphore);
    if (status) {
      vtable->fail(semaphore, host.status_clone(status));
      continue;
    }
    kiln_status_t signalStatus = vtable->signal(semaphore, signal.values[i]);
    if (signalStatus) vtable->fail(semaphore, signalStatus);
  }
}

QueueOperation::QueueOperation(OperationKind kind,
                               const kiln_hal_semaphore_list_t& wait,
                               const kiln_hal_semaphore_list_t& signal)
    : kind(kind) {
  this->wait.assign(wait);
  this->signal.assign(signal);
}

QueueOperation::~QueueOperation() {
  release(buffer);
  for (kiln_hal_command_buffer_t* commandBuffer : commandBuffers)
    release(commandBuffer);
  for (auto& table : tables)
    for (kiln_hal_binding_t& binding : table) release(binding.buffer);
}

void QueueOperation::setBuffer(kiln_hal_buffer_t* target) {
  retain(target);
  buffer = target;
}

kiln_hal_binding_table_t QueueOperation::addBindingTable(
    const kiln_hal_binding_table_t& source) {
  tables.emplace_back(source.count);
  std::vector<kiln_hal_binding_t>& table = tables.back();
  for (uint32_t slot = 0; slot < source.count; ++slot) {
    kiln_hal_binding_t binding = source.bindings[slot];
    if (binding.buffer) {
      if (binding.length == KILN_HAL_WHOLE_BUFFER)
        binding.length = binding.buffer->byte_length - binding.offset;
      retain(binding.buffer);
    }
    table[slot] = binding;
  }
  return {source.count, table.data()};
}

void QueueOperation::addCommandBuffer(
    kiln_hal_command_buffer_t* commandBuffer) {
  retain(commandBuffer);
  commandBuffers.push_back(commandBuffer);
}

}  // namespace kiln::drivers
