// Parameter archives: the tensors of a safetensors file or of a numpy .npz
// archive (a zip of NAME.npy members, stored as np.savez writes them or
// deflated as np.savez_compressed does; zip64 as numpy writes it).
//
// The one reader of both formats, shared by the compiler (kiln-bind-parameters
// binds tensors at compile time) and the runtime (kiln_parameters_t supplies
// them when a module is loaded). It depends on zlib and the C++ library only:
// no LLVM, no Kiln status type; errors are messages for the caller to wrap.
//
// Archives are untrusted input: every offset and size is checked against the
// bytes, deflated members are inflated only up to the size deflate can
// produce from their packed bytes (no huge allocation from a corrupt size),
// and each .npz member's CRC-32 is checked.
//
// Thread-safety: ReadParameterArchive is stateless; a ParameterArchive is
// immutable after reading and may be read from any thread.
#ifndef KILN_RUNTIME_SRC_ARCHIVE_PARAMETER_ARCHIVE_H_
#define KILN_RUNTIME_SRC_ARCHIVE_PARAMETER_ARCHIVE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kiln {
namespace archive {

// One tensor of an archive: its element type by the safetensors dtype name
// (F64, F32, F16, BF16, I64, I32, I16, I8, U64, U32, U16, U8, BOOL, or any
// other name a safetensors file uses), its shape and its row-major
// little-endian bytes.
struct ArchiveTensor {
  std::string dtype;
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;
  uint64_t size = 0;
};

// An archive read whole. Tensors point into the bytes given to
// ReadParameterArchive (which must outlive the archive) or, for deflated
// .npz members, into |inflated|, which the archive owns.
struct ParameterArchive {
  std::string format;  // "safetensors" or "npz"
  std::vector<std::unique_ptr<uint8_t[]>> inflated;
  std::map<std::string, ArchiveTensor> tensors;  // by name, sorted
};

// Reads the archive in |size| bytes at |data|, a safetensors file or an .npz
// archive (told apart by content: a zip starts with "PK\3\4"). |source| names
// the archive in messages. Returns "" on success, else why the bytes are not
// a valid archive: "parameter archive 'SOURCE' is not a valid safetensors
// file: ..." (or ".npz archive: member 'w.npy': ...").
std::string ReadParameterArchive(const uint8_t* data, size_t size,
                                 const std::string& source,
                                 ParameterArchive* out);

// Bytes per element of a safetensors dtype name (BOOL: 1), or 0 for a name
// this reader does not know.
uint64_t DtypeByteSize(const std::string& dtype);

}  // namespace archive
}  // namespace kiln

#endif  // KILN_RUNTIME_SRC_ARCHIVE_PARAMETER_ARCHIVE_H_
