// Driver registry: built-in drivers, device URIs, in-process plugins,
// local device configuration.

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "kiln/hal/driver_abi.h"
#include "kiln/hal/hal.h"
#include "scoped_env.h"

namespace {

std::string message(kiln_status_t status) {
  std::string text = status ? kiln_status_message(status) : "OK";
  return text;
}

#define EXPECT_STATUS(code, expr)                                       \
  do {                                                                  \
    kiln_status_t status_ = (expr);                                     \
    EXPECT_EQ(kiln_status_code(status_), (code)) << message(status_);   \
    kiln_status_free(status_);                                          \
  } while (0)

#define ASSERT_OK(expr)                                                 \
  do {                                                                  \
    kiln_status_t status_ = (expr);                                     \
    std::string text_ = message(status_);                               \
    kiln_status_free(status_);                                          \
    ASSERT_TRUE(status_ == nullptr) << #expr << ": " << text_;          \
  } while (0)

using kiln::testing::ScopedEnv;

class RegistryTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK(kiln_hal_driver_registry_create(&registry)); }
  void TearDown() override { kiln_hal_driver_registry_release(registry); }
  kiln_hal_driver_registry_t* registry = nullptr;
};

TEST_F(RegistryTest, EmptyRegistryNamesNoDrivers) {
  EXPECT_EQ(kiln_hal_driver_registry_driver_count(registry), 0u);
  kiln_hal_device_t* device = nullptr;
  kiln_status_t status =
      kiln_hal_driver_registry_create_device(registry, "local", &device);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_NOT_FOUND);
  EXPECT_NE(message(status).find("none"), std::string::npos) << message(status);
  kiln_status_free(status);
  EXPECT_EQ(device, nullptr);
}

TEST_F(RegistryTest, BuiltinsRegisterLocalOnce) {
  ASSERT_OK(kiln_hal_driver_registry_register_builtin_drivers(registry));
  ASSERT_OK(kiln_hal_driver_registry_register_builtin_drivers(registry));
  ASSERT_EQ(kiln_hal_driver_registry_driver_count(registry), 1u);
  kiln_hal_driver_info_t info;
  ASSERT_OK(kiln_hal_driver_registry_driver_info(registry, 0, &info));
  EXPECT_STREQ(info.name, "local");
  EXPECT_STREQ(info.plugin_path, "");
  EXPECT_STRNE(info.description, "");
  EXPECT_STATUS(KILN_STATUS_OUT_OF_RANGE,
                kiln_hal_driver_registry_driver_info(registry, 1, &info));
}

TEST_F(RegistryTest, LocalDriverEnumeratesItsDevices) {
  ScopedEnv env("KILN_LOCAL_DEVICE_COUNT", nullptr);
  ASSERT_OK(kiln_hal_driver_registry_register_builtin_drivers(registry));
  kiln_hal_driver_t* driver = nullptr;
  ASSERT_OK(kiln_hal_driver_registry_get_driver(registry, "local", &driver));
  EXPECT_STREQ(kiln_hal_driver_name(driver), "local");
  kiln_hal_driver_t* again = nullptr;
  ASSERT_OK(kiln_hal_driver_registry_get_driver(registry, "local", &again));
  EXPECT_EQ(again, driver);  // one driver per registry
  kiln_hal_driver_release(again);
  uint32_t count = 0;
  ASSERT_OK(kiln_hal_driver_enumerate_devices(driver, 0, nullptr, &count));
  EXPECT_EQ(count, 4u);
  kiln_hal_device_info_t infos[8];
  ASSERT_OK(kiln_hal_driver_enumerate_devices(driver, 8, infos, &count));
  for (uint32_t i = 0; i < count; ++i) {
    EXPECT_EQ(infos[i].ordinal, i);
    EXPECT_NE(std::string(infos[i].name).find("local"), std::string::npos);
  }
  kiln_hal_driver_release(driver);
}

