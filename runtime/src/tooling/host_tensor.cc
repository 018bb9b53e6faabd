#include "tooling/host_tensor.h"

#include <cinttypes>
#include <cmath>
#include <cstring>
#include <new>
#include <stdexcept>

namespace kiln {
namespace tooling {

uint64_t HostTensor::element_count() const {
  uint64_t count = 1;
  for (int64_t dim : shape) count *= static_cast<uint64_t>(dim);
  return count;
}

std::string HostTensor::TypeString() const {
  std::string text;
  for (int64_t dim : shape) text += std::to_string(dim) + "x";
  return text + kiln_element_type_name(element_type);
}

kiln_status_t HostTensor::Allocate() {
  // Callers checked the type (ParseTensorType bounds it; signatures are
  // verified), so the product does not overflow.
  const uint64_t bytes = element_count() * kiln_element_type_size(element_type);
  try {
    data.assign(static_cast<size_t>(bytes), 0);
    return kiln_ok_status();
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {
  }
  return kiln_make_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                          "cannot allocate %" PRIu64 " bytes of host memory "
                          "for a %s tensor",
                          bytes, TypeString().c_str());
}

kiln_status_t CheckType(const HostTensor& tensor,
                        const ExpectedType& expected) {
  bool same = tensor.element_type == expected.type.element_type &&
              tensor.shape.size() == expected.type.rank;
  for (size_t d = 0; same && d < tensor.shape.size(); ++d) {
    same = tensor.shape[d] == expected.type.shape[d];
  }
  if (same) return kiln_ok_status();
  char type[256];
  kiln_tensor_type_format(&expected.type, type, sizeof(type));
  return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                          "expected %s for %s, got %s", type,
                          expected.what.c_str(), tensor.TypeString().c_str());
}

namespace {
uint32_t FloatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}
float BitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}
}  // namespace

uint16_t FloatToHalf(float value) {
  uint32_t bits = FloatBits(value);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  uint32_t exponent = (bits >> 23) & 0xffu;
  uint32_t mantissa = bits & 0x7fffffu;
  if (exponent == 0xff) {  // inf or NaN (keep NaN quiet and non-zero)
    return sign | 0x7c00u | (mantissa ? 0x200u | (mantissa >> 13) : 0u);
  }
  int32_t e = static_cast<int32_t>(exponent) - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00u;  // overflow to infinity
  if (e <= 0) {
    // Subnormal half (or zero): shift the full significand into place and
    // round to nearest even.
    if (e < -10) return sign;
    uint32_t significand = mantissa | 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half = significand >> shift;
    uint32_t remainder = significand & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (remainder > halfway || (remainder == halfway && (half & 1u))) ++half;
    return sign | static_cast<uint16_t>(half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mantissa >> 13);
  uint32_t remainder = mantissa & 0x1fffu;
  // Carries propagate into the exponent, which is the correct rounding up to
  // the next binade (or infinity).
  if (remainder > 0x1000u || (remainder == 0x1000u && (half & 1u))) ++half;
  return sign | static_cast<uint16_t>(half);
}

float HalfToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) {
    return BitsToFloat(sign | 0x7f800000u | (mantissa << 13));
  }
  if (exponent == 0) {
    // Zero or subnormal: value = mantissa * 2^-24.
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return BitsToFloat(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

uint16_t FloatToBFloat16(float value) {
  uint32_t bits = FloatBits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) {  // NaN: keep it a quiet NaN
    return static_cast<uint16_t>((bits >> 16) | 0x40u);
  }
  uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

float BFloat16ToFloat(uint16_t bits) {
  return BitsToFloat(static_cast<uint32_t>(bits) << 16);
}

bool IsFloatType(kiln_element_type_t type) {
  return type == KILN_ELEMENT_TYPE_F16 || type == KILN_ELEMENT_TYPE_BF16 ||
         type == KILN_ELEMENT_TYPE_F32 || type == KILN_ELEMENT_TYPE_F64;
}

bool IsSignedIntegerType(kiln_element_type_t type) {
  return type == KILN_ELEMENT_TYPE_I8 || type == KILN_ELEMENT_TYPE_I16 ||
         type == KILN_ELEMENT_TYPE_I32 || type == KILN_ELEMENT_TYPE_I64;
}

namespace {
template <typename T>
T Load(const HostTensor& tensor, uint64_t index) {
  T value;
  std::memcpy(&value, tensor.data.data() + index * sizeof(T), sizeof(T));
  return value;
}
}  // namespace

void GetElementAsInteger(const HostTensor& tensor, uint64_t index, int64_t* s,
                         uint64_t* u) {
  *s = 0;
  *u = 0;
  switch (tensor.element_type) {
    case KILN_ELEMENT_TYPE_I1: *u = Load<uint8_t>(tensor, index) != 0; break;
    case KILN_ELEMENT_TYPE_I8: *s = Load<int8_t>(tensor, index); break;
    case KILN_ELEMENT_TYPE_I16: *s = Load<int16_t>(tensor, index); break;
    case KILN_ELEMENT_TYPE_I32: *s = Load<int32_t>(tensor, index); break;
    case KILN_ELEMENT_TYPE_I64: *s = Load<int64_t>(tensor, index); break;
    case KILN_ELEMENT_TYPE_U8: *u = Load<uint8_t>(tensor, index); break;
    case KILN_ELEMENT_TYPE_U16: *u = Load<uint16_t>(tensor, index); break;
    case KILN_ELEMENT_TYPE_U32: *u = Load<uint32_t>(tensor, index); break;
    case KILN_ELEMENT_TYPE_U64: *u = Load<uint64_t>(tensor, index); break;
    default: break;
  }
}

double GetElementAsDouble(const HostTensor& tensor, uint64_t index) {
  switch (tensor.element_type) {
    case KILN_ELEMENT_TYPE_F16:
      return HalfToFloat(Load<uint16_t>(tensor, index));
    case KILN_ELEMENT_TYPE_BF16:
      return BFloat16ToFloat(Load<uint16_t>(tensor, index));
    case KILN_ELEMENT_TYPE_F32: return Load<float>(tensor, index);
    case KILN_ELEMENT_TYPE_F64: return Load<double>(tensor, index);
    default: {
      int64_t s;
      uint64_t u;
      GetElementAsInteger(tensor, index, &s, &u);
      return IsSignedIntegerType(tensor.element_type) ? static_cast<double>(s)
                                                      : static_cast<double>(u);
    }
  }
}

}  // namespace tooling
}  // namespace kiln
