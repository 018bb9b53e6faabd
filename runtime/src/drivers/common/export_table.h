// The export table of a driver's executable: what kiln_hal_executable_t
// points the HAL core at (export_count, exports), with its own copy of the
// export names, since the strings of kiln_hal_executable_params_t are
// borrowed for the prepare call only. Immutable once assigned, so
// thread-safe to read.
#ifndef KILN_DRIVERS_COMMON_EXPORT_TABLE_H_
#define KILN_DRIVERS_COMMON_EXPORT_TABLE_H_

#include <string>
#include <vector>

#include "kiln/hal/driver_abi.h"

namespace kiln::drivers {

struct ExportTable {
  std::vector<std::string> names;  // storage for exports[i].name
  std::vector<kiln_hal_executable_export_t> exports;

  // Copies the exports of |params| and points |executable|'s export_count
  // and exports at the copy (which must outlive it). Call once.
  void assign(const kiln_hal_executable_params_t& params,
              kiln_hal_executable_t* executable);
};

}  // namespace kiln::drivers

#endif  // KILN_DRIVERS_COMMON_EXPORT_TABLE_H_
