// Status helpers for the runtime's gtest unit tests: take a status's code
// and message while freeing it, and ASSERT_OK / EXPECT_OK, which report the
// failing expression and its status message. Header-only; tests include it
// as "status_test_util.h" (tests/runtime is on their include path).
#ifndef KILN_TESTS_RUNTIME_STATUS_TEST_UTIL_H_
#define KILN_TESTS_RUNTIME_STATUS_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <string>

#include "kiln/status.h"

namespace kiln::testing {

struct StatusInfo {
  kiln_status_code_t code;
  std::string message;  // "OK" for OK
};

// Frees |status|, returning its code and message.
inline StatusInfo Take(kiln_status_t status) {
  StatusInfo info{kiln_status_code(status),
                  status ? kiln_status_message(status) : "OK"};
  kiln_status_free(status);
  return info;
}

// Frees |status|, returning its message ("OK" for OK).
inline std::string TakeMessage(kiln_status_t status) {
  return Take(status).message;
}

}  // namespace kiln::testing

#define KILN_TEST_CHECK_OK_(check, expr)                                 \
  do {                                                                  \
    ::kiln::testing::StatusInfo kiln_test_info_ =                       \
        ::kiln::testing::Take(expr);                                    \
    check##_EQ(kiln_test_info_.code, KILN_STATUS_OK)                    \
        << #expr << ": " << kiln_test_info_.message;                    \
  } while (0)
#define ASSERT_OK(expr) KILN_TEST_CHECK_OK_(ASSERT, expr)
#define EXPECT_OK(expr) KILN_TEST_CHECK_OK_(EXPECT, expr)

#endif  // KILN_TESTS_RUNTIME_STATUS_TEST_UTIL_H_
