// Names of collective operations and reductions (kiln/hal/hal.h enums), as
// the drivers write them in their messages. Stateless and thread-safe.
#ifndef KILN_DRIVERS_COMMON_COLLECTIVE_NAMES_H_
#define KILN_DRIVERS_COMMON_COLLECTIVE_NAMES_H_

#include <cstdint>

#include "kiln/hal/hal.h"

namespace kiln::drivers {

// "all_reduce", ...; "collective" for an unknown kind.
inline const char* collectiveKindName(uint32_t kind) {
  switch (kind) {
    case KILN_HAL_COLLECTIVE_ALL_REDUCE: return "all_reduce";
    case KILN_HAL_COLLECTIVE_ALL_GATHER: return "all_gather";
    case KILN_HAL_COLLECTIVE_REDUCE_SCATTER: return "reduce_scatter";
    case KILN_HAL_COLLECTIVE_ALL_TO_ALL: return "all_to_all";
    case KILN_HAL_COLLECTIVE_BROADCAST: return "broadcast";
  }
  return "collective";
}

// "sum", ...; "?" for an unknown reduction.
inline const char* reductionName(uint32_t reduction) {
  switch (reduction) {
    case KILN_HAL_REDUCTION_NONE: return "none";
    case KILN_HAL_REDUCTION_SUM: return "sum";
    case KILN_HAL_REDUCTION_PROD: return "prod";
    case KILN_HAL_REDUCTION_MIN: return "min";
    case KILN_HAL_REDUCTION_MAX: return "max";
    case KILN_HAL_REDUCTION_AVG: return "avg";
  }
  return "?";
}

}  // namespace kiln::drivers

#endif  // KILN_DRIVERS_COMMON_COLLECTIVE_NAMES_H_
