// The sample device and its queue.
//
// The HAL's queue contract: queue_alloca/dealloca/execute return as soon as
// the operation is enqueued; each operation waits for its wait semaphores
// without blocking the caller, runs after every earlier operation of the
// queue, then signals its signal semaphores, or fails them with the error
// (its own, or the failure of a semaphore it waited on).
//
// The simplest design that honours that for any semaphore, including another
// driver's, is one queue thread per device taking operations in FIFO order:
// it blocks in the wait semaphores' own `wait` (through their vtables), runs
// the operation, signals. Everything the device executes runs serially on
// that thread, one command and one workgroup at a time.
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample_driver.h"

// How often the queue thread, blocked on a wait semaphore, checks whether
// its device is being destroyed. Wake-ups on signals are immediate; this only
// bounds how long destroying a device with a stuck submission takes.
#define SAMPLE_SHUTDOWN_POLL_NS (20 * 1000 * 1000)

typedef enum sample_operation_kind_e {
  SAMPLE_OPERATION_ALLOCA,
  SAMPLE_OPERATION_DEALLOCA,
  SAMPLE_OPERATION_EXECUTE,
} sample_operation_kind_t;

// A retained copy of a kiln_hal_semaphore_list_t (the caller's arrays are
// only borrowed for the call).
typedef struct sample_semaphore_list_t {
  uint32_t count;
  kiln_hal_semaphore_t** semaphores;
  uint64_t* values;
} sample_semaphore_list_t;

// One queued operation. It owns a reference to everything it uses so the
// caller may release its objects right after submitting.
typedef struct sample_operation_t {
  struct sample_operation_t* next;
  sample_operation_kind_t kind;
  sample_semaphore_list_t wait;
  sample_semaphore_list_t signal;
  kiln_hal_buffer_t* buffer;  // alloca / dealloca
  uint32_t command_buffer_count;
  kiln_hal_command_buffer_t** command_buffers;
  // One table per command buffer, lengths resolved (never WHOLE_BUFFER).
  kiln_hal_binding_table_t* tables;
} sample_operation_t;

typedef struct sample_device_t {
  kiln_hal_device_t base;
  kiln_hal_driver_t* driver;  // retained: devices keep their driver alive
  uint32_t ordinal;
  sample_allocator_t allocator;

  pthread_mutex_t mutex;  // guards the fields below
  pthread_cond_t queue_changed;
  sample_operation_t* head;  // FIFO of pending operations
  sample_operation_t* tail;
  bool stopping;
  pthread_t thread;
} sample_device_t;

static sample_device_t* device_cast(kiln_hal_device_t* device) {
  return (sample_device_t*)device;
}

static const kiln_hal_semaphore_vtable_t* semaphore_vtable(
    kiln_hal_semaphore_t* semaphore) {
  return (const kiln_hal_semaphore_vtable_t*)semaphore->resource.vtable;
}

//===----------------------------------------------------------------------===//
// Operations
//===----------------------------------------------------------------------===//

static void semaphore_list_release(sample_semaphore_list_t* list) {
  for (uint32_t i = 0; i < list->count; ++i)
    kiln_hal_resource_release(&list->semaphores[i]->resource);
  free(list->semaphores);
  free(list->values);
}

static void operation_free(sample_operation_t* operation) {
  if (!operation) return;
  semaphore_list_release(&operation->wait);
  semaphore_list_release(&operation->signal);
  if (operation->buffer)
    kiln_hal_resource_release(&operation->buffer->resource);
  for (uint32_t i = 0; i < operation->command_buffer_count; ++i) {
    if (operation->command_buffers && operation->command_buffers[i])
      kiln_hal_resource_release(&operation->command_buffers[i]->resource);
    if (!operation->tables) continue;
    const kiln_hal_binding_table_t* table = &operation->tables[i];
    for (uint32_t slot = 0; slot < table->count; ++slot)
      if (table->bindings[slot].buffer)
        kiln_hal_resource_release(&table->bindings[slot].buffer->resource);
    free((void*)table->bindings);
  }
  free(operation->command_buffers);
  free(operation->tables);
  free(operation);
}

static kiln_status_t out_of_memory(void) {
  return sample_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                       "out of memory enqueueing a sample queue operation");
}

