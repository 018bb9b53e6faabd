// Value parsing/printing, f16/bf16 conversion, .npy round trips and tolerance
// comparison used by kiln-run (runtime/src/tooling).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "tooling/compare.h"
#include "tooling/host_tensor.h"
#include "tooling/npy.h"
#include "tooling/values.h"

#if defined(__SANITIZE_ADDRESS__)
#define KILN_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KILN_TEST_ASAN 1
#endif
#endif

namespace kiln {
namespace tooling {
namespace {

HostTensor Parse(const std::string& text) {
  HostTensor tensor;
  kiln_status_t status = ParseTensorValue(text, &tensor);
  EXPECT_TRUE(kiln_status_is_ok(status)) << text << ": "
                                         << kiln_status_message(status);
  kiln_status_free(status);
  return tensor;
}

std::string ParseError(const std::string& text) {
  HostTensor tensor;
  kiln_status_t status = ParseTensorValue(text, &tensor);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT) << text;
  std::string message = kiln_status_message(status);
  kiln_status_free(status);
  return message;
}

TEST(ValuesTest, ParsesShapeTypeAndValues) {
  HostTensor t = Parse("2x3xf32=1,2,3,4,5,6");
  EXPECT_EQ(t.element_type, KILN_ELEMENT_TYPE_F32);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(t.data.size(), 24u);
  EXPECT_EQ(GetElementAsDouble(t, 5), 6.0);
  // Spaces and brackets separate values too (what kiln-run prints).
  EXPECT_EQ(Parse("2x3xf32=[1 2 3][4 5 6]").data, t.data);
}

TEST(ValuesTest, SplatAndScalar) {
  HostTensor splat = Parse("4xf32=1.5");
  ASSERT_EQ(splat.element_count(), 4u);
  for (uint64_t i = 0; i < 4; ++i) EXPECT_EQ(GetElementAsDouble(splat, i), 1.5);
  HostTensor scalar = Parse("f32=2");
  EXPECT_TRUE(scalar.shape.empty());
  EXPECT_EQ(GetElementAsDouble(scalar, 0), 2.0);
  HostTensor empty = Parse("0x3xi32=");
  EXPECT_EQ(empty.element_count(), 0u);
}

TEST(ValuesTest, BooleansAndIntegers) {
  HostTensor b = Parse("4xi1=true,0,1,false");
  EXPECT_EQ(b.data, (std::vector<uint8_t>{1, 0, 1, 0}));
  HostTensor i8 = Parse("2xi8=-128,127");
  EXPECT_EQ(static_cast<int8_t>(i8.data[0]), -128);
  HostTensor u64 = Parse("u64=18446744073709551615");
  int64_t s;
  uint64_t u;
  GetElementAsInteger(u64, 0, &s, &u);
  EXPECT_EQ(u, std::numeric_limits<uint64_t>::max());
  HostTensor i64 = Parse("i64=-9223372036854775808");
  GetElementAsInteger(i64, 0, &s, &u);
  EXPECT_EQ(s, std::numeric_limits<int64_t>::min());
}

TEST(ValuesTest, ErrorsNameTheProblem) {
  EXPECT_NE(ParseError("2x3xf32").find("expected SHAPExTYPE=VALUES"),
            std::string::npos);
  EXPECT_NE(ParseError("2x3xf33=1").find("unknown element type 'f33'"),
            std::string::npos);
  EXPECT_NE(ParseError("2xAxf32=1").find("dimension 'A'"), std::string::npos);
  EXPECT_NE(ParseError("3xf32=1,2").find("3 elements but 2 values"),
            std::string::npos);
  EXPECT_NE(ParseError("2xf32=1,abc").find("invalid f32 value 'abc'"),
            std::string::npos);
  EXPECT_NE(ParseError("i8=128").find("invalid i8 value '128'"),
            std::string::npos);
  EXPECT_NE(ParseError("u8=-1").find("invalid u8 value"), std::string::npos);
  EXPECT_NE(ParseError("i1=2").find("invalid i1 value"), std::string::npos);
  EXPECT_NE(ParseError("i32=1.5").find("invalid i32"), std::string::npos);
  ParseError("99999999x99999999x99999999xf32=1");  // too large, no allocation
}

// strtod alone would take "0x10" as 16 and "1e999" as infinity; narrowing a
// double beyond float's range is undefined behaviour.
TEST(ValuesTest, RefusesHexadecimalAndOutOfRangeFloats) {
  for (const char* text : {"f32=0x10", "f64=0X1p3", "f16=-0x1", "f32=nan(0x1)"}) {
    EXPECT_NE(ParseError(text).find("expected a decimal number"),
              std::string::npos) << text;
  }
  for (const char* text : {"f64=1e999", "f64=-1e999", "f32=1e39",
                           "f32=-3.41e38", "f16=70000", "f16=-65520",
                           "bf16=1e39", "2xf32=1,1e39"}) {
    EXPECT_NE(ParseError(text).find("out of the type's range"),
              std::string::npos) << text;
  }
  // The limits themselves, infinities, NaN and underflow (to 0) are fine.
  EXPECT_EQ(FormatTensor(Parse("2xf16=65504,-inf")), "2xf16=65504 -inf");
  // numpy prints float32's largest value as 3.4028235e+38, a little above
  // it: it rounds to it.
  EXPECT_EQ(FormatTensor(Parse("2xf32=3.4028235e38,nan")),
            "2xf32=3.402823e+38 nan");
  EXPECT_EQ(FormatTensor(Parse("2xf64=1e308,1e-999")), "2xf64=1e+308 0");
  EXPECT_EQ(FormatTensor(Parse("bf16=3e38")), "bf16=3.0041e+38");
}

ExpectedType Expect(kiln_element_type_t element_type,
                    const std::vector<int64_t>& shape) {
  static std::vector<std::vector<int64_t>> shapes;  // keeps |shape| alive
  shapes.push_back(shape);
  ExpectedType expected;
  expected.type = {element_type, shape.size(), shapes.back().data()};
  expected.what = "input 0 of function 'add'";
  return expected;
}

// kiln-run checks a value against the function's signature before it
// allocates: a typo in a shape must not allocate 40 GB (or abort).
TEST(ValuesTest, TypeIsCheckedBeforeAnythingIsAllocated) {
  ExpectedType expected = Expect(KILN_ELEMENT_TYPE_F32, {2, 3});
  HostTensor tensor;
  kiln_status_t status =
      ParseTensorValue("100000x100000xf32=0", &tensor, &expected);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_status_message(status),
               "expected 2x3xf32 for input 0 of function 'add', got "
               "100000x100000xf32");
  kiln_status_free(status);
  EXPECT_TRUE(tensor.data.empty());
  status = ParseTensorValue("2x3xi32=0", &tensor, &expected);
  EXPECT_NE(std::string(kiln_status_message(status)).find("got 2x3xi32"),
            std::string::npos);
  kiln_status_free(status);
  status = ParseTensorValue("2x3xf32=7", &tensor, &expected);
  EXPECT_TRUE(kiln_status_is_ok(status));
  EXPECT_EQ(FormatTensor(tensor), "2x3xf32=[7 7 7][7 7 7]");
  // A scalar signature.
  ExpectedType scalar = Expect(KILN_ELEMENT_TYPE_I64, {});
  status = ParseTensorValue("1xi64=1", &tensor, &scalar);
  EXPECT_NE(std::string(kiln_status_message(status)).find("expected i64"),
            std::string::npos);
  kiln_status_free(status);
}

TEST(ValuesTest, AllocationFailureIsResourceExhausted) {
#if KILN_TEST_ASAN
  GTEST_SKIP() << "ASan reports a failed allocation instead of throwing";
#endif
  HostTensor tensor;
  tensor.element_type = KILN_ELEMENT_TYPE_F64;
  tensor.shape = {int64_t{1} << 60};  // 8 EiB
  kiln_status_t status = tensor.Allocate();
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_RESOURCE_EXHAUSTED);
  EXPECT_NE(std::string(kiln_status_message(status))
                .find("for a 1152921504606846976xf64 tensor"),
            std::string::npos)
      << kiln_status_message(status);
  kiln_status_free(status);
}

