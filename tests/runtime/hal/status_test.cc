// kiln_status_t: creation, codes, messages, annotation, clone, formatting.

#include <gtest/gtest.h>

#include <string>

#include "kiln/status.h"

namespace {

TEST(StatusTest, OkIsNull) {
  kiln_status_t status = kiln_make_status(KILN_STATUS_OK, "ignored %d", 1);
  EXPECT_EQ(status, nullptr);
  EXPECT_TRUE(kiln_status_is_ok(status));
  EXPECT_EQ(kiln_status_code(nullptr), KILN_STATUS_OK);
  EXPECT_STREQ(kiln_status_message(nullptr), "");
  kiln_status_free(nullptr);  // no-op
}

TEST(StatusTest, CarriesCodeAndFormattedMessage) {
  kiln_status_t status =
      kiln_make_status(KILN_STATUS_NOT_FOUND, "no function '%s' (%d)", "main", 3);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_NOT_FOUND);
  EXPECT_STREQ(kiln_status_message(status), "no function 'main' (3)");
  EXPECT_EQ(kiln_status_consume_code(status), KILN_STATUS_NOT_FOUND);
}

TEST(StatusTest, AnnotateAppendsContext) {
  kiln_status_t status = kiln_make_status(KILN_STATUS_DATA_LOSS, "bad offset");
  status = kiln_status_annotate(status, "in module '%s'", "m.vmfb");
  status = kiln_status_annotate(status, "loading");
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_DATA_LOSS);
  EXPECT_STREQ(kiln_status_message(status),
               "bad offset; in module 'm.vmfb'; loading");
  kiln_status_free(status);
  EXPECT_EQ(kiln_status_annotate(nullptr, "x"), nullptr);
}

TEST(StatusTest, CloneIsIndependent) {
  kiln_status_t status = kiln_make_status(KILN_STATUS_ABORTED, "kernel failed");
  kiln_status_t clone = kiln_status_clone(status);
  ASSERT_NE(clone, status);
  kiln_status_free(status);
  EXPECT_EQ(kiln_status_code(clone), KILN_STATUS_ABORTED);
  EXPECT_STREQ(kiln_status_message(clone), "kernel failed");
  kiln_status_free(clone);
  EXPECT_EQ(kiln_status_clone(nullptr), nullptr);
}

TEST(StatusTest, FormatWritesCodeAndMessageLikeSnprintf) {
  kiln_status_t status =
      kiln_make_status(KILN_STATUS_INCOMPATIBLE, "format 'ptx'");
  char buffer[64];
  size_t length = kiln_status_format(status, buffer, sizeof(buffer));
  EXPECT_STREQ(buffer, "INCOMPATIBLE: format 'ptx'");
  EXPECT_EQ(length, std::string(buffer).size());
  char tiny[8];
  EXPECT_EQ(kiln_status_format(status, tiny, sizeof(tiny)), length);
  EXPECT_STREQ(tiny, "INCOMPA");
  EXPECT_EQ(kiln_status_format(status, nullptr, 0), length);
  kiln_status_free(status);
  EXPECT_EQ(kiln_status_format(nullptr, buffer, sizeof(buffer)), 2u);
  EXPECT_STREQ(buffer, "OK");
}

TEST(StatusTest, EveryCodeHasAName) {
  EXPECT_STREQ(kiln_status_code_string(KILN_STATUS_OK), "OK");
  EXPECT_STREQ(kiln_status_code_string(KILN_STATUS_INVALID_ARGUMENT),
               "INVALID_ARGUMENT");
  EXPECT_STREQ(kiln_status_code_string(KILN_STATUS_DEADLINE_EXCEEDED),
               "DEADLINE_EXCEEDED");
  EXPECT_STREQ(kiln_status_code_string(KILN_STATUS_INCOMPATIBLE),
               "INCOMPATIBLE");
  for (int code = 0; code <= KILN_STATUS_INCOMPATIBLE; ++code)
    EXPECT_STRNE(kiln_status_code_string(kiln_status_code_t(code)),
                 "UNKNOWN_CODE")
        << code;
  EXPECT_STREQ(kiln_status_code_string(kiln_status_code_t(999)),
               "UNKNOWN_CODE");
}

kiln_status_t failsEarly(bool fail, int* reached) {
  KILN_RETURN_IF_ERROR(fail ? kiln_make_status(KILN_STATUS_INTERNAL, "early")
                            : nullptr);
  *reached = 1;
  return nullptr;
}

TEST(StatusTest, ReturnIfErrorMacro) {
  int reached = 0;
  EXPECT_EQ(kiln_status_consume_code(failsEarly(true, &reached)),
            KILN_STATUS_INTERNAL);
  EXPECT_EQ(reached, 0);
  EXPECT_EQ(failsEarly(false, &reached), nullptr);
  EXPECT_EQ(reached, 1);
}

TEST(StatusTest, LongMessagesAreKept) {
  std::string longText(10000, 'x');
  kiln_status_t status =
      kiln_make_status(KILN_STATUS_UNKNOWN, "%s", longText.c_str());
  EXPECT_EQ(std::string(kiln_status_message(status)), longText);
  kiln_status_free(status);
}

}  // namespace
