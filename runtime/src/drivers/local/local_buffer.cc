#include "drivers/local/local_buffer.h"

#include <new>
#include <string>

#include "base/memory.h"

namespace kiln::local {
namespace {

constexpr kiln_hal_memory_type_t kLocalMemoryType =
    KILN_HAL_MEMORY_TYPE_DEVICE_LOCAL | KILN_HAL_MEMORY_TYPE_HOST_VISIBLE |
    KILN_HAL_MEMORY_TYPE_HOST_COHERENT;
constexpr size_t kDefaultAlignment = 64;
// Alignments above this are refused as a likely bug in the caller.
constexpr size_t kMaxAlignment = 1u << 16;

LocalBuffer* cast(kiln_hal_buffer_t* buffer) {
  return reinterpret_cast<LocalBuffer*>(buffer);
}

void destroyBuffer(kiln_hal_resource_t* resource) {
  LocalBuffer* buffer = cast(reinterpret_cast<kiln_hal_buffer_t*>(resource));
  freeStorage(buffer);
  delete buffer;
}

kiln_status_t mapRange(kiln_hal_buffer_t* base, kiln_hal_memory_access_t,
                       kiln_device_size_t offset, kiln_device_size_t,
                       void** outContents) {
  uint8_t* storage = cast(base)->storage.load(std::memory_order_acquire);
  if (!storage)
    return kiln_make_status(KILN_STATUS_FAILED_PRECONDITION,
                            "buffer has no storage: its queue_alloca has not "
                            "run yet or its queue_dealloca has (wait on the "
                            "alloca's signal semaphore before mapping)");
  *outContents = storage + offset;
  return nullptr;
}

kiln_status_t unmapRange(kiln_hal_buffer_t*, kiln_device_size_t,
                         kiln_device_size_t, void*) {
  return nullptr;  // host memory is coherent: nothing to flush
}

kiln_status_t exportMemory(kiln_hal_buffer_t* base,
                           kiln_hal_external_memory_t* outMemory) {
  uint8_t* storage = cast(base)->storage.load(std::memory_order_acquire);
  if (!storage)
    return kiln_make_status(KILN_STATUS_FAILED_PRECONDITION,
                            "buffer has no storage: its queue_alloca has not "
                            "run yet or its queue_dealloca has");
  outMemory->type = KILN_HAL_EXTERNAL_MEMORY_HOST;
  outMemory->data = storage;
  outMemory->byte_length = base->byte_length;
  return nullptr;
}

const kiln_hal_buffer_vtable_t kBufferVTable = {destroyBuffer, mapRange,
                                                unmapRange, exportMemory};

void destroyAllocator(kiln_hal_resource_t*) {
  // Owned by the device; never destroyed through its reference count.
}

kiln_status_t allocateBuffer(kiln_hal_allocator_t* base,
                             const kiln_hal_buffer_params_t* params,
                             kiln_device_size_t size,
                             kiln_hal_buffer_t** outBuffer) {
  return createBuffer(reinterpret_cast<LocalAllocator*>(base)->blocks, params,
                      size, /*allocateNow=*/true, outBuffer);
}

bool fromCache(const LocalBuffer& buffer) {
  return buffer.alignment <= buffer.blocks->alignment();
}

// Host memory is local memory: a host pointer is used as it is.
kiln_status_t importBuffer(kiln_hal_allocator_t* base,
                           const kiln_hal_buffer_params_t* params,
                           const kiln_hal_external_memory_t* memory,
                           const kiln_hal_external_release_t* release,
                           kiln_hal_buffer_t** outBuffer) {
  if (memory->type != KILN_HAL_EXTERNAL_MEMORY_HOST)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "local devices compute on host memory; GPU "
                            "memory cannot be imported (copy it to the host "
                            "first)");
  auto* buffer = new (std::nothrow) LocalBuffer();
  if (!buffer)
    return kiln_make_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory creating a buffer");
  kiln_hal_buffer_initialize(&kBufferVTable, memory->byte_length,
                             params->memory_type | kLocalMemoryType,
                             params->usage, &buffer->base);
  buffer->alignment = KILN_HAL_EXTERNAL_MEMORY_ALIGNMENT;
  buffer->blocks = reinterpret_cast<LocalAllocator*>(base)->blocks;
  buffer->external = true;
  buffer->release = *release;
  buffer->storage.store(static_cast<uint8_t*>(memory->data),
                        std::memory_order_release);
  *outBuffer = &buffer->base;
  return nullptr;
}

const kiln_hal_allocator_vtable_t kAllocatorVTable = {
    destroyAllocator, allocateBuffer, importBuffer};

}  // namespace

