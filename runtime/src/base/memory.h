// Aligned host allocations and small C++ helpers for kiln_status_t.
// Thread-safe (stateless).
#ifndef KILN_BASE_MEMORY_H_
#define KILN_BASE_MEMORY_H_

#include <cstddef>
#include <memory>

#include "kiln/status.h"

namespace kiln {

// Allocates |size| bytes aligned to |alignment| (a power of two; raised to
// at least alignof(max_align_t)). Returns nullptr when out of memory or for a
// bad alignment. Free with alignedFree.
void* alignedAlloc(size_t size, size_t alignment);
void alignedFree(void* pointer);

// Owns a kiln_status_t (frees it unless released).
struct StatusDeleter {
  void operator()(kiln_status_record_t* status) const {
    kiln_status_free(status);
  }
};
using StatusPtr = std::unique_ptr<kiln_status_record_t, StatusDeleter>;

// Reads an unsigned integer from environment variable |name|; |fallback| if
// unset, empty or malformed.
unsigned long envUnsigned(const char* name, unsigned long fallback);

}  // namespace kiln

#endif  // KILN_BASE_MEMORY_H_
