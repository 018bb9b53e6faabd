// The hip driver's platform layer without a GPU, through the public plugin
// ABI only: the plugin loads, and each platform either finds a GPU or fails
// driver creation with UNAVAILABLE naming the library it tried and what it
// reported. The AMD case runs Debian's real libamdhip64 (HIP 5.2).

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "kiln/hal/hal.h"

namespace {

std::string message(kiln_status_t status) {
  return status ? kiln_status_message(status) : "OK";
}

class HipPlatformTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"KILN_HIP_PLATFORM", "KILN_HIP_AMD_LIBRARY",
                             "KILN_HIP_CUDA_LIBRARY", "KILN_HIP_INJECT_FAILURE"})
      unsetenv(name);
    ASSERT_EQ(kiln_hal_driver_registry_create(&registry), nullptr);
    // $KILN_HIP_PLUGIN_PATH overrides the build path (gpu_check.sh).
    const char* plugin = std::getenv("KILN_HIP_PLUGIN_PATH");
    kiln_status_t status = kiln_hal_driver_registry_load_plugin(
        registry, plugin && *plugin ? plugin : KILN_HIP_PLUGIN_PATH);
    ASSERT_EQ(status, nullptr) << message(status);
  }
  void TearDown() override {
    kiln_hal_driver_release(driver);
    kiln_hal_driver_registry_release(registry);
  }

  // Creates the hip driver; returns its status (owned by the caller).
  kiln_status_t createDriver() {
    return kiln_hal_driver_registry_get_driver(registry, "hip", &driver);
  }

  kiln_hal_driver_registry_t* registry = nullptr;
  kiln_hal_driver_t* driver = nullptr;
};

TEST_F(HipPlatformTest, PluginRegistersTheHipDriver) {
  ASSERT_EQ(kiln_hal_driver_registry_driver_count(registry), 1u);
  kiln_hal_driver_info_t info;
  ASSERT_EQ(kiln_hal_driver_registry_driver_info(registry, 0, &info), nullptr);
  EXPECT_STREQ(info.name, "hip");
  EXPECT_NE(std::string(info.plugin_path).find("libkiln_hal_hip"),
            std::string::npos);
}

TEST_F(HipPlatformTest, RealLibamdhip64LoadsAndReportsNoDeviceCleanly) {
  if (access("/usr/lib/x86_64-linux-gnu/libamdhip64.so.5", F_OK) != 0)
    GTEST_SKIP() << "Debian's libamdhip64 is not installed "
                    "(build_tools/setup.sh installs it)";
  setenv("KILN_HIP_PLATFORM", "amd", 1);
  setenv("KILN_HIP_AMD_LIBRARY", "libamdhip64.so.5", 1);
  kiln_status_t status = createDriver();
  if (!status) {
    uint32_t count = 0;
    EXPECT_EQ(kiln_hal_driver_enumerate_devices(driver, 0, nullptr, &count),
              nullptr);
    EXPECT_GT(count, 0u);
    GTEST_SKIP() << "this machine has an AMD GPU; nothing to check";
  }
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_UNAVAILABLE);
  std::string text = message(status);
  // It really loaded the library (its version is reported) and says why
  // there is no device.
  EXPECT_NE(text.find("libamdhip64.so.5"), std::string::npos) << text;
  EXPECT_NE(text.find("HIP 5."), std::string::npos) << text;
  EXPECT_NE(text.find("no AMD GPU"), std::string::npos) << text;
  kiln_status_free(status);
  EXPECT_EQ(driver, nullptr);
}

TEST_F(HipPlatformTest, MissingAmdLibraryIsNamed) {
  setenv("KILN_HIP_PLATFORM", "amd", 1);
  setenv("KILN_HIP_AMD_LIBRARY", "/nonexistent/libamdhip64.so", 1);
  kiln_status_t status = createDriver();
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_UNAVAILABLE);
  EXPECT_NE(message(status).find("/nonexistent/libamdhip64.so"),
            std::string::npos)
      << message(status);
  kiln_status_free(status);
}

TEST_F(HipPlatformTest, NvidiaWithoutGpuOrLibcudaIsAClearStatus) {
  setenv("KILN_HIP_PLATFORM", "nvidia", 1);
  kiln_status_t status = createDriver();
  if (!status) GTEST_SKIP() << "this machine has an NVIDIA GPU";
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_UNAVAILABLE);
  std::string text = message(status);
  EXPECT_NE(text.find("libcuda.so.1"), std::string::npos) << text;
  EXPECT_NE(text.find("NVIDIA platform"), std::string::npos) << text;
  kiln_status_free(status);
}

TEST_F(HipPlatformTest, MissingCudaLibraryIsNamed) {
  setenv("KILN_HIP_PLATFORM", "nvidia", 1);
  setenv("KILN_HIP_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  kiln_status_t status = createDriver();
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_UNAVAILABLE);
  EXPECT_NE(message(status).find("/nonexistent/libcuda.so.1"),
            std::string::npos)
      << message(status);
  kiln_status_free(status);
}

TEST_F(HipPlatformTest, ALibraryThatIsNotTheCudaDriverIsRefused) {
  // libm is loadable everywhere and has no cuGetProcAddress.
  setenv("KILN_HIP_PLATFORM", "nvidia", 1);
  setenv("KILN_HIP_CUDA_LIBRARY", "libm.so.6", 1);
  kiln_status_t status = createDriver();
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_UNAVAILABLE);
  EXPECT_NE(message(status).find("cuGetProcAddress"), std::string::npos)
      << message(status);
  kiln_status_free(status);
}

TEST_F(HipPlatformTest, AutoSelectionReportsBothPlatforms) {
  setenv("KILN_HIP_AMD_LIBRARY", "/nonexistent/libamdhip64.so", 1);
  setenv("KILN_HIP_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  kiln_status_t status = createDriver();
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_UNAVAILABLE);
  std::string text = message(status);
  EXPECT_NE(text.find("AMD platform"), std::string::npos) << text;
  EXPECT_NE(text.find("NVIDIA platform"), std::string::npos) << text;
  kiln_status_free(status);
  // The same through a device URI: what tools see.
  kiln_hal_device_t* device = nullptr;
  status = kiln_hal_driver_registry_create_device(registry, "hip://0", &device);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_UNAVAILABLE);
  kiln_status_free(status);
  EXPECT_EQ(device, nullptr);
}

TEST_F(HipPlatformTest, BadOptionsAreInvalidArguments) {
  setenv("KILN_HIP_PLATFORM", "intel", 1);
  kiln_status_t status = createDriver();
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message(status).find("intel"), std::string::npos);
  kiln_status_free(status);
  unsetenv("KILN_HIP_PLATFORM");
  setenv("KILN_HIP_INJECT_FAILURE", "often", 1);
  status = createDriver();
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT);
  kiln_status_free(status);
}

}  // namespace
