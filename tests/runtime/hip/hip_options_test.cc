// Parts of the hip driver that need no GPU, compiled in directly (the
// driver creation they sit behind fails without one): device option parsing
// (URI query over environment defaults) and loading of the collective
// library (NCCL/RCCL), with its errors.

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "drivers/hip/hip_options.h"
#include "drivers/hip/nccl_library.h"
#include "drivers/hip/status_util.h"
#include "kiln/hal/driver_abi.h"
#include "status_test_util.h"

namespace kiln::hip {
namespace {

using kiln::testing::TakeMessage;

class HipOptionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setHostApi(kiln_hal_host_api());
    for (const char* name :
         {"KILN_HIP_GRAPHS", "KILN_HIP_MEMORY_POOLS", "KILN_HIP_INJECT_FAILURE",
          "KILN_HIP_COLLECTIVE_CHECKS", "KILN_HIP_PEER_ACCESS",
          KILN_HIP_NCCL_LIBRARY_ENV, KILN_HIP_RCCL_LIBRARY_ENV})
      unsetenv(name);
  }
};

TEST_F(HipOptionsTest, DefaultsWithoutEnvironment) {
  DeviceOptions options;
  options.graphs = false;  // overwritten by the defaults
  ASSERT_EQ(readEnvironmentOptions(&options), nullptr);
  EXPECT_TRUE(options.graphs);
  EXPECT_TRUE(options.memoryPools);
  EXPECT_EQ(options.injectFailureEvery, 0u);
  EXPECT_FALSE(options.collectiveChecks);
  EXPECT_TRUE(options.peerAccess);
}

TEST_F(HipOptionsTest, EnvironmentGivesTheDefaults) {
  setenv("KILN_HIP_GRAPHS", "0", 1);
  setenv("KILN_HIP_INJECT_FAILURE", "7", 1);
  setenv("KILN_HIP_PEER_ACCESS", "off", 1);
  DeviceOptions options;
  ASSERT_EQ(readEnvironmentOptions(&options), nullptr);
  EXPECT_FALSE(options.graphs);
  EXPECT_EQ(options.injectFailureEvery, 7u);
  EXPECT_FALSE(options.peerAccess);
  EXPECT_TRUE(options.memoryPools);
}

TEST_F(HipOptionsTest, BadEnvironmentValueNamesTheVariable) {
  setenv("KILN_HIP_INJECT_FAILURE", "often", 1);
  DeviceOptions options;
  kiln_status_t status = readEnvironmentOptions(&options);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT);
  std::string text = TakeMessage(status);
  EXPECT_NE(text.find("$KILN_HIP_INJECT_FAILURE"), std::string::npos) << text;
  EXPECT_NE(text.find("often"), std::string::npos) << text;
}

TEST_F(HipOptionsTest, QueryOverridesTheDefaults) {
  DeviceOptions options;
  options.injectFailureEvery = 5;
  ASSERT_EQ(parseDeviceOptions("graphs=0&inject_failure=3&memory_pools=false&"
                               "collective_checks=no&peer_access=1&"
                               "inject_capture_failure=7&logical=yes",
                               &options),
            nullptr);
  EXPECT_TRUE(options.logical);
  EXPECT_FALSE(options.graphs);
  EXPECT_EQ(options.injectFailureEvery, 3u);
  EXPECT_EQ(options.injectCaptureFailureEvery, 7u);
  EXPECT_FALSE(options.memoryPools);
  EXPECT_FALSE(options.collectiveChecks);
  EXPECT_TRUE(options.peerAccess);
}

TEST_F(HipOptionsTest, EmptyQueryAndEmptyItemsChangeNothing) {
  DeviceOptions options;
  options.graphs = false;
  ASSERT_EQ(parseDeviceOptions("", &options), nullptr);
  ASSERT_EQ(parseDeviceOptions("&&", &options), nullptr);
  EXPECT_FALSE(options.graphs);
}

