// Load-time parameters through the public API (kiln_parameters_t,
// kiln_module_load_*_with_parameters) on the local device: the test module
// whose rodata "bias" (2x3xf32) is a parameter, given by safetensors and .npz
// archives (files and memory) and by host tensors, and every error a user
// gets for missing, mistyped, duplicated or corrupt parameters.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "archive/test_archives.h"
#include "kiln/runtime.h"
#include "status_test_util.h"
#include "test_modules.h"

namespace kiln {
namespace {

using testing::StatusInfo;
using testing::Take;

std::string Floats(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()),
                     values.size() * sizeof(float));
}

const std::vector<float> kBias = {1, 2, 3, 4, 5, 6};
const std::vector<float> kExpected = {11, 22, 33, 44, 55, 66};

std::string BiasSafetensors() {
  return testing::Safetensors(
      R"({"bias": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},)"
      R"( "other": {"dtype": "I8", "shape": [1], "data_offsets": [24, 25]}})",
      Floats(kBias) + "x");
}

std::string BiasNpz(bool deflated) {
  return testing::Zip(
      {{"bias.npy", testing::Npy("<f4", "(2, 3)", Floats(kBias))}}, deflated);
}

class ParametersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kiln_instance_options_t options = {};
    options.ignore_plugin_environment = true;
    ASSERT_OK(kiln_instance_create(&options, &instance_));
    ASSERT_OK(kiln_device_create(instance_, "local", &device_));
    module_bytes_ = testing::Serialize(*testing::BuildParameterTestModule());
    ASSERT_OK(kiln_parameters_create(&parameters_));
  }
  void TearDown() override {
    kiln_parameters_release(parameters_);
    kiln_device_release(device_);
    kiln_instance_release(instance_);
  }

  StatusInfo Load(const kiln_parameters_t* parameters, kiln_module_t** out) {
    return Take(kiln_module_load_memory_with_parameters(
        device_, module_bytes_.data(), module_bytes_.size(), parameters, out));
  }

  StatusInfo AddArchive(const std::string& bytes, const char* name) {
    return Take(kiln_parameters_add_archive_memory(parameters_, bytes.data(),
                                                   bytes.size(), name));
  }

  // Calls add_bias(x) with x = 10, 20, ..., 60 and returns the result.
  std::vector<float> AddBias(kiln_module_t* module) {
    kiln_function_t* function = nullptr;
    EXPECT_OK(kiln_module_lookup_function(module, "add_bias", &function));
    std::vector<float> x = {10, 20, 30, 40, 50, 60};
    int64_t shape[] = {2, 3};
    kiln_buffer_view_t* input = nullptr;
    EXPECT_OK(kiln_buffer_view_create_from_host(
        device_, KILN_ELEMENT_TYPE_F32, 2, shape, x.data(),
        x.size() * sizeof(float), &input));
    kiln_buffer_view_t* output = nullptr;
    EXPECT_OK(kiln_function_call(function, 1, &input, 1, &output));
    std::vector<float> result(6);
    EXPECT_OK(kiln_buffer_view_read(output, result.data(),
                                    result.size() * sizeof(float)));
    kiln_buffer_view_release(output);
    kiln_buffer_view_release(input);
    return result;
  }

  kiln_instance_t* instance_ = nullptr;
  kiln_device_t* device_ = nullptr;
  kiln_parameters_t* parameters_ = nullptr;
  std::vector<uint8_t> module_bytes_;
};

TEST_F(ParametersTest, LoadsFromEachSource) {
  struct Source {
    const char* what;
    std::string archive;  // empty: a host tensor
  } sources[] = {{"safetensors", BiasSafetensors()},
                 {"stored npz", BiasNpz(false)},
                 {"deflated npz", BiasNpz(true)},
                 {"host tensor", ""}};
  for (const Source& source : sources) {
    SCOPED_TRACE(source.what);
    kiln_parameters_t* parameters = nullptr;
    ASSERT_OK(kiln_parameters_create(&parameters));
    if (source.archive.empty()) {
      int64_t shape[] = {2, 3};
      ASSERT_OK(kiln_parameters_add_tensor(parameters, "bias",
                                           KILN_ELEMENT_TYPE_F32, shape, 2,
                                           kBias.data(), 24));
    } else {
      ASSERT_OK(kiln_parameters_add_archive_memory(
          parameters, source.archive.data(), source.archive.size(), "p"));
    }
    kiln_module_t* module = nullptr;
    StatusInfo info = Load(parameters, &module);
    // The set is only read during the load.
    kiln_parameters_release(parameters);
    ASSERT_EQ(info.code, KILN_STATUS_OK) << info.message;
    EXPECT_EQ(AddBias(module), kExpected);
    kiln_module_release(module);
  }
}