TEST(ValuesTest, MissingNpyFileIsNotFound) {
  HostTensor tensor;
  kiln_status_t status = ParseTensorValue("@/no/such/file.npy", &tensor);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_NOT_FOUND);
  kiln_status_free(status);
}

TEST(ValuesTest, PrintsLikeIree) {
  EXPECT_EQ(FormatTensor(Parse("2x3xf32=1,2,3,4,5,6")),
            "2x3xf32=[1 2 3][4 5 6]");
  EXPECT_EQ(FormatTensor(Parse("4xi32=1,-2,3,4")), "4xi32=1 -2 3 4");
  EXPECT_EQ(FormatTensor(Parse("f32=2.5")), "f32=2.5");
  EXPECT_EQ(FormatTensor(Parse("2x2x2xi8=1,2,3,4,5,6,7,8")),
            "2x2x2xi8=[[1 2][3 4]][[5 6][7 8]]");
  EXPECT_EQ(FormatTensor(Parse("3xi1=true,false,1")), "3xi1=1 0 1");
  EXPECT_EQ(FormatTensor(Parse("2xf32=inf,nan")), "2xf32=inf nan");
  EXPECT_EQ(FormatTensor(Parse("6xi32=1"), 3), "6xi32=1 1 1...");
  // Printing then parsing gives the same tensor back.
  HostTensor t = Parse("2x2x3xf64=0.1,0.2,0.3,1e-300,-5,6,7,8,9,10,11,12");
  EXPECT_EQ(Parse(FormatTensor(t)).data, t.data);
}