TEST_F(RegistryTest, DeviceUris) {
  ScopedEnv env("KILN_LOCAL_DEVICE_COUNT", nullptr);
  ASSERT_OK(kiln_hal_driver_registry_register_builtin_drivers(registry));
  for (const char* uri : {"local", "local://0", "local://3", "local://"}) {
    kiln_hal_device_t* device = nullptr;
    ASSERT_OK(kiln_hal_driver_registry_create_device(registry, uri, &device));
    EXPECT_STREQ(kiln_hal_device_driver_name(device), "local");
    kiln_hal_device_info_t info;
    ASSERT_OK(kiln_hal_device_info(device, &info));
    EXPECT_EQ(info.ordinal, std::string(uri) == "local://3" ? 3u : 0u) << uri;
    kiln_hal_device_release(device);
  }
  kiln_hal_device_t* device = nullptr;
  kiln_status_t status =
      kiln_hal_driver_registry_create_device(registry, "local://4", &device);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_NOT_FOUND);
  EXPECT_NE(message(status).find("local://0 .. local://3"), std::string::npos)
      << message(status);
  kiln_status_free(status);
  status = kiln_hal_driver_registry_create_device(registry, "vulkan://0", &device);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_NOT_FOUND);
  EXPECT_NE(message(status).find("'vulkan'"), std::string::npos);
  EXPECT_NE(message(status).find("'local'"), std::string::npos) << message(status);
  kiln_status_free(status);
  for (const char* bad : {"local://x", "local://-1", "://0", "",
                          "local://99999999999"}) {
    EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                  kiln_hal_driver_registry_create_device(registry, bad, &device));
  }
  EXPECT_EQ(device, nullptr);
}

TEST_F(RegistryTest, DeviceOptionsReachTheDriver) {
  ASSERT_OK(kiln_hal_driver_registry_register_builtin_drivers(registry));
  kiln_hal_device_t* device = nullptr;
  // The local driver takes no options; it names the ones it was given.
  kiln_status_t status = kiln_hal_driver_registry_create_device(
      registry, "local://1?workers=3", &device);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message(status).find("workers=3"), std::string::npos)
      << message(status);
  kiln_status_free(status);
  EXPECT_EQ(device, nullptr);
  // An empty query is no options.
  ASSERT_OK(kiln_hal_driver_registry_create_device(registry, "local://1?",
                                                   &device));
  kiln_hal_device_release(device);
}

TEST_F(RegistryTest, LocalDeviceCountComesFromTheEnvironment) {
  ScopedEnv env("KILN_LOCAL_DEVICE_COUNT", "2");
  ASSERT_OK(kiln_hal_driver_registry_register_builtin_drivers(registry));
  kiln_hal_device_t* device = nullptr;
  ASSERT_OK(kiln_hal_driver_registry_create_device(registry, "local://1", &device));
  kiln_hal_device_release(device);
  EXPECT_STATUS(KILN_STATUS_NOT_FOUND, kiln_hal_driver_registry_create_device(
                                           registry, "local://2", &device));
}

TEST_F(RegistryTest, BadLocalConfigurationIsAnError) {
  ScopedEnv env("KILN_LOCAL_DEVICE_COUNT", "0");
  ASSERT_OK(kiln_hal_driver_registry_register_builtin_drivers(registry));
  kiln_hal_driver_t* driver = nullptr;
  kiln_status_t status =
      kiln_hal_driver_registry_get_driver(registry, "local", &driver);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message(status).find("KILN_LOCAL_DEVICE_COUNT"), std::string::npos);
  kiln_status_free(status);
}

TEST_F(RegistryTest, SeveralLocalDevicesWorkSideBySide) {
  ASSERT_OK(kiln_hal_driver_registry_register_builtin_drivers(registry));
  kiln_hal_device_t* devices[2] = {};
  ASSERT_OK(kiln_hal_driver_registry_create_device(registry, "local://0", &devices[0]));
  ASSERT_OK(kiln_hal_driver_registry_create_device(registry, "local://1", &devices[1]));
  // A semaphore of one device gates work on the other.
  kiln_hal_semaphore_t* gate = nullptr;
  kiln_hal_semaphore_t* done = nullptr;
  ASSERT_OK(kiln_hal_semaphore_create(devices[0], 0, &gate));
  ASSERT_OK(kiln_hal_semaphore_create(devices[1], 0, &done));
  uint64_t one = 1;
  kiln_hal_semaphore_list_t wait = {1, &gate, &one};
  kiln_hal_semaphore_list_t signal = {1, &done, &one};
  ASSERT_OK(kiln_hal_device_queue_execute(devices[1], KILN_HAL_QUEUE_AFFINITY_ANY,
                                          &wait, &signal, 0, nullptr, nullptr));
  kiln_hal_semaphore_list_t signalGate = {1, &gate, &one};
  ASSERT_OK(kiln_hal_device_queue_execute(devices[0], KILN_HAL_QUEUE_AFFINITY_ANY,
                                          nullptr, &signalGate, 0, nullptr,
                                          nullptr));
  ASSERT_OK(kiln_hal_semaphore_wait(done, 1, KILN_DURATION_INFINITE));
  kiln_hal_semaphore_release(gate);
  kiln_hal_semaphore_release(done);
  kiln_hal_device_release(devices[0]);
  kiln_hal_device_release(devices[1]);
}