static kiln_status_t semaphore_list_copy(const kiln_hal_semaphore_list_t* from,
                                         sample_semaphore_list_t* to) {
  if (from->count == 0) return NULL;
  to->semaphores = (kiln_hal_semaphore_t**)calloc(from->count,
                                                  sizeof(*to->semaphores));
  to->values = (uint64_t*)calloc(from->count, sizeof(*to->values));
  if (!to->semaphores || !to->values) return out_of_memory();
  for (uint32_t i = 0; i < from->count; ++i) {
    to->semaphores[i] = from->semaphores[i];
    to->values[i] = from->payload_values[i];
    kiln_hal_resource_retain(&to->semaphores[i]->resource);
    to->count = i + 1;  // what semaphore_list_release must drop
  }
  return NULL;
}

// A new operation holding references to the semaphores of |wait| and
// |signal| (the core validated the lists: non-NULL semaphores and arrays).
static kiln_status_t operation_create(sample_operation_kind_t kind,
                                      const kiln_hal_semaphore_list_t* wait,
                                      const kiln_hal_semaphore_list_t* signal,
                                      sample_operation_t** out_operation) {
  sample_operation_t* operation =
      (sample_operation_t*)calloc(1, sizeof(*operation));
  if (!operation) return out_of_memory();
  operation->kind = kind;
  kiln_status_t status = semaphore_list_copy(wait, &operation->wait);
  if (!status) status = semaphore_list_copy(signal, &operation->signal);
  if (status) {
    operation_free(operation);
    return status;
  }
  *out_operation = operation;
  return NULL;
}

static void enqueue(sample_device_t* device, sample_operation_t* operation) {
  pthread_mutex_lock(&device->mutex);
  if (device->tail) {
    device->tail->next = operation;
  } else {
    device->head = operation;
  }
  device->tail = operation;
  pthread_cond_signal(&device->queue_changed);
  pthread_mutex_unlock(&device->mutex);
}

static bool is_stopping(sample_device_t* device) {
  pthread_mutex_lock(&device->mutex);
  bool stopping = device->stopping;
  pthread_mutex_unlock(&device->mutex);
  return stopping;
}

//===----------------------------------------------------------------------===//
// The queue thread
//===----------------------------------------------------------------------===//

// Waits for |semaphore| to reach |value| in short slices so that destroying
// the device can abort a wait that would never end.
static kiln_status_t wait_for(sample_device_t* device,
                              kiln_hal_semaphore_t* semaphore,
                              uint64_t value) {
  while (true) {
    kiln_status_t status = semaphore_vtable(semaphore)->wait(
        semaphore, value, sample_time_now() + SAMPLE_SHUTDOWN_POLL_NS);
    if (sample_status_code(status) != KILN_STATUS_DEADLINE_EXCEEDED)
      return status;
    sample_status_free(status);
    if (is_stopping(device))
      return sample_status(KILN_STATUS_ABORTED,
                           "sample://%u was destroyed while a queue operation "
                           "still waited for a semaphore to reach %llu",
                           device->ordinal, (unsigned long long)value);
  }
}

static kiln_status_t run_operation(sample_device_t* device,
                                   sample_operation_t* operation) {
  for (uint32_t i = 0; i < operation->wait.count; ++i) {
    kiln_status_t status = wait_for(device, operation->wait.semaphores[i],
                                    operation->wait.values[i]);
    if (status)
      return sample_annotate(status,
                             "wait semaphore %u of a queue operation on "
                             "sample://%u",
                             i, device->ordinal);
  }
  switch (operation->kind) {
    case SAMPLE_OPERATION_ALLOCA:
      return sample_buffer_allocate_storage(operation->buffer);
    case SAMPLE_OPERATION_DEALLOCA:
      sample_buffer_deallocate_storage(operation->buffer);
      return NULL;
    case SAMPLE_OPERATION_EXECUTE:
      for (uint32_t i = 0; i < operation->command_buffer_count; ++i) {
        kiln_status_t status = sample_command_buffer_execute(
            operation->command_buffers[i], &operation->tables[i]);
        if (status)
          return sample_annotate(status,
                                 "command buffer %u of a submission to "
                                 "sample://%u",
                                 i, device->ordinal);
      }
      return NULL;
  }
  return NULL;
}

