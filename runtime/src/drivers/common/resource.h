// Reference counting of HAL objects inside drivers, through the inline
// helpers of driver_abi.h: a plugin cannot call the runtime's
// kiln_hal_*_retain/release (the runtime may be linked statically into an
// executable that exports nothing). Null is ignored. Thread-safe.
#ifndef KILN_DRIVERS_COMMON_RESOURCE_H_
#define KILN_DRIVERS_COMMON_RESOURCE_H_

#include "kiln/hal/driver_abi.h"

namespace kiln::drivers {

// |Object| is a HAL base struct (kiln_hal_buffer_t, ...) or a driver struct
// beginning with one: anything with a |resource| member.
template <typename Object>
void retain(Object* object) {
  if (object) kiln_hal_resource_retain(&object->resource);
}
template <typename Object>
void release(Object* object) {
  if (object) kiln_hal_resource_release(&object->resource);
}

}  // namespace kiln::drivers

#endif  // KILN_DRIVERS_COMMON_RESOURCE_H_
