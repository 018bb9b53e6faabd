#include "tooling/values.h"

#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <limits>
#include <vector>

#include "tooling/npy.h"

namespace kiln {
namespace tooling {
namespace {

constexpr uint64_t kMaxParsedBytes = uint64_t{1} << 40;

kiln_status_t Invalid(const char* format, const std::string& a,
                      const std::string& b = std::string()) {
  return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT, format, a.c_str(),
                          b.c_str());
}

template <typename T>
void Store(HostTensor* tensor, uint64_t index, T value) {
  std::memcpy(tensor->data.data() + index * sizeof(T), &value, sizeof(T));
}

// Splits the value list on commas, whitespace and brackets.
std::vector<std::string> SplitValues(const std::string& text) {
  std::vector<std::string> values;
  std::string current;
  for (char c : text) {
    if (c == ',' || c == '[' || c == ']' || c == ' ' || c == '\t' ||
        c == '\n' || c == '\r') {
      if (!current.empty()) values.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) values.push_back(current);
  return values;
}

std::string FormatDouble(double value, int precision) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char text[64];
  std::snprintf(text, sizeof(text), "%.*g", precision, value);
  return text;
}

}  // namespace

kiln_status_t ParseTensorType(const std::string& text, HostTensor* out) {
  out->shape.clear();
  out->data.clear();
  out->element_type = KILN_ELEMENT_TYPE_INVALID;
  size_t start = 0;
  while (true) {
    size_t x = text.find('x', start);
    std::string part = text.substr(start, x == std::string::npos
                                              ? std::string::npos
                                              : x - start);
    if (x == std::string::npos) {
      out->element_type = kiln_element_type_from_name(part.c_str());
      if (out->element_type == KILN_ELEMENT_TYPE_INVALID) {
        return Invalid("invalid tensor type '%s': unknown element type '%s' "
                       "(expected i1, i8, i16, i32, i64, u8, u16, u32, u64, "
                       "f16, bf16, f32 or f64)", text, part);
      }
      break;
    }
    if (part.empty() ||
        part.find_first_not_of("0123456789") != std::string::npos ||
        part.size() > 12) {
      return Invalid("invalid tensor type '%s': dimension '%s' is not a "
                     "non-negative integer", text, part);
    }
    out->shape.push_back(std::strtoll(part.c_str(), nullptr, 10));
    if (out->shape.size() > KILN_MAX_RANK) {
      return Invalid("invalid tensor type '%s': rank above %s", text,
                     std::to_string(KILN_MAX_RANK));
    }
    start = x + 1;
  }
  // Refuse sizes the host could not hold before allocating anything.
  uint64_t bytes = kiln_element_type_size(out->element_type);
  for (int64_t dim : out->shape) {
    if (dim != 0 && bytes > kMaxParsedBytes / static_cast<uint64_t>(dim)) {
      return Invalid("tensor type '%s' is too large%s", text);
    }
    bytes *= static_cast<uint64_t>(dim);
  }
  return kiln_ok_status();
}

kiln_status_t ParseElement(const std::string& text, HostTensor* tensor,
                           uint64_t index) {
  const kiln_element_type_t type = tensor->element_type;
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  if (IsFloatType(type)) {
    const char* name = kiln_element_type_name(type);
    double value = std::strtod(begin, &end);
    // strtod also reads hexadecimal floats ("0x10" is 16).
    if (end == begin || *end != '\0' ||
        text.find_first_of("xX") != std::string::npos) {
      return Invalid("invalid %s value '%s' (expected a decimal number, inf, "
                     "-inf or nan)", name, text);
    }
    // Finite text whose value does not fit rounds to infinity: strtod's
    // overflow (1e999) or the element type's (1e39 for f32, 70000 for f16).
    const bool finite = std::isfinite(value);
    bool out_of_range = errno == ERANGE && std::isinf(value);
    const float narrowed = static_cast<float>(value);  // IEEE: rounds
    if (finite && type != KILN_ELEMENT_TYPE_F64) {
      out_of_range = std::isinf(narrowed);
    }
    uint16_t bits = 0;
    if (type == KILN_ELEMENT_TYPE_F16) {
      bits = FloatToHalf(narrowed);
      out_of_range = out_of_range || (finite && (bits & 0x7fffu) == 0x7c00u);
    } else if (type == KILN_ELEMENT_TYPE_BF16) {
      bits = FloatToBFloat16(narrowed);
      out_of_range = out_of_range || (finite && (bits & 0x7fffu) == 0x7f80u);
    }
    if (out_of_range) {
      return Invalid("invalid %s value '%s' (out of the type's range)", name,
                     text);
    }
    switch (type) {
      case KILN_ELEMENT_TYPE_F16:
      case KILN_ELEMENT_TYPE_BF16:
        Store<uint16_t>(tensor, index, bits);
        break;
      case KILN_ELEMENT_TYPE_F32:
        Store<float>(tensor, index, narrowed);
        break;
      default:
        Store<double>(tensor, index, value);
        break;
    }
    return kiln_ok_status();
  }
  if (type == KILN_ELEMENT_TYPE_I1) {
    if (text == "1" || text == "true") {
      Store<uint8_t>(tensor, index, 1);
    } else if (text == "0" || text == "false") {
      Store<uint8_t>(tensor, index, 0);
    } else {
      return Invalid("invalid i1 value '%s' (expected 0, 1, true or false)%s",
                     text);
    }
    return kiln_ok_status();
  }
  if (IsSignedIntegerType(type)) {
    long long value = std::strtoll(begin, &end, 10);
    int64_t min = 0, max = 0;
    switch (type) {
      case KILN_ELEMENT_TYPE_I8: min = INT8_MIN; max = INT8_MAX; break;
      case KILN_ELEMENT_TYPE_I16: min = INT16_MIN; max = INT16_MAX; break;
      case KILN_ELEMENT_TYPE_I32: min = INT32_MIN; max = INT32_MAX; break;
      default: min = INT64_MIN; max = INT64_MAX; break;
    }
    if (end == begin || *end != '\0' || errno == ERANGE || value < min ||
        value > max) {
      return Invalid("invalid %s value '%s' (not an integer in range)",
                     kiln_element_type_name(type), text);
    }
    switch (type) {
      case KILN_ELEMENT_TYPE_I8: Store<int8_t>(tensor, index, value); break;
      case KILN_ELEMENT_TYPE_I16: Store<int16_t>(tensor, index, value); break;
      case KILN_ELEMENT_TYPE_I32: Store<int32_t>(tensor, index, value); break;
      default: Store<int64_t>(tensor, index, value); break;
    }
    return kiln_ok_status();
  }
  // Unsigned: strtoull accepts "-1" (wrapping), so refuse a sign first.
  unsigned long long value = std::strtoull(begin, &end, 10);
  uint64_t max = 0;
  switch (type) {
    case KILN_ELEMENT_TYPE_U8: max = UINT8_MAX; break;
    case KILN_ELEMENT_TYPE_U16: max = UINT16_MAX; break;
    case KILN_ELEMENT_TYPE_U32: max = UINT32_MAX; break;
    default: max = UINT64_MAX; break;
  }
  if (text.empty() || text[0] == '-' || end == begin || *end != '\0' ||
      errno == ERANGE || value > max) {
    return Invalid("invalid %s value '%s' (not an integer in range)",
                   kiln_element_type_name(type), text);
  }
  switch (type) {
    case KILN_ELEMENT_TYPE_U8: Store<uint8_t>(tensor, index, value); break;
    case KILN_ELEMENT_TYPE_U16: Store<uint16_t>(tensor, index, value); break;
    case KILN_ELEMENT_TYPE_U32: Store<uint32_t>(tensor, index, value); break;
    default: Store<uint64_t>(tensor, index, value); break;
  }
  return kiln_ok_status();
}

kiln_status_t ParseTensorValue(const std::string& text, HostTensor* out,
                               const ExpectedType* expected) {
  if (!text.empty() && text[0] == '@') {
    return ReadNpyFile(text.substr(1), out, expected);
  }
  size_t equals = text.find('=');
  if (equals == std::string::npos) {
    return Invalid("invalid value '%s': expected SHAPExTYPE=VALUES (e.g. "
                   "2x3xf32=1,2,3,4,5,6), TYPE=VALUE for a scalar, or "
                   "@file.npy%s", text);
  }
  KILN_RETURN_IF_ERROR(ParseTensorType(text.substr(0, equals), out));
  if (expected) KILN_RETURN_IF_ERROR(CheckType(*out, *expected));
  std::vector<std::string> values = SplitValues(text.substr(equals + 1));
  const uint64_t count = out->element_count();
  if (values.size() != 1 && values.size() != count) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "invalid value '%s': %s has %" PRIu64
                            " elements but %zu values were given (give all of "
                            "them, or one to fill the tensor)",
                            text.c_str(), out->TypeString().c_str(), count,
                            values.size());
  }
  KILN_RETURN_IF_ERROR(out->Allocate());
  if (values.size() == 1 && count != 1) {
    // Splat: parse once, then copy the element over the tensor, doubling.
    if (count == 0) return kiln_ok_status();
    KILN_RETURN_IF_ERROR(ParseElement(values[0], out, 0));
    const size_t total = out->data.size();
    size_t filled = kiln_element_type_size(out->element_type);
    while (filled < total) {
      size_t chunk = std::min(filled, total - filled);
      std::memcpy(out->data.data() + filled, out->data.data(), chunk);
      filled += chunk;
    }
    return kiln_ok_status();
  }
  for (uint64_t i = 0; i < count; ++i) {
    kiln_status_t element_status = ParseElement(values[i], out, i);
    if (!kiln_status_is_ok(element_status)) {
      return kiln_status_annotate(element_status, "in '%s'", text.c_str());
    }
  }
  return kiln_ok_status();
}

