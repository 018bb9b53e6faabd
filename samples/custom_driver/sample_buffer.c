// Allocator and buffers of the sample driver. "Device memory" is host memory
// here, so every buffer is device local, host visible and coherent whatever
// was asked (the HAL allows a driver to give more memory type bits than
// requested), and mapping returns the storage itself.
#define _POSIX_C_SOURCE 200112L  // posix_memalign

#include <stdlib.h>

#include "sample_driver.h"

// The HAL promises at least 64-byte alignment when none is requested.
#define SAMPLE_DEFAULT_ALIGNMENT 64u
// Larger requests are refused as a likely bug in the caller.
#define SAMPLE_MAX_ALIGNMENT (1u << 16)
// Sizes beyond this cannot be real on a host and would overflow size_t math
// in allocators (sanitizers abort on them instead of returning NULL).
#define SAMPLE_MAX_BUFFER_SIZE ((kiln_device_size_t)1 << 46)

typedef struct sample_buffer_t {
  kiln_hal_buffer_t base;
  // NULL while a queue_alloca'd buffer has no storage. Set and cleared on the
  // queue thread, read by host threads mapping the buffer: atomic.
  uint8_t* storage;
  size_t alignment;
  // Made by queue_alloca: storage comes and goes with alloca/dealloca.
  bool queue_allocated;
} sample_buffer_t;

static void buffer_destroy(kiln_hal_resource_t* resource);
static kiln_status_t buffer_map_range(kiln_hal_buffer_t* base,
                                      kiln_hal_memory_access_t access,
                                      kiln_device_size_t offset,
                                      kiln_device_size_t length,
                                      void** out_contents);
static kiln_status_t buffer_unmap_range(kiln_hal_buffer_t* base,
                                        kiln_device_size_t offset,
                                        kiln_device_size_t length,
                                        void* contents);

static const kiln_hal_buffer_vtable_t buffer_vtable = {
    buffer_destroy,
    buffer_map_range,
    buffer_unmap_range,
    /*export_memory=*/NULL,  // optional: addresses stay private
};

bool sample_buffer_isa(const kiln_hal_buffer_t* buffer) {
  return buffer && buffer->resource.vtable == &buffer_vtable;
}

static sample_buffer_t* buffer_cast(kiln_hal_buffer_t* buffer) {
  return (sample_buffer_t*)buffer;
}

uint8_t* sample_buffer_storage(kiln_hal_buffer_t* buffer) {
  return __atomic_load_n(&buffer_cast(buffer)->storage, __ATOMIC_ACQUIRE);
}

kiln_status_t sample_buffer_allocate_storage(kiln_hal_buffer_t* base) {
  sample_buffer_t* buffer = buffer_cast(base);
  if (sample_buffer_storage(base)) return NULL;
  void* storage = NULL;
  if (posix_memalign(&storage, buffer->alignment,
                     (size_t)buffer->base.byte_length) != 0)
    return sample_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                         "sample device: out of host memory allocating %llu "
                         "bytes",
                         (unsigned long long)buffer->base.byte_length);
  __atomic_store_n(&buffer->storage, (uint8_t*)storage, __ATOMIC_RELEASE);
  return NULL;
}

void sample_buffer_deallocate_storage(kiln_hal_buffer_t* base) {
  sample_buffer_t* buffer = buffer_cast(base);
  if (!buffer->queue_allocated) return;
  free(__atomic_exchange_n(&buffer->storage, NULL, __ATOMIC_ACQ_REL));
}

// Called when the last reference goes: the core and the command buffers
// retain buffers they use, so nothing can still be running on it.
static void buffer_destroy(kiln_hal_resource_t* resource) {
  kiln_hal_buffer_t* base = (kiln_hal_buffer_t*)resource;
  free(buffer_cast(base)->storage);
  free(base);
}