// Signals the operation's semaphores, or fails them all with |status| (taken)
// so that every waiter, including later queue operations, sees the error.
static void complete_operation(sample_operation_t* operation,
                               kiln_status_t status) {
  for (uint32_t i = 0; i < operation->signal.count; ++i) {
    kiln_hal_semaphore_t* semaphore = operation->signal.semaphores[i];
    const kiln_hal_semaphore_vtable_t* vtable = semaphore_vtable(semaphore);
    if (status) {
      vtable->fail(semaphore, sample_status_clone(status));
      continue;
    }
    // A semaphore that cannot take the value (already past it, or failed)
    // is failed so its waiters learn about it instead of hanging.
    kiln_status_t signal_status =
        vtable->signal(semaphore, operation->signal.values[i]);
    if (signal_status) vtable->fail(semaphore, signal_status);
  }
  sample_status_free(status);
}

static void* queue_main(void* arg) {
  sample_device_t* device = (sample_device_t*)arg;
  while (true) {
    pthread_mutex_lock(&device->mutex);
    while (!device->head && !device->stopping)
      pthread_cond_wait(&device->queue_changed, &device->mutex);
    sample_operation_t* operation = device->head;
    if (!operation) {  // stopping and drained
      pthread_mutex_unlock(&device->mutex);
      return NULL;
    }
    device->head = operation->next;
    if (!device->head) device->tail = NULL;
    pthread_mutex_unlock(&device->mutex);

    complete_operation(operation, run_operation(device, operation));
    operation_free(operation);
  }
}

//===----------------------------------------------------------------------===//
// Device vtable
//===----------------------------------------------------------------------===//

// Runs when the last reference goes. Operations still queued are finished
// first (those stuck on a semaphore fail with ABORTED), so their signal
// semaphores, which may outlive the device, never leave waiters hanging.
static void device_destroy(kiln_hal_resource_t* resource) {
  kiln_hal_device_t* base = (kiln_hal_device_t*)resource;
  sample_device_t* device = device_cast(base);
  pthread_mutex_lock(&device->mutex);
  device->stopping = true;
  pthread_cond_signal(&device->queue_changed);
  pthread_mutex_unlock(&device->mutex);
  pthread_join(device->thread, NULL);
  pthread_cond_destroy(&device->queue_changed);
  pthread_mutex_destroy(&device->mutex);
  kiln_hal_driver_t* driver = device->driver;
  free(device);
  kiln_hal_resource_release(&driver->resource);
}

// What `kiln-run --list-devices` and error messages show.
static kiln_status_t device_query_info(kiln_hal_device_t* base,
                                       kiln_hal_device_info_t* out_info) {
  sample_device_t* device = device_cast(base);
  out_info->ordinal = device->ordinal;
  snprintf(out_info->name, sizeof(out_info->name),
           "sample serial CPU device %u (1 queue thread)", device->ordinal);
  return NULL;
}

static kiln_hal_allocator_t* device_allocator(kiln_hal_device_t* base) {
  return &device_cast(base)->allocator.base;
}

// Semaphores do not depend on the device (a host semaphore works for any
// device of this driver), so they may outlive it.
static kiln_status_t device_create_semaphore(
    kiln_hal_device_t* base, uint64_t initial_value,
    kiln_hal_semaphore_t** out_semaphore) {
  (void)base;
  return sample_semaphore_create(initial_value, out_semaphore);
}

static kiln_status_t device_create_command_buffer(
    kiln_hal_device_t* base, kiln_hal_command_buffer_mode_t mode,
    uint32_t binding_capacity, kiln_hal_command_buffer_t** out_command_buffer) {
  (void)base;
  return sample_command_buffer_create(mode, binding_capacity,
                                      out_command_buffer);
}

static kiln_status_t device_create_executable_cache(
    kiln_hal_device_t* base, kiln_hal_executable_cache_t** out_cache) {
  (void)base;
  return sample_executable_cache_create(out_cache);
}

