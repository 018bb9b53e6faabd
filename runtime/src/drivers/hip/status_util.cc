#include "drivers/hip/status_util.h"

#include <atomic>
#include <cstdarg>

namespace kiln::hip {
namespace {

std::atomic<const kiln_hal_host_api_t*>& hostSlot() {
  static std::atomic<const kiln_hal_host_api_t*> slot{nullptr};
  return slot;
}

}  // namespace

void setHostApi(const kiln_hal_host_api_t* host) {
  if (host) hostSlot().store(host, std::memory_order_release);
}

const kiln_hal_host_api_t* hostApi() {
  return hostSlot().load(std::memory_order_acquire);
}

kiln_status_t makeStatus(kiln_status_code_t code, const char* format, ...) {
  va_list args;
  va_start(args, format);
  kiln_status_t status = hostApi()->status_make_v(code, format, args);
  va_end(args);
  return status;
}

kiln_status_t annotate(kiln_status_t status, const char* format, ...) {
  if (!status) return status;
  va_list args;
  va_start(args, format);
  status = hostApi()->status_annotate_v(status, format, args);
  va_end(args);
  return status;
}

kiln_status_t cloneStatus(kiln_status_t status) {
  return status ? hostApi()->status_clone(status) : nullptr;
}

void freeStatus(kiln_status_t status) {
  if (status) hostApi()->status_free(status);
}

kiln_status_code_t statusCode(kiln_status_t status) {
  return status ? hostApi()->status_code(status) : KILN_STATUS_OK;
}

const char* statusMessage(kiln_status_t status) {
  return status ? hostApi()->status_message(status) : "OK";
}

kiln_time_t timeNow() { return hostApi()->time_now(); }

}  // namespace kiln::hip
