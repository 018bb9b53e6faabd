#include "tooling/compare.h"

#include <cmath>

#include "tooling/values.h"

namespace kiln {
namespace tooling {
namespace {

bool ElementsMatch(const HostTensor& expected, const HostTensor& actual,
                   uint64_t index, const Tolerance& tolerance) {
  kiln_element_type_t type = expected.element_type;
  // Integers (and i1) are exact whatever the tolerance: a tolerance is for
  // floating-point rounding, and an off-by-one integer is a wrong answer.
  if (!IsFloatType(type)) {
    int64_t es, as;
    uint64_t eu, au;
    GetElementAsInteger(expected, index, &es, &eu);
    GetElementAsInteger(actual, index, &as, &au);
    return es == as && eu == au;
  }
  double e = GetElementAsDouble(expected, index);
  double a = GetElementAsDouble(actual, index);
  if (std::isnan(e) || std::isnan(a)) return std::isnan(e) && std::isnan(a);
  if (std::isinf(e) || std::isinf(a)) return e == a;
  return std::fabs(a - e) <= tolerance.atol + tolerance.rtol * std::fabs(e);
}

}  // namespace

Tolerance DefaultTolerance(kiln_element_type_t type) {
  switch (type) {
    case KILN_ELEMENT_TYPE_F16: return {1e-3, 1e-2};
    case KILN_ELEMENT_TYPE_BF16: return {1e-2, 2e-2};
    case KILN_ELEMENT_TYPE_F32: return {1e-5, 1e-5};
    case KILN_ELEMENT_TYPE_F64: return {1e-9, 1e-9};
    default: return {0.0, 0.0};
  }
}

std::string FormatIndices(const std::vector<int64_t>& indices) {
  std::string text = "[";
  for (size_t i = 0; i < indices.size(); ++i) {
    if (i) text += ", ";
    text += std::to_string(indices[i]);
  }
  return text + "]";
}

CompareResult CompareTensors(const HostTensor& expected,
                             const HostTensor& actual,
                             const Tolerance& tolerance, size_t max_reported) {
  CompareResult result;
  if (expected.element_type != actual.element_type ||
      expected.shape != actual.shape) {
    result.type_mismatch =
        "expected " + expected.TypeString() + ", got " + actual.TypeString();
    return result;
  }
  const uint64_t count = expected.element_count();
  for (uint64_t i = 0; i < count; ++i) {
    if (ElementsMatch(expected, actual, i, tolerance)) continue;
    ++result.mismatch_count;
    if (result.first_mismatches.size() >= max_reported) continue;
    ElementMismatch mismatch;
    mismatch.flat_index = i;
    mismatch.indices.resize(expected.shape.size());
    uint64_t rest = i;
    for (size_t d = expected.shape.size(); d-- > 0;) {
      uint64_t dim = static_cast<uint64_t>(expected.shape[d]);
      mismatch.indices[d] = static_cast<int64_t>(rest % dim);
      rest /= dim;
    }
    mismatch.expected = FormatElement(expected, i);
    mismatch.actual = FormatElement(actual, i);
    result.first_mismatches.push_back(std::move(mismatch));
  }
  return result;
}

}  // namespace tooling
}  // namespace kiln
