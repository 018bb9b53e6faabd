// Buffers and the allocator of the local driver: host memory (64-byte
// aligned by default), always device local, host visible and coherent.
//
// Storage comes from the device's block cache (drivers/common/block_cache.h)
// and goes back to it when the buffer is destroyed or dealloca'd, so that
// repeated calls reuse warm pages instead of faulting in fresh ones.
// Alignments above the cache's 256 bytes are allocated directly.
//
// A buffer made by queue_alloca has no storage until its alloca runs on the
// queue and loses it when its dealloca runs; storage is an atomic pointer so
// the queue thread may set it while other threads query it. Thread-safe.
#ifndef KILN_DRIVERS_LOCAL_LOCAL_BUFFER_H_
#define KILN_DRIVERS_LOCAL_LOCAL_BUFFER_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "drivers/common/block_cache.h"
#include "kiln/hal/driver_abi.h"

namespace kiln::local {

struct LocalBuffer {
  kiln_hal_buffer_t base;
  std::atomic<uint8_t*> storage{nullptr};
  size_t alignment = 64;
  bool queueAllocated = false;
  // The cache of the device that made the buffer (kept alive by it).
  std::shared_ptr<drivers::BlockCache> blocks;
  // Imported memory (kiln_hal_allocator_import_buffer): not the driver's to
  // free; |release| runs when the buffer is destroyed.
  bool external = false;
  kiln_hal_external_release_t release = {nullptr, nullptr};
};

// The allocator of one device (owned by it; never released by users).
struct LocalAllocator {
  kiln_hal_allocator_t base;
  std::shared_ptr<drivers::BlockCache> blocks;
};

void initializeAllocator(std::shared_ptr<drivers::BlockCache> blocks,
                         LocalAllocator* allocator);

// The block cache of device local://|ordinal|: host memory, reserving at
// most |limit| bytes (0: no limit).
std::shared_ptr<drivers::BlockCache> createBlockCache(uint32_t ordinal,
                                                      uint64_t limit);

// Returns the local buffer behind |buffer|, or nullptr if another driver
// made it.
LocalBuffer* asLocalBuffer(kiln_hal_buffer_t* buffer);

// Creates a buffer with storage from |blocks| when |allocateNow|, else an
// empty one for queue_alloca (then allocateStorage runs on the queue).
kiln_status_t createBuffer(std::shared_ptr<drivers::BlockCache> blocks,
                           const kiln_hal_buffer_params_t* params,
                           kiln_device_size_t size, bool allocateNow,
                           kiln_hal_buffer_t** outBuffer);
kiln_status_t allocateStorage(LocalBuffer* buffer);
void freeStorage(LocalBuffer* buffer);

}  // namespace kiln::local

#endif  // KILN_DRIVERS_LOCAL_LOCAL_BUFFER_H_