TEST_F(ParametersTest, LoadsFromArchiveFiles) {
  char path[] = "/tmp/kiln_parameters_test_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::string bytes = BiasNpz(true);
  ASSERT_TRUE(testing::WriteFileBytes(
      path, std::vector<uint8_t>(bytes.begin(), bytes.end())));
  EXPECT_OK(kiln_parameters_add_archive_file(parameters_, path));
  EXPECT_EQ(kiln_parameters_count(parameters_), 1u);
  std::string module_path = std::string(path) + ".vmfb";
  ASSERT_TRUE(testing::WriteFileBytes(module_path, module_bytes_));
  kiln_module_t* module = nullptr;
  ASSERT_OK(kiln_module_load_file_with_parameters(device_, module_path.c_str(),
                                                  parameters_, &module));
  EXPECT_EQ(AddBias(module), kExpected);
  kiln_module_release(module);
  std::remove(path);
  std::remove(module_path.c_str());

  StatusInfo info = Take(
      kiln_parameters_add_archive_file(parameters_, "/no/such/p.safetensors"));
  EXPECT_EQ(info.code, KILN_STATUS_NOT_FOUND) << info.message;
  EXPECT_NE(info.message.find("/no/such/p.safetensors"), std::string::npos);
  info = Take(kiln_parameters_add_archive_file(parameters_, "/tmp"));
  EXPECT_EQ(info.code, KILN_STATUS_INVALID_ARGUMENT) << info.message;
}

