// Element type and tensor type helpers of kiln/runtime.h.
#include <cstdio>
#include <cstring>
#include <string>

#include "api/objects.h"
#include "kiln/schemas/module_generated.h"
#include "module/element_type.h"

// The three element type enums (public API, HAL, module schema) share values
// so that conversions are casts.
#define KILN_CHECK_ELEMENT_TYPE(NAME, SCHEMA)                                  \
  static_assert(static_cast<int>(KILN_ELEMENT_TYPE_##NAME) ==                  \
                    static_cast<int>(kiln::schema::ElementType::SCHEMA),       \
                "element type mismatch");                                      \
  static_assert(static_cast<int>(KILN_ELEMENT_TYPE_##NAME) ==                  \
                    static_cast<int>(KILN_HAL_ELEMENT_TYPE_##NAME),            \
                "element type mismatch")
KILN_CHECK_ELEMENT_TYPE(INVALID, Invalid);
KILN_CHECK_ELEMENT_TYPE(I1, I1);
KILN_CHECK_ELEMENT_TYPE(I8, I8);
KILN_CHECK_ELEMENT_TYPE(I16, I16);
KILN_CHECK_ELEMENT_TYPE(I32, I32);
KILN_CHECK_ELEMENT_TYPE(I64, I64);
KILN_CHECK_ELEMENT_TYPE(U8, U8);
KILN_CHECK_ELEMENT_TYPE(U16, U16);
KILN_CHECK_ELEMENT_TYPE(U32, U32);
KILN_CHECK_ELEMENT_TYPE(U64, U64);
KILN_CHECK_ELEMENT_TYPE(F16, F16);
KILN_CHECK_ELEMENT_TYPE(BF16, BF16);
KILN_CHECK_ELEMENT_TYPE(F32, F32);
KILN_CHECK_ELEMENT_TYPE(F64, F64);
#undef KILN_CHECK_ELEMENT_TYPE

namespace kiln {
namespace api {

std::string FormatTensorType(kiln_element_type_t element_type,
                             const int64_t* shape, size_t rank) {
  std::string text;
  for (size_t i = 0; i < rank; ++i) {
    text += std::to_string(shape[i]);
    text += 'x';
  }
  text += kiln_element_type_name(element_type);
  return text;
}

}  // namespace api
}  // namespace kiln

extern "C" {

size_t kiln_element_type_size(kiln_element_type_t type) {
  return kiln::module::ElementTypeByteSize(
      static_cast<kiln::schema::ElementType>(type));
}

const char* kiln_element_type_name(kiln_element_type_t type) {
  return kiln::module::ElementTypeName(
      static_cast<kiln::schema::ElementType>(type));
}

kiln_element_type_t kiln_element_type_from_name(const char* name) {
  if (!name) return KILN_ELEMENT_TYPE_INVALID;
  for (int i = KILN_ELEMENT_TYPE_I1; i <= KILN_ELEMENT_TYPE_F64; ++i) {
    kiln_element_type_t type = static_cast<kiln_element_type_t>(i);
    if (std::strcmp(name, kiln_element_type_name(type)) == 0) return type;
  }
  return KILN_ELEMENT_TYPE_INVALID;
}

size_t kiln_tensor_type_format(const kiln_tensor_type_t* type, char* buffer,
                               size_t capacity) {
  std::string text =
      type ? kiln::api::FormatTensorType(type->element_type, type->shape,
                                         type->shape ? type->rank : 0)
           : std::string("<null>");
  if (capacity > 0) std::snprintf(buffer, capacity, "%s", text.c_str());
  return text.size();
}

}  // extern "C"
