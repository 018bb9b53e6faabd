// Implementation of kiln/status.h.
//
// A status record is one malloc'd block: the code followed by the message
// text. Annotating reallocates it. The record used when malloc fails is a
// static object that kiln_status_free recognizes and never frees.

#include "kiln/status.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

struct kiln_status_record_t {
  kiln_status_code_t code;
  size_t length;  // of message, excluding the NUL
  char message[1];
};

namespace {

// Returned when memory for a record cannot be allocated.
kiln_status_record_t kOutOfMemoryStatus = {
    KILN_STATUS_RESOURCE_EXHAUSTED, 0, {0}};

kiln_status_record_t* allocateRecord(kiln_status_code_t code, size_t length) {
  auto* record = static_cast<kiln_status_record_t*>(
      std::malloc(offsetof(kiln_status_record_t, message) + length + 1));
  if (!record) return nullptr;
  record->code = code;
  record->length = length;
  record->message[length] = 0;
  return record;
}

}  // namespace

extern "C" {

kiln_status_t kiln_make_status_v(kiln_status_code_t code, const char* format,
                                 va_list args) {
  if (code == KILN_STATUS_OK) return nullptr;
  if (!format) format = "";
  va_list measure;
  va_copy(measure, args);
  int needed = std::vsnprintf(nullptr, 0, format, measure);
  va_end(measure);
  if (needed < 0) needed = 0;
  kiln_status_record_t* record = allocateRecord(code, size_t(needed));
  if (!record) return &kOutOfMemoryStatus;
  std::vsnprintf(record->message, size_t(needed) + 1, format, args);
  return record;
}

kiln_status_t kiln_make_status(kiln_status_code_t code, const char* format,
                               ...) {
  va_list args;
  va_start(args, format);
  kiln_status_t status = kiln_make_status_v(code, format, args);
  va_end(args);
  return status;
}

kiln_status_code_t kiln_status_code(kiln_status_t status) {
  return status ? status->code : KILN_STATUS_OK;
}

const char* kiln_status_message(kiln_status_t status) {
  if (!status) return "";
  if (status == &kOutOfMemoryStatus) return "out of memory creating a status";
  return status->message;
}

void kiln_status_free(kiln_status_t status) {
  if (status && status != &kOutOfMemoryStatus) std::free(status);
}

kiln_status_code_t kiln_status_consume_code(kiln_status_t status) {
  kiln_status_code_t code = kiln_status_code(status);
  kiln_status_free(status);
  return code;
}

kiln_status_t kiln_status_annotate_v(kiln_status_t status, const char* format,
                                     va_list args) {
  if (!status || status == &kOutOfMemoryStatus || !format) return status;
  va_list measure;
  va_copy(measure, args);
  int needed = std::vsnprintf(nullptr, 0, format, measure);
  va_end(measure);
  if (needed <= 0) return status;
  // "; " separates the annotation unless the message is empty.
  size_t separator = status->length ? 2 : 0;
  size_t length = status->length + separator + size_t(needed);
  kiln_status_record_t* record = allocateRecord(status->code, length);
  if (!record) return status;  // keep the original rather than lose it
  std::memcpy(record->message, status->message, status->length);
  std::memcpy(record->message + status->length, "; ", separator);
  std::vsnprintf(record->message + status->length + separator,
                 size_t(needed) + 1, format, args);
  std::free(status);
  return record;
}

kiln_status_t kiln_status_annotate(kiln_status_t status, const char* format,
                                   ...) {
  va_list args;
  va_start(args, format);
  status = kiln_status_annotate_v(status, format, args);
  va_end(args);
  return status;
}

kiln_status_t kiln_status_clone(kiln_status_t status) {
  if (!status || status == &kOutOfMemoryStatus) return status;
  kiln_status_record_t* record = allocateRecord(status->code, status->length);
  if (!record) return &kOutOfMemoryStatus;
  std::memcpy(record->message, status->message, status->length);
  return record;
}

const char* kiln_status_code_string(kiln_status_code_t code) {
  // A C caller may pass any int. In C++ reading an enum object that holds a
  // value outside the enum's range is undefined (clang's -fsanitize=enum), so
  // the value is looked at as the int it is.
  int value;
  std::memcpy(&value, &code, sizeof(value));
  switch (value) {
    case KILN_STATUS_OK: return "OK";
    case KILN_STATUS_CANCELLED: return "CANCELLED";
    case KILN_STATUS_UNKNOWN: return "UNKNOWN";
    case KILN_STATUS_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case KILN_STATUS_DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case KILN_STATUS_NOT_FOUND: return "NOT_FOUND";
    case KILN_STATUS_ALREADY_EXISTS: return "ALREADY_EXISTS";
    case KILN_STATUS_PERMISSION_DENIED: return "PERMISSION_DENIED";
    case KILN_STATUS_RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case KILN_STATUS_FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case KILN_STATUS_ABORTED: return "ABORTED";
    case KILN_STATUS_OUT_OF_RANGE: return "OUT_OF_RANGE";
    case KILN_STATUS_UNIMPLEMENTED: return "UNIMPLEMENTED";
    case KILN_STATUS_INTERNAL: return "INTERNAL";
    case KILN_STATUS_UNAVAILABLE: return "UNAVAILABLE";
    case KILN_STATUS_DATA_LOSS: return "DATA_LOSS";
    case KILN_STATUS_UNAUTHENTICATED: return "UNAUTHENTICATED";
    case KILN_STATUS_INCOMPATIBLE: return "INCOMPATIBLE";
  }
  return "UNKNOWN_CODE";
}

size_t kiln_status_format(kiln_status_t status, char* buffer,
                          size_t capacity) {
  int written;
  if (!status) {
    written = std::snprintf(buffer, capacity, "OK");
  } else {
    written = std::snprintf(buffer, capacity, "%s: %s",
                            kiln_status_code_string(kiln_status_code(status)),
                            kiln_status_message(status));
  }
  return written < 0 ? 0 : size_t(written);
}

}  // extern "C"
