// Tensor values on the command line, in the syntax of IREE's tools:
//
//   2x3xf32=1,2,3,4,5,6     shape x element type = values (separated by
//                           commas, spaces or brackets: "[1 2 3][4 5 6]")
//   4xf32=1.5               splat: one value fills the tensor
//   f32=2                   rank 0
//   2xi1=true,0             i1 accepts 0/1/true/false
//   @path/to/file.npy       a NumPy file (see npy.h)
//
// Floats are decimal literals (1.5, -2e-3), inf, -inf or nan; hexadecimal
// literals and values beyond the element type's finite range (1e999, or 1e39
// for f32, 70000 for f16) are refused. f16/bf16 are rounded to nearest even
// from the parsed value. Integers must be decimal literals in the element
// type's range.
//
// Printing follows IREE too: "2x3xf32=[1 2 3][4 5 6]", "4xi32=1 2 3 4",
// "f32=2". Pure functions; thread-safe.
#ifndef KILN_RUNTIME_SRC_TOOLING_VALUES_H_
#define KILN_RUNTIME_SRC_TOOLING_VALUES_H_

#include <cstdint>
#include <string>

#include "kiln/status.h"
#include "tooling/host_tensor.h"

namespace kiln {
namespace tooling {

// Parses "2x3xf32" (or "f32") into |out| (data left empty).
kiln_status_t ParseTensorType(const std::string& text, HostTensor* out);

// Parses one value specification (see above; "@file.npy" reads the file).
// Errors are INVALID_ARGUMENT naming the offending text, or the npy reader's.
// With |expected|, the value's type (from the text or the .npy header) must
// be that one (CheckType), checked before anything is allocated; the host
// running out of memory is RESOURCE_EXHAUSTED.
kiln_status_t ParseTensorValue(const std::string& text, HostTensor* out,
                               const ExpectedType* expected = nullptr);

// Parses one scalar |text| and stores it as element |index| of |tensor|.
kiln_status_t ParseElement(const std::string& text, HostTensor* tensor,
                           uint64_t index);

// Formats element |index| ("1.5", "-3", "1").
std::string FormatElement(const HostTensor& tensor, uint64_t index);

// Formats the whole tensor "2x3xf32=[1 2 3][4 5 6]". At most |max_elements|
// values are printed; the rest is elided with "...".
std::string FormatTensor(const HostTensor& tensor,
                         uint64_t max_elements = 1024);

}  // namespace tooling
}  // namespace kiln

#endif  // KILN_RUNTIME_SRC_TOOLING_VALUES_H_
