#include "drivers/hip/hip_buffer.h"

#include <unistd.h>

#include <cstring>
#include <new>
#include <string>

namespace kiln::hip {
namespace {

// Alignments the platforms guarantee for each kind of memory.
constexpr size_t kDeviceAlignment = 256;
constexpr size_t kPageAlignment = 4096;

HipBuffer* cast(kiln_hal_buffer_t* buffer) {
  return reinterpret_cast<HipBuffer*>(buffer);
}

const char* kindName(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::Device:
      return "device";
    case MemoryKind::DevicePool:
      return "device (memory pool)";
    case MemoryKind::Host:
      return "pinned host";
    case MemoryKind::Managed:
      return "managed";
    case MemoryKind::External:
      return "external";
  }
  return "?";
}

void destroyBuffer(kiln_hal_resource_t* resource) {
  HipBuffer* buffer = cast(reinterpret_cast<kiln_hal_buffer_t*>(resource));
  uint8_t* storage = buffer->storage.exchange(nullptr);
  if (buffer->kind == MemoryKind::External) {
    if (buffer->release.fn) buffer->release.fn(buffer->release.user_data);
  } else if (storage) {
    freeDetached(*buffer->context, buffer->kind, storage,
                 buffer->base.byte_length);
  }
  delete buffer;
}

kiln_status_t mapRange(kiln_hal_buffer_t* base, kiln_hal_memory_access_t,
                       kiln_device_size_t offset, kiln_device_size_t,
                       void** outContents) {
  uint8_t* storage = cast(base)->storage.load(std::memory_order_acquire);
  if (!storage)
    return makeStatus(KILN_STATUS_FAILED_PRECONDITION,
                      "buffer has no storage: its queue_alloca has not run yet "
                      "or its queue_dealloca has (wait on the alloca's signal "
                      "semaphore before mapping)");
  *outContents = storage + offset;
  return nullptr;
}

kiln_status_t unmapRange(kiln_hal_buffer_t*, kiln_device_size_t,
                         kiln_device_size_t, void*) {
  return nullptr;  // pinned and managed memory are coherent
}

kiln_status_t exportMemory(kiln_hal_buffer_t* base,
                           kiln_hal_external_memory_t* outMemory) {
  HipBuffer* buffer = cast(base);
  uint8_t* storage = buffer->storage.load(std::memory_order_acquire);
  if (!storage)
    return makeStatus(KILN_STATUS_FAILED_PRECONDITION,
                      "buffer has no storage: its queue_alloca has not run yet "
                      "or its queue_dealloca has");
  // Pinned host memory has the same address on the host and the device.
  outMemory->type = buffer->kind == MemoryKind::Host
                        ? KILN_HAL_EXTERNAL_MEMORY_HOST
                        : deviceMemoryType(*buffer->context);
  outMemory->data = storage;
  outMemory->byte_length = base->byte_length;
  return nullptr;
}

const kiln_hal_buffer_vtable_t kBufferVTable = {destroyBuffer, mapRange,
                                                unmapRange, exportMemory};

void destroyAllocator(kiln_hal_resource_t*) {
  // Owned by the device; never destroyed through its reference count.
}

kiln_status_t allocateBufferFn(kiln_hal_allocator_t* base,
                               const kiln_hal_buffer_params_t* params,
                               kiln_device_size_t size,
                               kiln_hal_buffer_t** outBuffer) {
  auto* allocator = reinterpret_cast<HipAllocator*>(base);
  KILN_HIP_RETURN_IF_ERROR(allocator->context->bind());
  return createBuffer(allocator->context, params, size, /*allocateNow=*/true,
                      outBuffer);
}

// Device memory of this GPU, used in place: the pointer and the whole range
// must lie in one allocation of this device, as the runtime records it.
kiln_status_t importBufferFn(kiln_hal_allocator_t* base,
                             const kiln_hal_buffer_params_t* params,
                             const kiln_hal_external_memory_t* memory,
                             const kiln_hal_external_release_t* release,
                             kiln_hal_buffer_t** outBuffer) {
  auto* allocator = reinterpret_cast<HipAllocator*>(base);
  const DeviceContext& context = *allocator->context;
  if (memory->type != deviceMemoryType(context))
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "hip://%d imports %s device memory only; copy other "
                      "data into a buffer instead",
                      context.ordinal,
                      deviceMemoryType(context) == KILN_HAL_EXTERNAL_MEMORY_CUDA
                          ? "CUDA"
                          : "ROCm");
  KILN_HIP_RETURN_IF_ERROR(context.bind());
  int device = -1;
  uintptr_t start = 0;
  size_t size = 0;
  hipError_t error = context.platform->pointerGetAllocation(
      memory->data, &device, &start, &size);
  if (error == hipErrorNotSupported)
    return makeStatus(KILN_STATUS_UNIMPLEMENTED,
                      "hip://%d: this %s runtime cannot describe pointers "
                      "(hipPointerGetAttribute), so external memory cannot be "
                      "checked and is not imported",
                      context.ordinal, context.platform->name());
  if (error != hipSuccess)
    return annotate(context.check(error, "hipPointerGetAttribute",
                                  KILN_STATUS_INVALID_ARGUMENT),
                    "external memory at %p is not device memory of a GPU "
                    "runtime allocation",
                    memory->data);
  if (device != context.ordinal)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "external memory at %p belongs to device %d, not to "
                      "hip://%d",
                      memory->data, device, context.ordinal);
  auto address = reinterpret_cast<uintptr_t>(memory->data);
  if (address < start || memory->byte_length > size ||
      address - start > size - memory->byte_length)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "external memory [%p, +%llu bytes) runs past the end of "
                      "its allocation (%zu bytes at 0x%llx)",
                      memory->data, (unsigned long long)memory->byte_length,
                      size, (unsigned long long)start);
  return wrapDeviceMemory(allocator->context, memory->data, memory->byte_length,
                          params->usage, KILN_HAL_EXTERNAL_MEMORY_ALIGNMENT,
                          *release, outBuffer);
}

} // namespace