// One device, no peers: no collective channels. UNIMPLEMENTED is the code
// the HAL reserves for that, and the CTS skips collective tests on it.
static kiln_status_t device_create_channel(
    kiln_hal_device_t* base, const kiln_hal_channel_params_t* params,
    kiln_hal_channel_t** out_channel) {
  (void)params;
  (void)out_channel;
  return sample_status(KILN_STATUS_UNIMPLEMENTED,
                       "sample://%u has no collective channels (the sample "
                       "driver does not implement collectives)",
                       device_cast(base)->ordinal);
}

static kiln_status_t device_create_channel_id(kiln_hal_device_t* base,
                                              uint8_t* out_id, size_t capacity,
                                              size_t* out_length) {
  (void)out_id;
  (void)capacity;
  (void)out_length;
  return sample_status(KILN_STATUS_UNIMPLEMENTED,
                       "sample://%u has no collective channels (the sample "
                       "driver does not implement collectives)",
                       device_cast(base)->ordinal);
}

// Stream-ordered allocation: the buffer object exists now, its storage once
// the queue reaches the operation. The executor uses this for transients.
static kiln_status_t device_queue_alloca(
    kiln_hal_device_t* base, kiln_hal_queue_affinity_t affinity,
    const kiln_hal_semaphore_list_t* wait,
    const kiln_hal_semaphore_list_t* signal,
    const kiln_hal_buffer_params_t* params, kiln_device_size_t size,
    kiln_hal_buffer_t** out_buffer) {
  (void)affinity;  // one queue
  kiln_hal_buffer_t* buffer = NULL;
  kiln_status_t status =
      sample_buffer_create(params, size, /*allocate_now=*/false, &buffer);
  if (status) return status;
  sample_operation_t* operation = NULL;
  status = operation_create(SAMPLE_OPERATION_ALLOCA, wait, signal, &operation);
  if (status) {
    kiln_hal_resource_release(&buffer->resource);
    return status;
  }
  kiln_hal_resource_retain(&buffer->resource);  // the operation's reference
  operation->buffer = buffer;
  enqueue(device_cast(base), operation);
  *out_buffer = buffer;
  return NULL;
}

static kiln_status_t device_queue_dealloca(
    kiln_hal_device_t* base, kiln_hal_queue_affinity_t affinity,
    const kiln_hal_semaphore_list_t* wait,
    const kiln_hal_semaphore_list_t* signal, kiln_hal_buffer_t* buffer) {
  (void)affinity;
  if (!sample_buffer_isa(buffer))
    return sample_status(KILN_STATUS_INVALID_ARGUMENT,
                         "queue_dealloca: buffer was not created by the "
                         "sample driver");
  sample_operation_t* operation = NULL;
  kiln_status_t status =
      operation_create(SAMPLE_OPERATION_DEALLOCA, wait, signal, &operation);
  if (status) return status;
  kiln_hal_resource_retain(&buffer->resource);
  operation->buffer = buffer;
  enqueue(device_cast(base), operation);
  return NULL;
}

// Copies |source| (the caller's table) into |to|, resolving WHOLE_BUFFER
// lengths and retaining the buffers: the submission outlives the call.
static kiln_status_t copy_binding_table(const kiln_hal_binding_table_t* source,
                                        kiln_hal_binding_table_t* to) {
  to->count = 0;
  to->bindings = NULL;
  if (source->count == 0) return NULL;
  kiln_hal_binding_t* bindings =
      (kiln_hal_binding_t*)calloc(source->count, sizeof(*bindings));
  if (!bindings) return out_of_memory();
  for (uint32_t slot = 0; slot < source->count; ++slot) {
    kiln_hal_binding_t binding = source->bindings[slot];
    if (binding.buffer) {
      // The core checked the range against the buffer.
      if (binding.length == KILN_HAL_WHOLE_BUFFER)
        binding.length = binding.buffer->byte_length - binding.offset;
      kiln_hal_resource_retain(&binding.buffer->resource);
    }
    bindings[slot] = binding;
  }
  to->count = source->count;
  to->bindings = bindings;
  return NULL;
}