TEST_F(HipOptionsTest, UnknownKeyListsTheAcceptedOnes) {
  DeviceOptions options;
  kiln_status_t status = parseDeviceOptions("graphs=1&turbo=1", &options);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT);
  std::string text = TakeMessage(status);
  EXPECT_NE(text.find("'turbo'"), std::string::npos) << text;
  for (const char* key :
       {"graphs", "memory_pools", "inject_failure", "inject_capture_failure",
        "collective_checks", "peer_access", "memory_limit", "spin_wait_us",
        "logical"})
    EXPECT_NE(text.find(key), std::string::npos) << key << ": " << text;
}

TEST_F(HipOptionsTest, PlatformIsNotADeviceOption) {
  DeviceOptions options;
  kiln_status_t status = parseDeviceOptions("platform=amd", &options);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(TakeMessage(status).find("$KILN_HIP_PLATFORM"), std::string::npos);
}

TEST_F(HipOptionsTest, BadValuesAreNamed) {
  for (const char* query :
       {"graphs=2", "graphs=", "inject_failure=-1", "inject_failure=1x",
        "peer_access=maybe", "logical=2",
        "inject_failure=99999999999999999999999", "inject_capture_failure=x"}) {
    DeviceOptions options;
    kiln_status_t status = parseDeviceOptions(query, &options);
    EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT) << query;
    std::string text = TakeMessage(status);
    EXPECT_NE(text.find("bad value"), std::string::npos) << text;
  }
  DeviceOptions options;
  kiln_status_t status = parseDeviceOptions("graphs", &options);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(TakeMessage(status).find("not key=value"), std::string::npos);
}

TEST_F(HipOptionsTest, MissingNcclIsNamedWithItsVariable) {
  setenv(KILN_HIP_NCCL_LIBRARY_ENV, "/nonexistent/libnccl.so.2", 1);
  std::shared_ptr<const NcclLibrary> library;
  kiln_status_t status = loadNcclLibrary("nvidia", &library);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_UNAVAILABLE);
  std::string text = TakeMessage(status);
  EXPECT_NE(text.find("/nonexistent/libnccl.so.2"), std::string::npos) << text;
  EXPECT_NE(text.find("$KILN_HIP_NCCL_LIBRARY"), std::string::npos) << text;
  EXPECT_EQ(library, nullptr);
}

TEST_F(HipOptionsTest, MissingRcclNamesEveryPathTried) {
  setenv(KILN_HIP_RCCL_LIBRARY_ENV, "/nonexistent/librccl.so", 1);
  std::shared_ptr<const NcclLibrary> library;
  kiln_status_t status = loadNcclLibrary("amd", &library);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_UNAVAILABLE);
  std::string text = TakeMessage(status);
  EXPECT_NE(text.find("/nonexistent/librccl.so"), std::string::npos) << text;
  EXPECT_NE(text.find("$KILN_HIP_RCCL_LIBRARY"), std::string::npos) << text;
  unsetenv(KILN_HIP_RCCL_LIBRARY_ENV);
  status = loadNcclLibrary("amd", &library);
  if (!status) GTEST_SKIP() << "RCCL is installed here: " << library->path;
  text = TakeMessage(status);
  EXPECT_NE(text.find("librccl.so.1"), std::string::npos) << text;
  EXPECT_NE(text.find("'librccl.so'"), std::string::npos) << text;
}

TEST_F(HipOptionsTest, ALibraryThatIsNotNcclIsRefused) {
  // libm loads everywhere and has none of NCCL's functions.
  setenv(KILN_HIP_NCCL_LIBRARY_ENV, "libm.so.6", 1);
  std::shared_ptr<const NcclLibrary> library;
  kiln_status_t status = loadNcclLibrary("nvidia", &library);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_UNAVAILABLE);
  std::string text = TakeMessage(status);
  EXPECT_NE(text.find("libm.so.6"), std::string::npos) << text;
  EXPECT_NE(text.find("ncclCommInitRank"), std::string::npos) << text;
}

TEST_F(HipOptionsTest, InstalledNcclLoadsWithItsVersion) {
  std::shared_ptr<const NcclLibrary> library;
  kiln_status_t status = loadNcclLibrary("nvidia", &library);
  if (status) GTEST_SKIP() << "no NCCL here: " << TakeMessage(status);
  EXPECT_GE(library->version, 20000) << library->versionText();
  EXPECT_NE(library->ncclAllReduce, nullptr);
}

}  // namespace
}  // namespace kiln::hip