std::string FormatElement(const HostTensor& tensor, uint64_t index) {
  switch (tensor.element_type) {
    case KILN_ELEMENT_TYPE_F16:
    case KILN_ELEMENT_TYPE_BF16:
      return FormatDouble(GetElementAsDouble(tensor, index), 5);
    case KILN_ELEMENT_TYPE_F32:
      return FormatDouble(GetElementAsDouble(tensor, index), 7);
    case KILN_ELEMENT_TYPE_F64:
      return FormatDouble(GetElementAsDouble(tensor, index), 15);
    default: {
      int64_t s;
      uint64_t u;
      GetElementAsInteger(tensor, index, &s, &u);
      return IsSignedIntegerType(tensor.element_type) ? std::to_string(s)
                                                      : std::to_string(u);
    }
  }
}

std::string FormatTensor(const HostTensor& tensor, uint64_t max_elements) {
  std::string text = tensor.TypeString() + "=";
  const uint64_t count = tensor.element_count();
  const size_t rank = tensor.shape.size();
  if (rank == 0) return text + FormatElement(tensor, 0);
  if (count == 0) return text;
  // Row-major walk; before element i, open a bracket for every outer
  // dimension (all but the innermost) that starts at i, and close the ones
  // that ended. Rank 1 prints without brackets, like IREE.
  std::vector<uint64_t> strides(rank, 1);
  for (size_t d = rank - 1; d > 0; --d) {
    strides[d - 1] = strides[d] * static_cast<uint64_t>(tensor.shape[d]);
  }
  for (uint64_t i = 0; i < count; ++i) {
    if (i == max_elements) {
      text += "...";
      return text;
    }
    size_t opens = 0;
    for (size_t d = 0; d + 1 < rank; ++d) {
      if (i % strides[d] == 0) ++opens;
    }
    if (i != 0) {
      // Every dimension opened here also closed just before.
      if (opens == 0) text += ' ';
      text.append(opens, ']');
    }
    text.append(opens, '[');
    text += FormatElement(tensor, i);
  }
  size_t outer = rank - 1;
  text.append(outer, ']');
  return text;
}

}  // namespace tooling
}  // namespace kiln
