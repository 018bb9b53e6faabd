// Comparison of an actual tensor against an expected one with tolerances, as
// kiln-run --expected-output does.
//
// Elements match when |actual - expected| <= atol + rtol * |expected|
// for floating-point types (NaN matches NaN, infinities must be equal).
// Integers and i1 are always compared exactly, whatever the tolerance (no
// rounding through double). Pure; thread-safe.
#ifndef KILN_RUNTIME_SRC_TOOLING_COMPARE_H_
#define KILN_RUNTIME_SRC_TOOLING_COMPARE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tooling/host_tensor.h"

namespace kiln {
namespace tooling {

struct Tolerance {
  double atol = 0.0;
  double rtol = 0.0;
};

// Defaults per element type: exact for integers and i1; f32 1e-5/1e-5;
// f64 1e-9/1e-9; f16 1e-3/1e-2; bf16 1e-2/2e-2 (absolute/relative).
Tolerance DefaultTolerance(kiln_element_type_t type);

struct ElementMismatch {
  uint64_t flat_index = 0;
  std::vector<int64_t> indices;  // one per dimension
  std::string expected;
  std::string actual;
};

struct CompareResult {
  // Empty when the types match; otherwise "expected 2x3xf32, got 3x2xf32".
  std::string type_mismatch;
  uint64_t mismatch_count = 0;
  std::vector<ElementMismatch> first_mismatches;  // at most max_reported

  bool ok() const { return type_mismatch.empty() && mismatch_count == 0; }
};

CompareResult CompareTensors(const HostTensor& expected,
                             const HostTensor& actual,
                             const Tolerance& tolerance,
                             size_t max_reported = 10);

// "[1, 2]" for the indices of a mismatch.
std::string FormatIndices(const std::vector<int64_t>& indices);

}  // namespace tooling
}  // namespace kiln

#endif  // KILN_RUNTIME_SRC_TOOLING_COMPARE_H_
