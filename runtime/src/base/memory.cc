#include "base/memory.h"

#include <cstdlib>

namespace kiln {

void* alignedAlloc(size_t size, size_t alignment) {
  if (alignment < alignof(std::max_align_t)) alignment = alignof(std::max_align_t);
  if ((alignment & (alignment - 1)) != 0) return nullptr;
  if (size == 0) size = 1;
  void* pointer = nullptr;
  if (posix_memalign(&pointer, alignment, size) != 0) return nullptr;
  return pointer;
}

void alignedFree(void* pointer) { std::free(pointer); }

unsigned long envUnsigned(const char* name, unsigned long fallback) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  char* end = nullptr;
  unsigned long value = std::strtoul(text, &end, 10);
  if (!end || *end != 0) return fallback;
  return value;
}

}  // namespace kiln