kiln_status_t createFilledBuffer(std::shared_ptr<const DeviceContext> context,
                                 kiln_device_size_t size, const void *contents,
                                 kiln_hal_buffer_t **outBuffer) {
  kiln_hal_buffer_params_t params = {};
  params.memory_type = KILN_HAL_MEMORY_TYPE_DEVICE_LOCAL;
  params.usage =
      KILN_HAL_BUFFER_USAGE_TRANSFER | KILN_HAL_BUFFER_USAGE_DISPATCH_STORAGE;
  KILN_HIP_RETURN_IF_ERROR(
      createBuffer(context, &params, size, /*allocateNow=*/true, outBuffer));
  Platform &platform = *context->platform;
  uint8_t *storage = cast(*outBuffer)->storage.load();
  kiln_status_t status =
      contents
          ? context->check(
                platform.memcpyAsync(storage, contents, size, nullptr),
                "hipMemcpyAsync (filling a buffer)")
          : context->check(platform.memsetD8Async(storage, 0, size, nullptr),
                           "hipMemsetAsync (zeroing a buffer)");
  if (!status)
    status = context->check(platform.streamSynchronize(nullptr),
                            "hipStreamSynchronize (filling a buffer)");
  if (status) {
    kiln_hal_resource_release(&(*outBuffer)->resource);
    *outBuffer = nullptr;
  }
  return status;
}

kiln_status_t wrapDeviceMemory(std::shared_ptr<const DeviceContext> context,
                               void *pointer, kiln_device_size_t size,
                               kiln_hal_buffer_usage_t usage, size_t alignment,
                               const kiln_hal_external_release_t &release,
                               kiln_hal_buffer_t **outBuffer) {
  auto *buffer = new (std::nothrow) HipBuffer();
  if (!buffer)
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED,
                      "out of memory creating a buffer");
  kiln_hal_buffer_initialize(&kBufferVTable, size,
                             KILN_HAL_MEMORY_TYPE_DEVICE_LOCAL, usage,
                             &buffer->base);
  buffer->context = std::move(context);
  buffer->kind = MemoryKind::External;
  buffer->alignment = alignment;
  buffer->release = release;
  buffer->storage.store(static_cast<uint8_t *>(pointer),
                        std::memory_order_release);
  *outBuffer = &buffer->base;
  return nullptr;
}