TEST(HalfTest, Float16Conversions) {
  EXPECT_EQ(FloatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);  // rounds to infinity
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -26)), 0x0000);  // below half of it
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie to even
  EXPECT_EQ(FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(NAN))));
  EXPECT_EQ(HalfToFloat(0x3555), 0.333251953125f);
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));
  for (uint32_t bits = 0; bits < 0x7c00; ++bits) {  // every finite positive
    ASSERT_EQ(FloatToHalf(HalfToFloat(static_cast<uint16_t>(bits))), bits);
  }
  HostTensor t = Parse("2xf16=0.1,-3");
  EXPECT_EQ(FormatTensor(t), "2xf16=0.099976 -3");
}

TEST(HalfTest, BFloat16Conversions) {
  EXPECT_EQ(FloatToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(BFloat16ToFloat(0x4049), 3.140625f);
  EXPECT_EQ(FloatToBFloat16(3.14159f), 0x4049);
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(FloatToBFloat16(NAN))));
  EXPECT_EQ(FloatToBFloat16(INFINITY), 0x7f80);
  HostTensor t = Parse("bf16=1.5");
  EXPECT_EQ(FormatTensor(t), "bf16=1.5");
}

HostTensor RoundTrip(const HostTensor& tensor) {
  std::vector<uint8_t> bytes = SerializeNpy(tensor);
  EXPECT_EQ((bytes.size() - tensor.data.size()) % 64, 0u);
  HostTensor back;
  kiln_status_t status = ParseNpy(bytes.data(), bytes.size(), "mem", &back);
  EXPECT_TRUE(kiln_status_is_ok(status)) << kiln_status_message(status);
  kiln_status_free(status);
  return back;
}

