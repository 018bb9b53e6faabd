// Verification of .vmfb module bytes: structure (FlatBuffers verifier) and
// meaning (versions, indices, ranges, sizes).
//
// After VerifyModule succeeds on a buffer, every offset, index and size in it
// may be used without further checks: all tables are within the buffer, all
// executable/export/rodata/input/output/channel indices are in range, every
// BufferRef lies within its space, tensor sizes do not overflow, every
// element type is valid, every channel's grid is positive, bounded and shared
// by the function's channels with distinct in-range axes, every load-time
// parameter (Rodata.parameter) has a non-empty name, a valid type whose size
// is its segment's, and no data of its own, and every
// collective's send/recv ranges have exactly the bytes its op moves, and
// every dispatch runs at least one and at most as many workgroups as the
// largest of its bindings has bytes. Thread-safe (pure function).
#ifndef KILN_RUNTIME_SRC_MODULE_MODULE_VERIFIER_H_
#define KILN_RUNTIME_SRC_MODULE_MODULE_VERIFIER_H_

#include <cstddef>
#include <cstdint>

#include "kiln/status.h"

namespace kiln {
namespace module {

// Verifies the module file of |size| bytes at |data|, which must be aligned
// to 64 bytes (the largest force_align of the schema): its integrity trailer
// (schemas/module_trailer.h) first, then the FlatBuffer it seals. On success
// *content_size is the FlatBuffer's size (|size| less the trailer).
// |source| names the module in messages. Codes: INVALID_ARGUMENT for a
// foreign file (wrong identifier) or a malformed module, DATA_LOSS for a
// truncated or corrupt file (missing trailer, size or checksum mismatch, or a
// FlatBuffer that fails verification), INCOMPATIBLE for a module version
// this runtime does not read.
kiln_status_t VerifyModule(const uint8_t* data, size_t size,
                           const char* source, size_t* content_size);

// Largest byte size accepted for any tensor, arena or module (2^48): far
// beyond any real device, small enough that sums of a few never overflow.
constexpr uint64_t kMaxByteSize = uint64_t{1} << 48;

// Byte size of a dense row-major tensor of |rank| dimensions; false if a
// dimension is negative or the size exceeds kMaxByteSize.
bool ComputeTensorByteSize(uint64_t element_size, const int64_t* shape,
                           size_t rank, uint64_t* element_count,
                           uint64_t* byte_size);

}  // namespace module
}  // namespace kiln

#endif  // KILN_RUNTIME_SRC_MODULE_MODULE_VERIFIER_H_
