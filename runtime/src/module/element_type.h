// Element types of the module schema: byte sizes and names.
//
// The schema's ElementType (module.fbs) and the public kiln_element_type_t
// (kiln/runtime.h) share numeric values, so these helpers serve both.
// Pure functions; thread-safe.
#ifndef KILN_RUNTIME_SRC_MODULE_ELEMENT_TYPE_H_
#define KILN_RUNTIME_SRC_MODULE_ELEMENT_TYPE_H_

#include <cstdint>

#include "kiln/schemas/module_generated.h"

namespace kiln {
namespace module {

// Bytes per element (i1 takes a whole byte); 0 for Invalid and values outside
// the enum.
uint64_t ElementTypeByteSize(schema::ElementType type);

// "i1", "f32", ...; "invalid" for Invalid and values outside the enum.
const char* ElementTypeName(schema::ElementType type);

// True for I1..F64.
bool IsValidElementType(schema::ElementType type);

}  // namespace module
}  // namespace kiln

#endif  // KILN_RUNTIME_SRC_MODULE_ELEMENT_TYPE_H_
