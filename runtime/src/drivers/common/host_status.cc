#include "drivers/common/host_status.h"

#include <cstdarg>

namespace kiln::drivers {

kiln_status_t makeStatus(const kiln_hal_host_api_t& host,
                         kiln_status_code_t code, const char* format, ...) {
  va_list args;
  va_start(args, format);
  kiln_status_t status = host.status_make_v(code, format, args);
  va_end(args);
  return status;
}

kiln_status_t annotateStatus(const kiln_hal_host_api_t& host,
                             kiln_status_t status, const char* format, ...) {
  if (!status) return status;
  va_list args;
  va_start(args, format);
  status = host.status_annotate_v(status, format, args);
  va_end(args);
  return status;
}

}  // namespace kiln::drivers
