#include "drivers/common/export_table.h"

namespace kiln::drivers {

void ExportTable::assign(const kiln_hal_executable_params_t& params,
                         kiln_hal_executable_t* executable) {
  names.reserve(params.export_count);
  exports.reserve(params.export_count);
  for (uint32_t i = 0; i < params.export_count; ++i)
    names.emplace_back(params.exports[i].name);
  for (uint32_t i = 0; i < params.export_count; ++i) {
    kiln_hal_executable_export_t copy = params.exports[i];
    copy.name = names[i].c_str();
    exports.push_back(copy);
  }
  executable->export_count = params.export_count;
  executable->exports = exports.data();
}

}  // namespace kiln::drivers