// Everything that can be wrong with a submission is found here, before it is
// enqueued: a failure returned now means nothing was enqueued (the ABI's
// rule), and only execution errors travel through the signal semaphores.
static kiln_status_t device_queue_execute(
    kiln_hal_device_t* base, kiln_hal_queue_affinity_t affinity,
    const kiln_hal_semaphore_list_t* wait,
    const kiln_hal_semaphore_list_t* signal, uint32_t command_buffer_count,
    kiln_hal_command_buffer_t* const* command_buffers,
    const kiln_hal_binding_table_t* binding_tables) {
  (void)affinity;
  sample_device_t* device = device_cast(base);
  sample_operation_t* operation = NULL;
  kiln_status_t status =
      operation_create(SAMPLE_OPERATION_EXECUTE, wait, signal, &operation);
  if (status) return status;
  if (command_buffer_count) {
    operation->command_buffers = (kiln_hal_command_buffer_t**)calloc(
        command_buffer_count, sizeof(*operation->command_buffers));
    operation->tables = (kiln_hal_binding_table_t*)calloc(
        command_buffer_count, sizeof(*operation->tables));
    operation->command_buffer_count = command_buffer_count;
    if (!operation->command_buffers || !operation->tables)
      status = out_of_memory();
  }
  for (uint32_t i = 0; i < command_buffer_count && !status; ++i) {
    status = copy_binding_table(&binding_tables[i], &operation->tables[i]);
    if (!status)
      status = sample_command_buffer_validate(command_buffers[i],
                                              &operation->tables[i]);
    if (status) {
      status = sample_annotate(status,
                               "command buffer %u of a submission to "
                               "sample://%u",
                               i, device->ordinal);
      break;
    }
    kiln_hal_resource_retain(&command_buffers[i]->resource);
    operation->command_buffers[i] = command_buffers[i];
  }
  if (status) {
    operation_free(operation);
    return status;
  }
  enqueue(device, operation);
  return NULL;
}

// Operations are handed to the queue thread as soon as they are enqueued:
// there is no batch to flush. A driver that batches submissions would issue
// them here.
static kiln_status_t device_queue_flush(kiln_hal_device_t* base,
                                        kiln_hal_queue_affinity_t affinity) {
  (void)base;
  (void)affinity;
  return NULL;
}

static const kiln_hal_device_vtable_t device_vtable = {
    device_destroy,
    device_query_info,
    device_allocator,
    device_create_semaphore,
    device_create_command_buffer,
    device_create_executable_cache,
    device_create_channel,
    device_create_channel_id,
    device_queue_alloca,
    device_queue_dealloca,
    device_queue_execute,
    device_queue_flush,
    /*query_memory_stats=*/NULL,  // optional: no buffer cache
    /*trim=*/NULL,
    /*queue_execute_profiled=*/NULL,  // optional: no command timing
    /*query_external_info=*/NULL,     // optional: no memory sharing
    /*wait_external_stream=*/NULL,
};

kiln_status_t sample_device_create(kiln_hal_driver_t* driver, uint32_t ordinal,
                                   kiln_hal_device_t** out_device) {
  sample_device_t* device = (sample_device_t*)calloc(1, sizeof(*device));
  if (!device)
    return sample_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                         "out of memory creating sample://%u", ordinal);
  if (pthread_mutex_init(&device->mutex, NULL) != 0) {
    free(device);
    return sample_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                         "cannot create the queue mutex of sample://%u",
                         ordinal);
  }
  if (pthread_cond_init(&device->queue_changed, NULL) != 0) {
    pthread_mutex_destroy(&device->mutex);
    free(device);
    return sample_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                         "cannot create the queue condition of sample://%u",
                         ordinal);
  }
  kiln_hal_resource_initialize(&device_vtable, &device->base.resource);
  device->base.driver_name = driver->name;
  device->ordinal = ordinal;
  sample_allocator_initialize(&device->allocator);
  int error = pthread_create(&device->thread, NULL, queue_main, device);
  if (error != 0) {
    pthread_cond_destroy(&device->queue_changed);
    pthread_mutex_destroy(&device->mutex);
    free(device);
    return sample_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                         "cannot start the queue thread of sample://%u: %s",
                         ordinal, strerror(error));
  }
  kiln_hal_resource_retain(&driver->resource);
  device->driver = driver;
  *out_device = &device->base;
  return NULL;
}