// In-process plugins through kiln_hal_driver_registry_register_plugin.

kiln_status_t unusedCreate(const kiln_hal_driver_factory_t*,
                           const kiln_hal_host_api_t*, kiln_hal_driver_t**) {
  return kiln_make_status(KILN_STATUS_UNAVAILABLE, "not for use");
}

const kiln_hal_driver_factory_t kDuplicateLocal[] = {
    {"local", "a second local", unusedCreate, nullptr}};
const kiln_hal_driver_factory_t kBadName[] = {
    {"Bad Name", "spaces and capitals", unusedCreate, nullptr}};
const kiln_hal_driver_factory_t kUnusable[] = {
    {"unusable", "creation fails", unusedCreate, nullptr}};

uint32_t queryDuplicate(uint32_t, const kiln_hal_host_api_t*,
                        kiln_hal_driver_plugin_t* out) {
  *out = {1, kDuplicateLocal};
  return KILN_HAL_DRIVER_ABI_VERSION;
}
uint32_t queryBadName(uint32_t, const kiln_hal_host_api_t*,
                      kiln_hal_driver_plugin_t* out) {
  *out = {1, kBadName};
  return KILN_HAL_DRIVER_ABI_VERSION;
}
uint32_t queryUnusable(uint32_t, const kiln_hal_host_api_t* host,
                       kiln_hal_driver_plugin_t* out) {
  EXPECT_EQ(host->abi_version, KILN_HAL_DRIVER_ABI_VERSION);
  *out = {1, kUnusable};
  return KILN_HAL_DRIVER_ABI_VERSION;
}
uint32_t queryOldVersion(uint32_t, const kiln_hal_host_api_t*,
                         kiln_hal_driver_plugin_t*) {
  return 0;
}
uint32_t queryNothing(uint32_t, const kiln_hal_host_api_t*,
                      kiln_hal_driver_plugin_t* out) {
  *out = {0, nullptr};
  return KILN_HAL_DRIVER_ABI_VERSION;
}

TEST_F(RegistryTest, InProcessPluginChecks) {
  ASSERT_OK(kiln_hal_driver_registry_register_builtin_drivers(registry));
  EXPECT_STATUS(KILN_STATUS_ALREADY_EXISTS,
                kiln_hal_driver_registry_register_plugin(registry, queryDuplicate));
  EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                kiln_hal_driver_registry_register_plugin(registry, queryBadName));
  EXPECT_STATUS(KILN_STATUS_INCOMPATIBLE,
                kiln_hal_driver_registry_register_plugin(registry, queryOldVersion));
  EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                kiln_hal_driver_registry_register_plugin(registry, queryNothing));
  EXPECT_EQ(kiln_hal_driver_registry_driver_count(registry), 1u);
  ASSERT_OK(kiln_hal_driver_registry_register_plugin(registry, queryUnusable));
  EXPECT_EQ(kiln_hal_driver_registry_driver_count(registry), 2u);
  kiln_hal_device_t* device = nullptr;
  kiln_status_t status =
      kiln_hal_driver_registry_create_device(registry, "unusable", &device);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_UNAVAILABLE);
  EXPECT_NE(message(status).find("creating driver 'unusable'"), std::string::npos)
      << message(status);
  kiln_status_free(status);
}

TEST_F(RegistryTest, NullArgumentsAreErrors) {
  EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                kiln_hal_driver_registry_create(nullptr));
  EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                kiln_hal_driver_registry_create_device(registry, nullptr, nullptr));
  EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                kiln_hal_driver_registry_register_plugin(registry, nullptr));
  EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                kiln_hal_driver_registry_load_plugin(registry, nullptr));
}

}  // namespace
