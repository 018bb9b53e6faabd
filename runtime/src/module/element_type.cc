#include "module/element_type.h"

namespace kiln {
namespace module {

using schema::ElementType;

uint64_t ElementTypeByteSize(ElementType type) {
  switch (type) {
    case ElementType::I1:
    case ElementType::I8:
    case ElementType::U8:
      return 1;
    case ElementType::I16:
    case ElementType::U16:
    case ElementType::F16:
    case ElementType::BF16:
      return 2;
    case ElementType::I32:
    case ElementType::U32:
    case ElementType::F32:
      return 4;
    case ElementType::I64:
    case ElementType::U64:
    case ElementType::F64:
      return 8;
    case ElementType::Invalid:
      break;
  }
  return 0;
}

const char* ElementTypeName(ElementType type) {
  switch (type) {
    case ElementType::I1: return "i1";
    case ElementType::I8: return "i8";
    case ElementType::I16: return "i16";
    case ElementType::I32: return "i32";
    case ElementType::I64: return "i64";
    case ElementType::U8: return "u8";
    case ElementType::U16: return "u16";
    case ElementType::U32: return "u32";
    case ElementType::U64: return "u64";
    case ElementType::F16: return "f16";
    case ElementType::BF16: return "bf16";
    case ElementType::F32: return "f32";
    case ElementType::F64: return "f64";
    case ElementType::Invalid: break;
  }
  return "invalid";
}

bool IsValidElementType(ElementType type) {
  return ElementTypeByteSize(type) != 0;
}

}  // namespace module
}  // namespace kiln
