// Loading driver plugins from shared libraries: errors for a missing file, a
// library without the entry symbol and an ABI mismatch; a working plugin by
// path and through $KILN_HAL_DRIVER_PLUGINS.

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "kiln/hal/driver_abi.h"
#include "kiln/hal/hal.h"

namespace {

std::string message(kiln_status_t status) {
  return status ? kiln_status_message(status) : "OK";
}

class PluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kiln_status_t status = kiln_hal_driver_registry_create(&registry);
    ASSERT_EQ(status, nullptr);
  }
  void TearDown() override {
    unsetenv(KILN_HAL_DRIVER_PLUGINS_ENV);
    kiln_hal_driver_registry_release(registry);
  }
  // Loads |path| and returns the status code, saving the message.
  kiln_status_code_t load(const char* path) {
    kiln_status_t status = kiln_hal_driver_registry_load_plugin(registry, path);
    lastMessage = message(status);
    return kiln_status_consume_code(status);
  }
  kiln_hal_driver_registry_t* registry = nullptr;
  std::string lastMessage;
};

TEST_F(PluginTest, MissingFileIsNotFoundNamingThePath) {
  EXPECT_EQ(load("/nonexistent/libkiln_hal_nothing.so"), KILN_STATUS_NOT_FOUND);
  EXPECT_NE(lastMessage.find("/nonexistent/libkiln_hal_nothing.so"),
            std::string::npos)
      << lastMessage;
  EXPECT_EQ(kiln_hal_driver_registry_driver_count(registry), 0u);
}

TEST_F(PluginTest, LibraryWithoutEntrySymbolIsRejected) {
  EXPECT_EQ(load(KILN_TEST_PLUGIN_NO_ENTRY), KILN_STATUS_NOT_FOUND);
  EXPECT_NE(lastMessage.find(KILN_HAL_DRIVER_PLUGIN_QUERY_SYMBOL),
            std::string::npos)
      << lastMessage;
  EXPECT_NE(lastMessage.find("not a Kiln HAL driver plugin"), std::string::npos);
}

TEST_F(PluginTest, AbiVersionMismatchIsIncompatible) {
  EXPECT_EQ(load(KILN_TEST_PLUGIN_BAD_ABI), KILN_STATUS_INCOMPATIBLE);
  std::string plugin = "version " + std::to_string(KILN_HAL_DRIVER_ABI_VERSION + 41);
  std::string runtime = "version " + std::to_string(KILN_HAL_DRIVER_ABI_VERSION);
  EXPECT_NE(lastMessage.find(plugin), std::string::npos) << lastMessage;
  EXPECT_NE(lastMessage.find(runtime), std::string::npos) << lastMessage;
  EXPECT_EQ(kiln_hal_driver_registry_driver_count(registry), 0u);
}

TEST_F(PluginTest, WorkingPluginRegistersItsDriver) {
  ASSERT_EQ(load(KILN_TEST_PLUGIN_GOOD), KILN_STATUS_OK) << lastMessage;
  ASSERT_EQ(kiln_hal_driver_registry_driver_count(registry), 1u);
  kiln_hal_driver_info_t info;
  kiln_status_t status = kiln_hal_driver_registry_driver_info(registry, 0, &info);
  ASSERT_EQ(status, nullptr);
  EXPECT_STREQ(info.name, "cts_fake");
  EXPECT_STREQ(info.plugin_path, KILN_TEST_PLUGIN_GOOD);

  kiln_hal_driver_t* driver = nullptr;
  ASSERT_EQ(kiln_hal_driver_registry_get_driver(registry, "cts_fake", &driver),
            nullptr);
  kiln_hal_device_info_t infos[4];
  uint32_t count = 0;
  ASSERT_EQ(kiln_hal_driver_enumerate_devices(driver, 4, infos, &count), nullptr);
  EXPECT_EQ(count, 2u);
  EXPECT_STREQ(infos[1].name, "fake device 1");
  kiln_hal_driver_release(driver);

  // Statuses made by the plugin through the host API travel back intact.
  kiln_hal_device_t* device = nullptr;
  status = kiln_hal_driver_registry_create_device(registry, "cts_fake://1", &device);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_UNAVAILABLE);
  EXPECT_EQ(message(status), "fake device 1 has no hardware behind it");
  kiln_status_free(status);
  status = kiln_hal_driver_registry_create_device(registry, "cts_fake://2", &device);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_NOT_FOUND);
  kiln_status_free(status);

  // Loading it again would register a second driver of the same name.
  EXPECT_EQ(load(KILN_TEST_PLUGIN_GOOD), KILN_STATUS_ALREADY_EXISTS);
  EXPECT_NE(lastMessage.find("cts_fake"), std::string::npos);
}

TEST_F(PluginTest, EnvironmentVariableListsPlugins) {
  unsetenv(KILN_HAL_DRIVER_PLUGINS_ENV);
  EXPECT_EQ(kiln_hal_driver_registry_load_plugins_from_env(registry), nullptr);
  std::string list = std::string("::") + KILN_TEST_PLUGIN_GOOD + ":";
  setenv(KILN_HAL_DRIVER_PLUGINS_ENV, list.c_str(), 1);
  kiln_status_t status = kiln_hal_driver_registry_load_plugins_from_env(registry);
  EXPECT_EQ(status, nullptr) << message(status);
  kiln_status_free(status);
  EXPECT_EQ(kiln_hal_driver_registry_driver_count(registry), 1u);
}

TEST_F(PluginTest, EnvironmentErrorsNameTheVariableAndPlugin) {
  std::string list = std::string(KILN_TEST_PLUGIN_BAD_ABI);
  setenv(KILN_HAL_DRIVER_PLUGINS_ENV, list.c_str(), 1);
  kiln_status_t status = kiln_hal_driver_registry_load_plugins_from_env(registry);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INCOMPATIBLE);
  EXPECT_NE(message(status).find(KILN_HAL_DRIVER_PLUGINS_ENV), std::string::npos);
  EXPECT_NE(message(status).find(KILN_TEST_PLUGIN_BAD_ABI), std::string::npos);
  kiln_status_free(status);
}

TEST_F(PluginTest, PluginDriversCoexistWithBuiltins) {
  ASSERT_EQ(kiln_hal_driver_registry_register_builtin_drivers(registry), nullptr);
  ASSERT_EQ(load(KILN_TEST_PLUGIN_GOOD), KILN_STATUS_OK) << lastMessage;
  EXPECT_EQ(kiln_hal_driver_registry_driver_count(registry), 2u);
  kiln_hal_device_t* device = nullptr;
  kiln_status_t status =
      kiln_hal_driver_registry_create_device(registry, "local", &device);
  ASSERT_EQ(status, nullptr) << message(status);
  kiln_hal_device_release(device);
}

}  // namespace