// The core already checked the range and HOST_VISIBLE; what only the driver
// knows is whether the storage exists (queue_alloca'd buffers).
static kiln_status_t buffer_map_range(kiln_hal_buffer_t* base,
                                      kiln_hal_memory_access_t access,
                                      kiln_device_size_t offset,
                                      kiln_device_size_t length,
                                      void** out_contents) {
  (void)access;
  (void)length;
  uint8_t* storage = sample_buffer_storage(base);
  if (!storage)
    return sample_status(KILN_STATUS_FAILED_PRECONDITION,
                         "sample buffer has no storage: its queue_alloca has "
                         "not run yet or its queue_dealloca has (wait on the "
                         "alloca's signal semaphore before mapping)");
  *out_contents = storage + offset;
  return NULL;
}

// Host memory is coherent with our "device": nothing to flush. A driver with
// non-coherent memory would write the range back here.
static kiln_status_t buffer_unmap_range(kiln_hal_buffer_t* base,
                                        kiln_device_size_t offset,
                                        kiln_device_size_t length,
                                        void* contents) {
  (void)base;
  (void)offset;
  (void)length;
  (void)contents;
  return NULL;
}

kiln_status_t sample_buffer_create(const kiln_hal_buffer_params_t* params,
                                   kiln_device_size_t size, bool allocate_now,
                                   kiln_hal_buffer_t** out_buffer) {
  // The core rejected size 0 and non-power-of-two alignments already.
  size_t alignment = params->min_alignment > SAMPLE_DEFAULT_ALIGNMENT
                         ? (size_t)params->min_alignment
                         : SAMPLE_DEFAULT_ALIGNMENT;
  if (params->min_alignment > SAMPLE_MAX_ALIGNMENT)
    return sample_status(KILN_STATUS_INVALID_ARGUMENT,
                         "buffer alignment %llu exceeds the sample driver's "
                         "limit of %u bytes",
                         (unsigned long long)params->min_alignment,
                         SAMPLE_MAX_ALIGNMENT);
  if (size > SAMPLE_MAX_BUFFER_SIZE)
    return sample_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                         "cannot allocate a %llu-byte buffer on the sample "
                         "device",
                         (unsigned long long)size);
  sample_buffer_t* buffer = (sample_buffer_t*)calloc(1, sizeof(*buffer));
  if (!buffer)
    return sample_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                         "out of memory creating a sample buffer");
  kiln_hal_buffer_initialize(&buffer_vtable, size,
                             params->memory_type |
                                 KILN_HAL_MEMORY_TYPE_DEVICE_LOCAL |
                                 KILN_HAL_MEMORY_TYPE_HOST_VISIBLE |
                                 KILN_HAL_MEMORY_TYPE_HOST_COHERENT,
                             params->usage, &buffer->base);
  buffer->alignment = alignment;
  buffer->queue_allocated = !allocate_now;
  if (allocate_now) {
    kiln_status_t status = sample_buffer_allocate_storage(&buffer->base);
    if (status) {
      free(buffer);
      return status;
    }
  }
  *out_buffer = &buffer->base;
  return NULL;
}

//===----------------------------------------------------------------------===//
// Allocator
//===----------------------------------------------------------------------===//
// The allocator is the device's source of buffers whose storage exists at
// once (as opposed to queue_alloca). It is embedded in the device and lives
// exactly as long as it, so its reference count is never used to free it.

static void allocator_destroy(kiln_hal_resource_t* resource) {
  (void)resource;  // owned by the device
}

static kiln_status_t allocator_allocate_buffer(
    kiln_hal_allocator_t* allocator, const kiln_hal_buffer_params_t* params,
    kiln_device_size_t size, kiln_hal_buffer_t** out_buffer) {
  (void)allocator;
  return sample_buffer_create(params, size, /*allocate_now=*/true, out_buffer);
}

static const kiln_hal_allocator_vtable_t allocator_vtable = {
    allocator_destroy,
    allocator_allocate_buffer,
    /*import_buffer=*/NULL,  // optional: no external memory
};

void sample_allocator_initialize(sample_allocator_t* allocator) {
  kiln_hal_resource_initialize(&allocator_vtable, &allocator->base.resource);
}
