// Buffers and the allocator of the HIP driver.
//
// Memory kinds, chosen from the requested memory type:
//   - DEVICE_LOCAL only: device memory (hipMalloc; hipMallocAsync from the
//     device's default memory pool for queue_alloca when pools exist).
//   - HOST_VISIBLE without DEVICE_LOCAL: pinned, mapped host memory
//     (hipHostMalloc), host coherent, usable by kernels at the same address.
//   - HOST_VISIBLE | DEVICE_LOCAL: managed memory (hipMallocManaged), which
//     migrates to the device when kernels touch it and stays mappable.
// Mapping returns the pointer itself (no staging): callers synchronize with
// semaphores as the HAL requires.
//
// A queue_alloca'd buffer has no storage until its alloca is issued and
// loses it when its dealloca is issued; |storage| is atomic because the
// queue thread sets it while other threads may query it. Storage still held
// when the buffer is destroyed is freed then. Thread-safe.
#ifndef KILN_DRIVERS_HIP_HIP_BUFFER_H_
#define KILN_DRIVERS_HIP_HIP_BUFFER_H_

#include <atomic>
#include <memory>

#include "drivers/hip/hip_context.h"
#include "kiln/hal/driver_abi.h"

namespace kiln::hip {

// External: device memory another library owns, imported in place
// (kiln_hal_allocator_import_buffer); never freed by the driver.
enum class MemoryKind { Device, DevicePool, Host, Managed, External };

struct HipBuffer {
  kiln_hal_buffer_t base;
  std::shared_ptr<const DeviceContext> context;
  std::atomic<uint8_t*> storage{nullptr};
  MemoryKind kind = MemoryKind::Device;
  size_t alignment = 256;
  bool queueAllocated = false;
  // External memory: runs when the buffer is destroyed.
  kiln_hal_external_release_t release = {nullptr, nullptr};
};

// The allocator of one device (owned by the device).
struct HipAllocator {
  kiln_hal_allocator_t base;
  std::shared_ptr<const DeviceContext> context;
};

void initializeAllocator(std::shared_ptr<const DeviceContext> context,
                         HipAllocator* allocator);

// The HIP buffer behind |buffer| or nullptr if another driver made it.
HipBuffer* asHipBuffer(kiln_hal_buffer_t* buffer);

// Creates a buffer; with |allocateNow| its storage is allocated at once,
// otherwise it waits for allocateStorage (queue_alloca). The calling thread
// must have the device bound.
kiln_status_t createBuffer(std::shared_ptr<const DeviceContext> context,
                           const kiln_hal_buffer_params_t* params,
                           kiln_device_size_t size, bool allocateNow,
                           kiln_hal_buffer_t** outBuffer);

// A device-local buffer of |size| bytes holding |contents| (|size| bytes),
// or zeroed if |contents| is null, ready when this returns (a symmetric
// window's memory and peer table). Device bound by the caller.
kiln_status_t createFilledBuffer(std::shared_ptr<const DeviceContext> context,
                                 kiln_device_size_t size, const void *contents,
                                 kiln_hal_buffer_t **outBuffer);

// A device-local buffer over |size| bytes of device memory at |pointer|
// that the buffer does not own (MemoryKind::External): |release| (its fn
// may be null) runs when the buffer is destroyed. Imported memory
// (kiln_hal_allocator_import_buffer) and a symmetric window's memory
// (hip_comm_window.cc, which frees it itself).
kiln_status_t wrapDeviceMemory(std::shared_ptr<const DeviceContext> context,
                               void *pointer, kiln_device_size_t size,
                               kiln_hal_buffer_usage_t usage, size_t alignment,
                               const kiln_hal_external_release_t &release,
                               kiln_hal_buffer_t **outBuffer);

// Allocates the storage of a queue_alloca'd buffer, stream-ordered on
// |stream| where the buffer uses the memory pool. Device bound by the caller.
kiln_status_t allocateStorage(HipBuffer* buffer, hipStream_t stream);

// Detaches the storage of a queue_alloca'd buffer for its dealloca. Pool
// memory is freed stream-ordered on |stream| at once (*outDeferred stays
// null); other memory is returned in *outDeferred, to be freed with
// freeDetached once the work before the dealloca completed.
kiln_status_t releaseStorage(HipBuffer* buffer, hipStream_t stream,
                             uint8_t** outDeferred);
void freeDetached(const DeviceContext& context, MemoryKind kind,
                  uint8_t* storage, kiln_device_size_t size);

// The external memory type of |context|'s device memory (DLPack's device
// type): CUDA on the NVIDIA platform, ROCM on AMD.
kiln_hal_external_memory_type_t deviceMemoryType(const DeviceContext& context);

// Makes |context|'s block caches (device memory capped by its memory_limit
// option, and pinned host memory).
void createBlockCaches(DeviceContext* context);

}  // namespace kiln::hip

#endif  // KILN_DRIVERS_HIP_HIP_BUFFER_H_
