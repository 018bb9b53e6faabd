// NumPy .npy files (format versions 1.0, 2.0 and 3.0) <-> HostTensor.
//
// dtype mapping: |b1 <-> i1, |i1 i8, <i2 i16, <i4 i32, <i8 i64, |u1 u8, <u2
// u16, <u4 u32, <u8 u64, <f2 f16, <f4 f32, <f8 f64. NumPy has no bfloat16:
// bf16 is written as the 2-byte void dtype '<V2' (what ml_dtypes' bfloat16
// arrays look like to plain NumPy) and '<V2'/'|V2' is read back as bf16.
// Big-endian data and Fortran-ordered arrays are rejected with a clear error,
// and so are files with bytes after the array's data. Only regular files are
// read (see base/file.h). Pure functions; thread-safe.
#ifndef KILN_RUNTIME_SRC_TOOLING_NPY_H_
#define KILN_RUNTIME_SRC_TOOLING_NPY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/status.h"
#include "tooling/host_tensor.h"

namespace kiln {
namespace tooling {

// Parses the bytes of an .npy file. |source| names it in errors. With
// |expected|, the header's type must be that one (CheckType) before the data
// is copied.
kiln_status_t ParseNpy(const uint8_t* data, size_t size,
                       const std::string& source, HostTensor* out,
                       const ExpectedType* expected = nullptr);
// Serializes |tensor| as a version 1.0 .npy file.
std::vector<uint8_t> SerializeNpy(const HostTensor& tensor);

kiln_status_t ReadNpyFile(const std::string& path, HostTensor* out,
                          const ExpectedType* expected = nullptr);
kiln_status_t WriteNpyFile(const std::string& path, const HostTensor& tensor);

}  // namespace tooling
}  // namespace kiln

#endif  // KILN_RUNTIME_SRC_TOOLING_NPY_H_