TEST(NpyTest, RoundTripsEveryType) {
  for (const char* text :
       {"2x3xf32=1,2,3,4,5,6", "4xi32=-1,0,1,2147483647", "3xf16=0.5,-1,2",
        "2xbf16=1.5,-2", "5xi1=1,0,0,1,1", "f64=3.25", "0x2xu8=",
        "2x2xi64=1,-2,3,-4", "3xu16=1,2,65535"}) {
    HostTensor tensor = Parse(text);
    HostTensor back = RoundTrip(tensor);
    EXPECT_EQ(back.element_type, tensor.element_type) << text;
    EXPECT_EQ(back.shape, tensor.shape) << text;
    EXPECT_EQ(back.data, tensor.data) << text;
  }
}

TEST(NpyTest, WritesNumpyHeader) {
  std::vector<uint8_t> bytes = SerializeNpy(Parse("2x3xf32=0"));
  size_t header_length = bytes[8] | (bytes[9] << 8);
  EXPECT_EQ((10 + header_length) % 64, 0u);
  std::string header(bytes.begin() + 10, bytes.begin() + 10 + header_length);
  EXPECT_EQ(std::memcmp(bytes.data(), "\x93NUMPY\x01\x00", 8), 0);
  EXPECT_NE(header.find("{'descr': '<f4', 'fortran_order': False, 'shape': "
                        "(2, 3), }"),
            std::string::npos);
  EXPECT_EQ(header.back(), '\n');
  std::vector<uint8_t> vec = SerializeNpy(Parse("3xi1=1"));
  EXPECT_NE(std::string(vec.begin(), vec.end()).find("'|b1'"), std::string::npos);
  EXPECT_NE(std::string(vec.begin(), vec.end()).find("(3,)"), std::string::npos);
}

TEST(NpyTest, FileRoundTrip) {
  std::string path = ::testing::TempDir() + "/tooling_test.npy";
  HostTensor tensor = Parse("2x2xf32=1,2,3,4");
  kiln_status_t status = WriteNpyFile(path, tensor);
  ASSERT_TRUE(kiln_status_is_ok(status));
  HostTensor back = Parse("@" + path);
  EXPECT_EQ(back.data, tensor.data);
}

TEST(NpyTest, RejectsBadFiles) {
  std::vector<uint8_t> good = SerializeNpy(Parse("2x3xf32=1"));
  auto parse = [](std::vector<uint8_t> bytes) {
    HostTensor tensor;
    kiln_status_t status = ParseNpy(bytes.data(), bytes.size(), "x.npy", &tensor);
    std::string message = kiln_status_message(status);
    kiln_status_free(status);
    return message;
  };
  for (size_t length = 0; length < good.size(); ++length) {
    EXPECT_FALSE(parse(std::vector<uint8_t>(good.begin(),
                                            good.begin() + length))
                     .empty())
        << length;
  }
  std::string text(good.begin(), good.end());
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string changed = text;
    changed.replace(changed.find(from), from.size(), to);
    return parse(std::vector<uint8_t>(changed.begin(), changed.end()));
  };
  EXPECT_NE(replace("<f4", ">f4").find("unsupported dtype '>f4'"),
            std::string::npos);
  EXPECT_NE(replace("False", "True ").find("Fortran"), std::string::npos);
  EXPECT_NE(replace("(2, 3)", "(2, 9)").find("truncated data"),
            std::string::npos);
  // Bytes after the data: two arrays in one file, or a wrong shape.
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  EXPECT_NE(parse(longer).find("1 bytes after the data of the 2x3xf32 array"),
            std::string::npos);
  EXPECT_NE(replace("(2, 3)", "(2, 2)").find("8 bytes after the data"),
            std::string::npos);
}

TEST(NpyTest, HeaderTypeIsCheckedBeforeTheDataIsCopied) {
  std::vector<uint8_t> bytes = SerializeNpy(Parse("2x3xf32=1"));
  ExpectedType expected = Expect(KILN_ELEMENT_TYPE_F32, {3, 2});
  HostTensor tensor;
  kiln_status_t status =
      ParseNpy(bytes.data(), bytes.size(), "x.npy", &tensor, &expected);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_status_message(status),
               "expected 3x2xf32 for input 0 of function 'add', got 2x3xf32; "
               "in 'x.npy'");
  kiln_status_free(status);
  EXPECT_TRUE(tensor.data.empty());
}