TEST_F(ParametersTest, MissingParametersAreFailedPrecondition) {
  kiln_module_t* module = nullptr;
  StatusInfo info = Load(nullptr, &module);
  EXPECT_EQ(info.code, KILN_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(info.message.find("needs 1 load-time parameter, the first "
                              "'bias' (2x3xf32), and none were given"),
            std::string::npos)
      << info.message;
  EXPECT_EQ(module, nullptr);
  info = Take(kiln_module_load_memory(device_, module_bytes_.data(),
                                      module_bytes_.size(), &module));
  EXPECT_EQ(info.code, KILN_STATUS_FAILED_PRECONDITION) << info.message;
}

TEST_F(ParametersTest, AbsentNameIsNotFoundListingWhatIsThere) {
  int64_t shape[] = {3};
  ASSERT_OK(kiln_parameters_add_tensor(parameters_, "weights",
                                       KILN_ELEMENT_TYPE_F32, shape, 1,
                                       kBias.data(), 12));
  kiln_module_t* module = nullptr;
  StatusInfo info = Load(parameters_, &module);
  EXPECT_EQ(info.code, KILN_STATUS_NOT_FOUND);
  EXPECT_NE(info.message.find("needs parameter 'bias' (2x3xf32), which no "
                              "parameter given has; the parameters given "
                              "have: 'weights'"),
            std::string::npos)
      << info.message;
}

TEST_F(ParametersTest, WrongTypeOrShapeIsInvalidArgument) {
  int64_t wrong_shape[] = {3, 2};
  ASSERT_OK(kiln_parameters_add_tensor(parameters_, "bias",
                                       KILN_ELEMENT_TYPE_F32, wrong_shape, 2,
                                       kBias.data(), 24));
  kiln_module_t* module = nullptr;
  StatusInfo info = Load(parameters_, &module);
  EXPECT_EQ(info.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("parameter 'bias' of module '<memory>': "
                              "expected 2x3xf32, found F32 [3, 2] in tensor "
                              "added as 'bias'"),
            std::string::npos)
      << info.message;

  kiln_parameters_t* f16 = nullptr;
  ASSERT_OK(kiln_parameters_create(&f16));
  std::string archive = testing::Zip(
      {{"bias.npy", testing::Npy("<f2", "(2, 3)", std::string(12, '\0'))}},
      false);
  ASSERT_OK(kiln_parameters_add_archive_memory(f16, archive.data(),
                                               archive.size(), "half.npz"));
  info = Load(f16, &module);
  kiln_parameters_release(f16);
  EXPECT_EQ(info.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("expected 2x3xf32, found F16 [2, 3] in archive "
                              "'half.npz'"),
            std::string::npos)
      << info.message;
}

TEST_F(ParametersTest, SafetensorsSizeMismatchIsInvalidArgument) {
  ASSERT_EQ(AddArchive(testing::Safetensors(R"({"bias": {"dtype": "F32",)"
                                            R"( "shape": [2, 3],)"
                                            R"( "data_offsets": [0, 20]}})",
                                            Floats(kBias)),
                       "short.safetensors")
                .code,
            KILN_STATUS_OK);
  kiln_module_t* module = nullptr;
  StatusInfo info = Load(parameters_, &module);
  EXPECT_EQ(info.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("archive 'short.safetensors' holds 20 bytes "
                              "for it; 2x3xf32 needs 24"),
            std::string::npos)
      << info.message;
}

TEST_F(ParametersTest, CorruptArchivesAreRefusedWhenAdded) {
  std::string npz = BiasNpz(false);
  npz[npz.find("NUMPY") + 70] ^= 0x40;  // a data byte: the CRC catches it
  StatusInfo info = AddArchive(npz, "bad.npz");
  EXPECT_EQ(info.code, KILN_STATUS_DATA_LOSS);
  EXPECT_NE(info.message.find("parameter archive 'bad.npz' is not a valid "
                              ".npz archive: member 'bias.npy': its CRC-32 "
                              "does not match"),
            std::string::npos)
      << info.message;
  info = AddArchive("garbage!", "garbage.safetensors");
  EXPECT_EQ(info.code, KILN_STATUS_DATA_LOSS);
  EXPECT_NE(info.message.find("'garbage.safetensors' is not a valid "
                              "safetensors file"),
            std::string::npos)
      << info.message;
  // Every truncation is refused with a message, never a crash.
  std::string good = BiasSafetensors();
  for (size_t size = 0; size < good.size(); ++size) {
    EXPECT_NE(AddArchive(good.substr(0, size), "cut").code, KILN_STATUS_OK)
        << size;
  }
  EXPECT_EQ(kiln_parameters_count(parameters_), 0u);
}

TEST_F(ParametersTest, NamesAreGivenOnce) {
  ASSERT_EQ(AddArchive(BiasSafetensors(), "a.safetensors").code,
            KILN_STATUS_OK);
  StatusInfo info = AddArchive(BiasNpz(false), "b.npz");
  EXPECT_EQ(info.code, KILN_STATUS_ALREADY_EXISTS);
  EXPECT_NE(info.message.find("parameter 'bias' of archive 'b.npz' is also "
                              "in archive 'a.safetensors'"),
            std::string::npos)
      << info.message;
  int64_t shape[] = {2, 3};
  info = Take(kiln_parameters_add_tensor(
      parameters_, "bias", KILN_ELEMENT_TYPE_F32, shape, 2, kBias.data(), 24));
  EXPECT_EQ(info.code, KILN_STATUS_ALREADY_EXISTS) << info.message;
  // The failed adds left the set as it was.
  EXPECT_EQ(kiln_parameters_count(parameters_), 2u);
}

TEST_F(ParametersTest, AddTensorChecksItsArguments) {
  int64_t shape[] = {2, 3};
  StatusInfo info = Take(kiln_parameters_add_tensor(
      parameters_, "bias", KILN_ELEMENT_TYPE_F32, shape, 2, kBias.data(), 20));
  EXPECT_EQ(info.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("needs 24 bytes of data, got 20"),
            std::string::npos)
      << info.message;
  info = Take(kiln_parameters_add_tensor(parameters_, "", KILN_ELEMENT_TYPE_F32,
                                         shape, 2, kBias.data(), 24));
  EXPECT_EQ(info.code, KILN_STATUS_INVALID_ARGUMENT) << info.message;
  info = Take(kiln_parameters_add_tensor(parameters_, "x",
                                         // In the enum's range (C++ may load it), not a type.
                                         static_cast<kiln_element_type_t>(15),
                                         shape, 2, kBias.data(), 24));
  EXPECT_EQ(info.code, KILN_STATUS_INVALID_ARGUMENT) << info.message;
  int64_t negative[] = {-1};
  info = Take(kiln_parameters_add_tensor(
      parameters_, "x", KILN_ELEMENT_TYPE_F32, negative, 1, kBias.data(), 0));
  EXPECT_EQ(info.code, KILN_STATUS_INVALID_ARGUMENT) << info.message;
  EXPECT_EQ(kiln_parameters_count(parameters_), 0u);
}

TEST_F(ParametersTest, UnusedTensorsAreIgnoredAndPlainModulesLoad) {
  // A module without parameters loads with a set, and a set may hold
  // tensors a module does not name.
  ASSERT_EQ(AddArchive(BiasSafetensors(), "p").code, KILN_STATUS_OK);
  std::vector<uint8_t> plain = testing::TestModuleBytes();
  kiln_module_t* module = nullptr;
  ASSERT_OK(kiln_module_load_memory_with_parameters(
      device_, plain.data(), plain.size(), parameters_, &module));
  EXPECT_EQ(AddBias(module), (std::vector<float>{20, 40, 60, 80, 100, 120}));
  kiln_module_release(module);
}

}  // namespace
}  // namespace kiln