namespace {

const kiln_hal_allocator_vtable_t kAllocatorVTable = {
    destroyAllocator, allocateBufferFn, importBufferFn};

// Allocates |buffer|'s storage now (not the pool kind, which is
// stream-ordered): device and pinned host memory from the device's block
// caches, managed memory from the runtime.
kiln_status_t allocateNow(HipBuffer* buffer) {
  const DeviceContext& context = *buffer->context;
  uint8_t* storage = nullptr;
  switch (buffer->kind) {
    case MemoryKind::Device:
      KILN_HIP_RETURN_IF_ERROR(
          context.deviceBlocks->allocate(buffer->base.byte_length, &storage));
      break;
    case MemoryKind::DevicePool:  // allocated stream-ordered instead
      return makeStatus(KILN_STATUS_INTERNAL,
                        "pool buffers are allocated on the queue");
    case MemoryKind::External:  // imported with its storage
      return makeStatus(KILN_STATUS_INTERNAL,
                        "external memory is never allocated");
    case MemoryKind::Host:
      KILN_HIP_RETURN_IF_ERROR(
          context.hostBlocks->allocate(buffer->base.byte_length, &storage));
      break;
    case MemoryKind::Managed: {
      size_t size = size_t(buffer->base.byte_length);
      void* pointer = nullptr;
      hipError_t error = context.platform->mallocManaged(&pointer, size);
      if (error != hipSuccess)
        return annotate(context.check(error, "hipMallocManaged",
                                      KILN_STATUS_RESOURCE_EXHAUSTED),
                        "allocating %zu bytes of %s memory", size,
                        kindName(buffer->kind));
      storage = static_cast<uint8_t*>(pointer);
      break;
    }
  }
  buffer->storage.store(storage, std::memory_order_release);
  return nullptr;
}

// A block cache backend over one of the platform's allocators. The
// functions bind the device themselves: they run on whichever thread
// allocates or releases.
drivers::BlockCache::Backend cacheBackend(std::shared_ptr<Platform> platform,
                                          int ordinal, bool host) {
  drivers::BlockCache::Backend backend;
  backend.alignment = host ? kPageAlignment : kDeviceAlignment;
  backend.allocate = [platform, ordinal, host](uint64_t size,
                                               std::string* error) {
    void* pointer = nullptr;
    hipError_t result = platform->setDevice(ordinal);
    if (result == hipSuccess)
      result = host ? platform->hostMalloc(&pointer, size_t(size))
                    : platform->malloc(&pointer, size_t(size));
    if (result != hipSuccess) {
      kiln_status_t status =
          platformError(*platform, result, KILN_STATUS_RESOURCE_EXHAUSTED,
                        host ? "hipHostMalloc" : "hipMalloc");
      *error = statusMessage(status);
      freeStatus(status);
      return static_cast<uint8_t*>(nullptr);
    }
    return static_cast<uint8_t*>(pointer);
  };
  backend.free = [platform, ordinal, host](uint8_t* block, uint64_t) {
    if (platform->setDevice(ordinal) != hipSuccess) return;
    if (host)
      platform->hostFree(block);
    else
      platform->free(block);
  };
  return backend;
}

} // namespace

void initializeAllocator(std::shared_ptr<const DeviceContext> context,
                         HipAllocator* allocator) {
  kiln_hal_resource_initialize(&kAllocatorVTable, &allocator->base.resource);
  allocator->context = std::move(context);
}

HipBuffer* asHipBuffer(kiln_hal_buffer_t* buffer) {
  if (!buffer || buffer->resource.vtable != &kBufferVTable) return nullptr;
  return cast(buffer);
}

kiln_status_t createBuffer(std::shared_ptr<const DeviceContext> context,
                           const kiln_hal_buffer_params_t* params,
                           kiln_device_size_t size, bool allocateNow,
                           kiln_hal_buffer_t** outBuffer) {
  bool hostVisible = params->memory_type & KILN_HAL_MEMORY_TYPE_HOST_VISIBLE;
  bool deviceLocal = params->memory_type & KILN_HAL_MEMORY_TYPE_DEVICE_LOCAL;
  MemoryKind kind = MemoryKind::Device;
  kiln_hal_memory_type_t memoryType = KILN_HAL_MEMORY_TYPE_DEVICE_LOCAL;
  if (hostVisible && deviceLocal) {
    if (!context->managedMemorySupported)
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                        "hip://%d has no managed memory, so it cannot make "
                        "memory both device local and host visible; allocate "
                        "one or the other and copy",
                        context->ordinal);
    kind = MemoryKind::Managed;
    memoryType = KILN_HAL_MEMORY_TYPE_DEVICE_LOCAL |
                 KILN_HAL_MEMORY_TYPE_HOST_VISIBLE |
                 KILN_HAL_MEMORY_TYPE_HOST_COHERENT;
  } else if (hostVisible) {
    kind = MemoryKind::Host;
    memoryType =
        KILN_HAL_MEMORY_TYPE_HOST_VISIBLE | KILN_HAL_MEMORY_TYPE_HOST_COHERENT;
  } else if (!allocateNow && context->memoryPoolsSupported &&
             context->options.memoryPools) {
    kind = MemoryKind::DevicePool;
  }
  size_t guaranteed = (kind == MemoryKind::Device || kind == MemoryKind::DevicePool)
                          ? kDeviceAlignment
                          : kPageAlignment;
  if (params->min_alignment > guaranteed)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "buffer alignment %llu exceeds the %zu bytes that %s "
                      "memory of hip://%d is aligned to",
                      (unsigned long long)params->min_alignment, guaranteed,
                      kindName(kind), context->ordinal);
  // Refuse sizes that cannot fit before asking the runtime: some runtimes
  // take long or misbehave on absurd requests (notably managed memory).
  kiln_device_size_t limit = context->totalMemory;
  if (kind == MemoryKind::Host) {
    long pages = sysconf(_SC_PHYS_PAGES);
    long pageSize = sysconf(_SC_PAGESIZE);
    limit = pages > 0 && pageSize > 0
                ? kiln_device_size_t(pages) * kiln_device_size_t(pageSize)
                : limit;
  }
  if (size > limit)
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED,
                      "cannot allocate %llu bytes of %s memory for hip://%d: "
                      "it has %llu bytes",
                      (unsigned long long)size, kindName(kind),
                      context->ordinal, (unsigned long long)limit);
  auto* buffer = new (std::nothrow) HipBuffer();
  if (!buffer)
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED,
                      "out of memory creating a buffer");
  kiln_hal_buffer_initialize(&kBufferVTable, size, memoryType, params->usage,
                             &buffer->base);
  buffer->context = std::move(context);
  buffer->kind = kind;
  buffer->alignment = guaranteed;
  buffer->queueAllocated = !allocateNow;
  if (allocateNow) {
    kiln_status_t status = hip::allocateNow(buffer);
    if (status) {
      delete buffer;
      return status;
    }
  }
  *outBuffer = &buffer->base;
  return nullptr;
}

