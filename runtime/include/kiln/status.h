// kiln_status_t: the result of every fallible call in the Kiln runtime.
//
// A status is an opaque pointer. NULL means OK and costs nothing; any other
// value owns a heap record holding a code and a human readable message. The
// caller that receives a non-OK status owns it and must hand it on (return
// it, pass it to a function documented as taking ownership) or free it with
// kiln_status_free. Statuses are plain values: they are not thread-safe to
// mutate concurrently, but may be moved between threads freely.
//
// Creation never fails from the caller's point of view: if memory for the
// record cannot be allocated, a static RESOURCE_EXHAUSTED status is returned,
// which kiln_status_free accepts (and ignores).
//
// Plain C11; shared by the public runtime API (kiln/runtime.h) and the HAL
// (kiln/hal/hal.h). Drivers loaded as plugins receive the same functions
// through kiln_hal_host_api_t (kiln/hal/driver_abi.h) so that every status
// in a process is created and freed by one implementation.
#ifndef KILN_STATUS_H_
#define KILN_STATUS_H_

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Every function of the public headers that returns a kiln_status_t is
// declared KILN_MUST_USE_RESULT: dropping a status leaks it and ignores an
// error, so GCC and clang warn (-Wunused-result; the runtime, its tools and
// tests build with -Werror=unused-result). Free a status you do not need
// with kiln_status_free (GCC does not accept a (void) cast).
#if defined(__GNUC__) || defined(__clang__)
#define KILN_PRINTF_FORMAT(fmt_index, args_index) \
  __attribute__((format(printf, fmt_index, args_index)))
#define KILN_MUST_USE_RESULT __attribute__((warn_unused_result))
#else
#define KILN_PRINTF_FORMAT(fmt_index, args_index)
#define KILN_MUST_USE_RESULT
#endif

// Status codes. Values follow absl/IREE canonical codes where they exist so
// they map 1:1 onto other runtimes' errors; INCOMPATIBLE is Kiln's own (a
// binary, module or plugin built for something this runtime cannot run).
typedef enum kiln_status_code_e {
  KILN_STATUS_OK = 0,
  KILN_STATUS_CANCELLED = 1,
  KILN_STATUS_UNKNOWN = 2,
  KILN_STATUS_INVALID_ARGUMENT = 3,
  KILN_STATUS_DEADLINE_EXCEEDED = 4,
  KILN_STATUS_NOT_FOUND = 5,
  KILN_STATUS_ALREADY_EXISTS = 6,
  KILN_STATUS_PERMISSION_DENIED = 7,
  KILN_STATUS_RESOURCE_EXHAUSTED = 8,
  KILN_STATUS_FAILED_PRECONDITION = 9,
  KILN_STATUS_ABORTED = 10,
  KILN_STATUS_OUT_OF_RANGE = 11,
  KILN_STATUS_UNIMPLEMENTED = 12,
  KILN_STATUS_INTERNAL = 13,
  KILN_STATUS_UNAVAILABLE = 14,
  KILN_STATUS_DATA_LOSS = 15,
  KILN_STATUS_UNAUTHENTICATED = 16,
  KILN_STATUS_INCOMPATIBLE = 17,
} kiln_status_code_t;

// Opaque; NULL is OK.
typedef struct kiln_status_record_t* kiln_status_t;

#define kiln_ok_status() ((kiln_status_t)NULL)
#define kiln_status_is_ok(status) ((status) == NULL)

// Creates a status with |code| and a printf-style message. |code| OK returns
// NULL (OK) and ignores the message.
KILN_MUST_USE_RESULT kiln_status_t kiln_make_status(kiln_status_code_t code,
                                                    const char* format, ...)
    KILN_PRINTF_FORMAT(2, 3);
KILN_MUST_USE_RESULT kiln_status_t kiln_make_status_v(kiln_status_code_t code,
                                                      const char* format,
                                                      va_list args);

// The code of |status|; KILN_STATUS_OK for NULL.
kiln_status_code_t kiln_status_code(kiln_status_t status);

// The message of |status| including annotations ("" for OK). The pointer is
// owned by |status| and valid until it is freed or annotated.
const char* kiln_status_message(kiln_status_t status);

// Frees |status|; NULL is a no-op.
void kiln_status_free(kiln_status_t status);

// Frees |status| and returns its code (handy in tests and at API edges).
kiln_status_code_t kiln_status_consume_code(kiln_status_t status);

// Adds context to a failing |status| (takes ownership, returns the status to
// use from now on; it may be a different pointer). The annotation is appended
// to the message as "; <annotation>". OK stays OK.
KILN_MUST_USE_RESULT kiln_status_t kiln_status_annotate(kiln_status_t status,
                                                        const char* format, ...)
    KILN_PRINTF_FORMAT(2, 3);
KILN_MUST_USE_RESULT kiln_status_t kiln_status_annotate_v(kiln_status_t status,
                                                          const char* format,
                                                          va_list args);

// A new status with the same code and message (NULL for NULL). Used to hand a
// sticky failure (e.g. a failed semaphore) to many waiters.
KILN_MUST_USE_RESULT kiln_status_t kiln_status_clone(kiln_status_t status);

// "OK", "INVALID_ARGUMENT", ... ("UNKNOWN_CODE" for values outside the enum).
const char* kiln_status_code_string(kiln_status_code_t code);

// Writes "CODE: message" (or "OK") into |buffer| (always NUL terminated when
// |capacity| > 0, truncated if needed) and returns the full length that the
// text needs, excluding the NUL, like snprintf.
size_t kiln_status_format(kiln_status_t status, char* buffer, size_t capacity);

// Returns from the enclosing function (which must return kiln_status_t) if
// |expr| yields a failing status.
#define KILN_RETURN_IF_ERROR(expr)               \
  do {                                           \
    kiln_status_t kiln_status_tmp_ = (expr);     \
    if (!kiln_status_is_ok(kiln_status_tmp_)) {  \
      return kiln_status_tmp_;                   \
    }                                            \
  } while (0)

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // KILN_STATUS_H_
