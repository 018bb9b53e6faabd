#include "drivers/common/block_cache.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "drivers/common/host_status.h"

namespace kiln::drivers {
namespace {

constexpr uint64_t kMinBlockSize = 512;
// Size classes per power of two.
constexpr unsigned kClassesPerOctave = 8;

}  // namespace

BlockCache::BlockCache(const kiln_hal_host_api_t& host, std::string what,
                       Backend backend, uint64_t limit)
    : host(host),
      what(std::move(what)),
      backend(std::move(backend)),
      limitBytes(limit) {}

BlockCache::~BlockCache() {
  std::lock_guard<std::mutex> lock(mutex);
  freeCachedDownTo(0);
}

uint64_t BlockCache::blockSize(uint64_t size) {
  if (size <= kMinBlockSize) return kMinBlockSize;
  unsigned log2 = 63u - unsigned(__builtin_clzll(size));
  uint64_t granule = std::max<uint64_t>(
      kMinBlockSize, (uint64_t(1) << log2) / kClassesPerOctave);
  if (size > UINT64_MAX - granule) return size;  // refused by the backend
  return (size + granule - 1) / granule * granule;
}

void BlockCache::freeCachedDownTo(uint64_t keep) {
  while (bytesCached > keep && !cached.empty()) {
    auto largest = std::prev(cached.end());
    uint8_t* block = largest->second.back();
    largest->second.pop_back();
    bytesCached -= largest->first;
    ++systemFrees;
    backend.free(block, largest->first);
    if (largest->second.empty()) cached.erase(largest);
  }
}

kiln_status_t BlockCache::allocate(uint64_t size, uint8_t** outBlock) {
  *outBlock = nullptr;
  const uint64_t block = blockSize(size);
  std::lock_guard<std::mutex> lock(mutex);
  auto hit = cached.find(block);
  if (hit != cached.end()) {
    *outBlock = hit->second.back();
    hit->second.pop_back();
    if (hit->second.empty()) cached.erase(hit);
    bytesCached -= block;
    bytesInUse += block;
    ++cacheHits;
    return nullptr;
  }
  if (limitBytes != 0) {
    if (block > limitBytes || bytesInUse > limitBytes - block)
      return makeStatus(
          host, KILN_STATUS_RESOURCE_EXHAUSTED,
          "%s: allocating %llu bytes (a %llu-byte block) would exceed the "
          "memory_limit of %llu bytes: %llu bytes are in use; release "
          "buffers or raise the limit",
          what.c_str(), (unsigned long long)size, (unsigned long long)block,
          (unsigned long long)limitBytes, (unsigned long long)bytesInUse);
    freeCachedDownTo(limitBytes - bytesInUse - block);
  }
  // Cached blocks of other sizes beyond the live bytes are not worth
  // keeping once a new block is needed.
  freeCachedDownTo(bytesInUse + block);
  std::string error;
  uint8_t* fresh = backend.allocate(block, &error);
  if (!fresh && bytesCached != 0) {
    freeCachedDownTo(0);
    error.clear();
    fresh = backend.allocate(block, &error);
  }
  if (!fresh)
    return makeStatus(host, KILN_STATUS_RESOURCE_EXHAUSTED,
                      "%s: cannot allocate %llu bytes (%llu in use): %s",
                      what.c_str(), (unsigned long long)block,
                      (unsigned long long)bytesInUse, error.c_str());
  ++systemAllocations;
  bytesInUse += block;
  peakReserved = std::max(peakReserved, bytesInUse + bytesCached);
  *outBlock = fresh;
  return nullptr;
}

void BlockCache::release(uint8_t* block, uint64_t size) {
  if (!block) return;
  const uint64_t bytes = blockSize(size);
  std::lock_guard<std::mutex> lock(mutex);
  bytesInUse -= bytes;
  if (closed) {
    ++systemFrees;
    backend.free(block, bytes);
    return;
  }
  cached[bytes].push_back(block);
  bytesCached += bytes;
}

void BlockCache::trim() {
  std::lock_guard<std::mutex> lock(mutex);
  freeCachedDownTo(0);
}

void BlockCache::close() {
  std::lock_guard<std::mutex> lock(mutex);
  closed = true;
  freeCachedDownTo(0);
}

void BlockCache::stats(kiln_hal_device_memory_stats_t* out) const {
  std::lock_guard<std::mutex> lock(mutex);
  out->bytes_in_use = bytesInUse;
  out->bytes_cached = bytesCached;
  out->bytes_limit = limitBytes;
  out->peak_bytes_reserved = peakReserved;
  out->system_allocations = systemAllocations;
  out->system_frees = systemFrees;
  out->cache_hits = cacheHits;
}

bool splitDeviceOptions(const std::string& query,
                        std::vector<std::pair<std::string, std::string>>* out,
                        std::string* bad) {
  out->clear();
  size_t begin = 0;
  while (begin < query.size()) {
    size_t end = query.find('&', begin);
    if (end == std::string::npos) end = query.size();
    std::string item = query.substr(begin, end - begin);
    begin = end + 1;
    if (item.empty()) continue;  // "a=1&&b=0", a trailing '&'
    size_t equals = item.find('=');
    if (equals == std::string::npos || equals == 0) {
      *bad = item;
      return false;
    }
    out->emplace_back(item.substr(0, equals), item.substr(equals + 1));
  }
  return true;
}

bool parseByteSize(const std::string& text, uint64_t* out) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(uint8_t(text[digits]))) ++digits;
  if (digits == 0 || digits > 19) return false;
  uint64_t value = std::stoull(text.substr(0, digits));
  std::string suffix = text.substr(digits);
  for (char& c : suffix) c = char(std::toupper(uint8_t(c)));
  unsigned shift = 0;
  static const std::pair<const char*, unsigned> kSuffixes[] = {
      {"", 0},    {"B", 0},    {"K", 10},   {"KB", 10},  {"KIB", 10},
      {"M", 20},  {"MB", 20},  {"MIB", 20}, {"G", 30},   {"GB", 30},
      {"GIB", 30}, {"T", 40},  {"TB", 40},  {"TIB", 40}};
  bool known = false;
  for (const auto& entry : kSuffixes)
    if (suffix == entry.first) {
      shift = entry.second;
      known = true;
    }
  if (!known) return false;
  if (shift != 0 && value > (UINT64_MAX >> shift)) return false;
  *out = value << shift;
  return true;
}

}  // namespace kiln::drivers