kiln_status_t allocateStorage(HipBuffer* buffer, hipStream_t stream) {
  if (buffer->storage.load(std::memory_order_acquire)) return nullptr;
  if (buffer->kind != MemoryKind::DevicePool) return allocateNow(buffer);
  const DeviceContext& context = *buffer->context;
  void* pointer = nullptr;
  size_t size = size_t(buffer->base.byte_length);
  hipError_t error = context.platform->mallocAsync(&pointer, size, stream);
  if (error != hipSuccess)
    return annotate(
        context.check(error, "hipMallocAsync", KILN_STATUS_RESOURCE_EXHAUSTED),
        "queue_alloca of %zu bytes", size);
  buffer->storage.store(static_cast<uint8_t*>(pointer),
                        std::memory_order_release);
  return nullptr;
}

kiln_status_t releaseStorage(HipBuffer* buffer, hipStream_t stream,
                             uint8_t** outDeferred) {
  *outDeferred = nullptr;
  uint8_t* storage = buffer->storage.exchange(nullptr, std::memory_order_acq_rel);
  if (!storage) return nullptr;
  if (buffer->kind == MemoryKind::DevicePool)
    return buffer->context->check(
        buffer->context->platform->freeAsync(storage, stream), "hipFreeAsync");
  *outDeferred = storage;
  return nullptr;
}

void freeDetached(const DeviceContext& context, MemoryKind kind,
                  uint8_t* storage, kiln_device_size_t size) {
  switch (kind) {
    case MemoryKind::Device:
      context.deviceBlocks->release(storage, size);
      return;
    case MemoryKind::Host:
      context.hostBlocks->release(storage, size);
      return;
    case MemoryKind::External:  // the importer's (destroyBuffer releases it)
      return;
    case MemoryKind::DevicePool:
    case MemoryKind::Managed:
      break;
  }
  kiln_status_t status = context.bind();
  // Pool memory freed outside stream order: hipFree waits for the device.
  if (!status) context.platform->free(storage);
  freeStatus(status);
}

kiln_hal_external_memory_type_t deviceMemoryType(const DeviceContext& context) {
  return std::strcmp(context.platform->name(), "nvidia") == 0
             ? KILN_HAL_EXTERNAL_MEMORY_CUDA
             : KILN_HAL_EXTERNAL_MEMORY_ROCM;
}

void createBlockCaches(DeviceContext* context) {
  std::string name = "hip://" + std::to_string(context->ordinal);
  context->deviceBlocks = std::make_shared<drivers::BlockCache>(
      *hostApi(), "device memory of " + name,
      cacheBackend(context->platform, context->ordinal, /*host=*/false),
      context->options.memoryLimit);
  context->hostBlocks = std::make_shared<drivers::BlockCache>(
      *hostApi(), "pinned host memory of " + name,
      cacheBackend(context->platform, context->ordinal, /*host=*/true),
      /*limit=*/0);
}

}  // namespace kiln::hip