// Only regular files are read: /dev/zero would never end, a FIFO would block
// the open until a writer comes.
TEST(NpyTest, OnlyRegularFilesAreRead) {
  const std::string fifo = ::testing::TempDir() + "/tooling_test_fifo.npy";
  unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::pair<std::string, std::string> cases[] = {
      {"/dev/zero", "it is a character device, not a regular file"},
      {::testing::TempDir(), "it is a directory, not a regular file"},
      {fifo, "it is a FIFO, not a regular file"},
  };
  for (const auto& [path, why] : cases) {
    HostTensor tensor;
    kiln_status_t status = ParseTensorValue("@" + path, &tensor);
    EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT) << path;
    EXPECT_EQ(std::string(kiln_status_message(status)),
              "cannot read .npy file '" + path + "': " + why);
    kiln_status_free(status);
  }
  unlink(fifo.c_str());
}

TEST(CompareTest, TolerancesAndMismatchReports) {
  HostTensor expected = Parse("2x2xf32=1,2,3,4");
  HostTensor close = Parse("2x2xf32=1,2.000001,3,4");
  HostTensor far = Parse("2x2xf32=1,2,3.5,5");
  Tolerance tolerance = DefaultTolerance(KILN_ELEMENT_TYPE_F32);
  EXPECT_TRUE(CompareTensors(expected, close, tolerance).ok());
  CompareResult result = CompareTensors(expected, far, tolerance);
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.mismatch_count, 2u);
  ASSERT_EQ(result.first_mismatches.size(), 2u);
  EXPECT_EQ(result.first_mismatches[0].indices, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(result.first_mismatches[0].expected, "3");
  EXPECT_EQ(result.first_mismatches[0].actual, "3.5");
  EXPECT_EQ(FormatIndices(result.first_mismatches[1].indices), "[1, 1]");
  EXPECT_TRUE(CompareTensors(expected, far, {1.0, 0.0}).ok());
  EXPECT_EQ(CompareTensors(expected, Parse("4xf32=1,2,3,4"), tolerance)
                .type_mismatch,
            "expected 2x2xf32, got 4xf32");
  EXPECT_TRUE(CompareTensors(Parse("2xf32=nan,inf"), Parse("2xf32=nan,inf"),
                             tolerance)
                  .ok());
  EXPECT_FALSE(CompareTensors(Parse("f32=inf"), Parse("f32=-inf"), {1e9, 1e9})
                   .ok());
}

TEST(CompareTest, IntegersAreAlwaysExact) {
  Tolerance exact = DefaultTolerance(KILN_ELEMENT_TYPE_I64);
  EXPECT_EQ(exact.atol, 0.0);
  EXPECT_FALSE(CompareTensors(Parse("i64=9007199254740993"),
                              Parse("i64=9007199254740992"), exact)
                   .ok());
  // A tolerance is for floating-point rounding; it never excuses integers.
  EXPECT_FALSE(CompareTensors(Parse("i32=5"), Parse("i32=6"), {1.0, 1.0}).ok());
  EXPECT_TRUE(CompareTensors(Parse("i32=6"), Parse("i32=6"), {1.0, 1.0}).ok());
  EXPECT_FALSE(CompareTensors(Parse("2xi1=1,0"), Parse("2xi1=1,1"),
                              DefaultTolerance(KILN_ELEMENT_TYPE_I1))
                   .ok());
  EXPECT_GT(DefaultTolerance(KILN_ELEMENT_TYPE_BF16).rtol,
            DefaultTolerance(KILN_ELEMENT_TYPE_F32).rtol);
}

}  // namespace
}  // namespace tooling
}  // namespace kiln
