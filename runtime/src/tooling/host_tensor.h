// HostTensor: a dense row-major tensor in host memory, the currency of the
// runtime tools (kiln-run, kiln-benchmark): parsed from the command line or a
// .npy file, uploaded as a buffer view, read back, printed and compared.
//
// Also the 16-bit float conversions the tools need (IEEE binary16 and
// bfloat16, round to nearest even, NaN and infinities preserved).
//
// Plain value type; not synchronized (one thread at a time per object).
#ifndef KILN_RUNTIME_SRC_TOOLING_HOST_TENSOR_H_
#define KILN_RUNTIME_SRC_TOOLING_HOST_TENSOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/runtime.h"
#include "kiln/status.h"

namespace kiln {
namespace tooling {

struct HostTensor {
  kiln_element_type_t element_type = KILN_ELEMENT_TYPE_INVALID;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // element_count() * element size bytes

  uint64_t element_count() const;
  // "2x3xf32".
  std::string TypeString() const;
  // Resizes |data| for the shape and element type (zero filled).
  // RESOURCE_EXHAUSTED naming the type when the host cannot hold it.
  kiln_status_t Allocate();
};

// The type a value must have (a function's input or output), checked before
// the value's data is allocated. |what| names it in errors, e.g.
// "input 1 of function 'add'".
struct ExpectedType {
  kiln_tensor_type_t type;
  std::string what;
};

// INVALID_ARGUMENT "expected 2x3xf32 for <what>, got 3x2xf32" unless
// |tensor|'s element type and shape are |expected|'s (its data is not used).
kiln_status_t CheckType(const HostTensor& tensor, const ExpectedType& expected);

uint16_t FloatToHalf(float value);
float HalfToFloat(uint16_t bits);
uint16_t FloatToBFloat16(float value);
float BFloat16ToFloat(uint16_t bits);

bool IsFloatType(kiln_element_type_t type);
bool IsSignedIntegerType(kiln_element_type_t type);  // i8..i64 (not i1)

// Element |index| converted to double (exact for all but large 64-bit
// integers).
double GetElementAsDouble(const HostTensor& tensor, uint64_t index);
// Element |index| of an integer/i1 tensor, exactly (unsigned values are
// returned as their bit pattern in |u|, signed in |s|).
void GetElementAsInteger(const HostTensor& tensor, uint64_t index, int64_t* s,
                         uint64_t* u);

}  // namespace tooling
}  // namespace kiln

#endif  // KILN_RUNTIME_SRC_TOOLING_HOST_TENSOR_H_
