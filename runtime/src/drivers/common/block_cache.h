// A caching allocator for the storage of one device's buffers, shared by the
// drivers (local: aligned host memory; hip: hipMalloc'd device memory and
// pinned host memory).
//
// Asking the system for memory costs far more than most kernels that use it:
// hipMalloc of 256 MiB takes hundreds of microseconds and hipFree waits for
// the whole device, and a large malloc on the host maps fresh pages that the
// kernel then faults in and zeroes. So storage that a buffer releases is kept
// in a cache keyed by its size class, and the next allocation of that class
// takes it back without a system call. This is safe without stream ordering
// because a buffer is released only when nothing can use it any more: queue
// operations hold references to the buffers they use until they complete.
//
// Size classes: a request is rounded up to a multiple of 1/8 of its power of
// two (at least 512 bytes), so a block is at most 12.5% larger than asked
// and a repeated size always lands in the same class.
//
// Bounds on what the cache holds:
//  - a device-wide |limit| (0: none) on reserved bytes, in use plus cached:
//    cached blocks are freed to make room, and an allocation that still does
//    not fit is RESOURCE_EXHAUSTED naming the limit;
//  - without a limit, before asking the system for a new block, cached
//    blocks beyond the bytes in use are freed, so reserved memory stays
//    below twice the live memory (plus the request);
//  - a failed system allocation frees every cached block and tries once
//    more;
//  - trim() frees every cached block; close() (device destruction) trims and
//    frees blocks released later directly.
//
// Thread-safe (one mutex). The backend functions are called under it, which
// serializes system allocations of one device (they serialize in the
// drivers anyway).
#ifndef KILN_DRIVERS_COMMON_BLOCK_CACHE_H_
#define KILN_DRIVERS_COMMON_BLOCK_CACHE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kiln/hal/driver_abi.h"

namespace kiln::drivers {

class BlockCache {
 public:
  // Where blocks come from. |allocate| returns null (and leaves a message
  // in |error|) when the system has no memory for |size| bytes; blocks are
  // aligned to at least |alignment| bytes.
  struct Backend {
    std::function<uint8_t*(uint64_t size, std::string* error)> allocate;
    std::function<void(uint8_t* block, uint64_t size)> free;
    uint64_t alignment = 256;
  };

  // |what| names the memory in messages ("device memory of hip://0").
  BlockCache(const kiln_hal_host_api_t& host, std::string what,
             Backend backend, uint64_t limit);
  // Frees the cached blocks. Blocks still in use must have been released.
  ~BlockCache();
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  // The size of the block that holds |size| bytes.
  static uint64_t blockSize(uint64_t size);

  // A block of blockSize(size) bytes: a cached one, or a new one.
  // RESOURCE_EXHAUSTED when the limit or the system refuses.
  kiln_status_t allocate(uint64_t size, uint8_t** outBlock);
  // Gives back a block allocate() returned for |size| bytes.
  void release(uint8_t* block, uint64_t size);
  // Frees every cached block.
  void trim();
  // trim(), and from now on release() frees blocks instead of caching them.
  void close();

  // Fills the statistics fields of |out| (driver_abi.h semantics).
  void stats(kiln_hal_device_memory_stats_t* out) const;

  uint64_t limit() const { return limitBytes; }
  uint64_t alignment() const { return backend.alignment; }

 private:
  // Frees cached blocks, largest first, until at most |keep| bytes stay
  // cached. Caller holds |mutex|.
  void freeCachedDownTo(uint64_t keep);

  const kiln_hal_host_api_t& host;
  const std::string what;
  const Backend backend;
  const uint64_t limitBytes;

  mutable std::mutex mutex;
  std::map<uint64_t, std::vector<uint8_t*>> cached;  // by block size
  bool closed = false;
  uint64_t bytesInUse = 0;
  uint64_t bytesCached = 0;
  uint64_t peakReserved = 0;
  uint64_t systemAllocations = 0;
  uint64_t systemFrees = 0;
  uint64_t cacheHits = 0;
};

// Splits a device URI query ("key=value&key=value"; empty items skipped)
// into pairs. False, with the offending item in |bad|, for an item that is
// not key=value.
bool splitDeviceOptions(const std::string& query,
                        std::vector<std::pair<std::string, std::string>>* out,
                        std::string* bad);

// Parses a byte count: digits with an optional K, M, G or T suffix (binary
// multiples; "KiB" style and "B" accepted too). False for anything else or
// an overflow.
bool parseByteSize(const std::string& text, uint64_t* out);

}  // namespace kiln::drivers

#endif  // KILN_DRIVERS_COMMON_BLOCK_CACHE_H_