void initializeAllocator(std::shared_ptr<drivers::BlockCache> blocks,
                         LocalAllocator* allocator) {
  kiln_hal_resource_initialize(&kAllocatorVTable, &allocator->base.resource);
  allocator->blocks = std::move(blocks);
}

std::shared_ptr<drivers::BlockCache> createBlockCache(uint32_t ordinal,
                                                      uint64_t limit) {
  drivers::BlockCache::Backend backend;
  backend.alignment = 256;
  backend.allocate = [](uint64_t size, std::string* error) {
    void* block = size > SIZE_MAX ? nullptr : alignedAlloc(size_t(size), 256);
    if (!block) *error = "out of host memory";
    return static_cast<uint8_t*>(block);
  };
  backend.free = [](uint8_t* block, uint64_t) { alignedFree(block); };
  return std::make_shared<drivers::BlockCache>(
      *kiln_hal_host_api(), "memory of local://" + std::to_string(ordinal),
      std::move(backend), limit);
}

LocalBuffer* asLocalBuffer(kiln_hal_buffer_t* buffer) {
  if (!buffer || buffer->resource.vtable != &kBufferVTable) return nullptr;
  return cast(buffer);
}

kiln_status_t createBuffer(std::shared_ptr<drivers::BlockCache> blocks,
                           const kiln_hal_buffer_params_t* params,
                           kiln_device_size_t size, bool allocateNow,
                           kiln_hal_buffer_t** outBuffer) {
  size_t alignment = params->min_alignment ? size_t(params->min_alignment)
                                           : kDefaultAlignment;
  if (alignment < kDefaultAlignment) alignment = kDefaultAlignment;
  if (alignment > kMaxAlignment)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "buffer alignment %zu exceeds the local driver's "
                            "limit of %zu bytes",
                            alignment, kMaxAlignment);
  if (size > (kiln_device_size_t(1) << 46))
    return kiln_make_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                            "cannot allocate a %llu-byte buffer on the local "
                            "device",
                            (unsigned long long)size);
  auto* buffer = new (std::nothrow) LocalBuffer();
  if (!buffer)
    return kiln_make_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory creating a buffer");
  kiln_hal_buffer_initialize(&kBufferVTable, size,
                             params->memory_type | kLocalMemoryType,
                             params->usage, &buffer->base);
  buffer->alignment = alignment;
  buffer->queueAllocated = !allocateNow;
  buffer->blocks = std::move(blocks);
  if (allocateNow) {
    kiln_status_t status = allocateStorage(buffer);
    if (status) {
      delete buffer;
      return status;
    }
  }
  *outBuffer = &buffer->base;
  return nullptr;
}

kiln_status_t allocateStorage(LocalBuffer* buffer) {
  if (buffer->storage.load(std::memory_order_acquire)) return nullptr;
  uint8_t* storage = nullptr;
  if (fromCache(*buffer)) {
    KILN_RETURN_IF_ERROR(
        buffer->blocks->allocate(buffer->base.byte_length, &storage));
  } else {
    storage = static_cast<uint8_t*>(
        alignedAlloc(size_t(buffer->base.byte_length), buffer->alignment));
    if (!storage)
      return kiln_make_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                              "out of host memory allocating %llu bytes",
                              (unsigned long long)buffer->base.byte_length);
  }
  buffer->storage.store(storage, std::memory_order_release);
  return nullptr;
}

void freeStorage(LocalBuffer* buffer) {
  uint8_t* storage =
      buffer->storage.exchange(nullptr, std::memory_order_acq_rel);
  if (!storage) return;
  if (buffer->external) {
    if (buffer->release.fn) buffer->release.fn(buffer->release.user_data);
    buffer->release = {nullptr, nullptr};
  } else if (fromCache(*buffer))
    buffer->blocks->release(storage, buffer->base.byte_length);
  else
    alignedFree(storage);
}

}  // namespace kiln::local
