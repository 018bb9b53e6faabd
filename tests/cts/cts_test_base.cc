#include "cts_test_base.h"

#include <cctype>
#include <cstdlib>

namespace kiln::cts {

std::string consumeStatus(kiln_status_t status) {
  std::string text(kiln_status_format(status, nullptr, 0) + 1, '\0');
  kiln_status_format(status, text.data(), text.size());
  text.pop_back();
  kiln_status_free(status);
  return text;
}

std::vector<std::string> deviceUris() {
  const char* env = std::getenv("KILN_CTS_DEVICES");
  std::string list = env && *env ? env : KILN_CTS_DEFAULT_DEVICES;
  std::vector<std::string> uris;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find_first_of(",;", start);
    if (end == std::string::npos) end = list.size();
    if (end > start) uris.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return uris;
}

std::string uriTestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name;
  for (char c : info.param)
    name += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return name;
}

void CtsFixture::openDevice(const std::string& uri) {
  KILN_ASSERT_OK(kiln_hal_driver_registry_create(&registry));
  KILN_ASSERT_OK(kiln_hal_driver_registry_register_builtin_drivers(registry));
  const char* plugins = std::getenv(KILN_HAL_DRIVER_PLUGINS_ENV);
  if (plugins && *plugins) {
    KILN_ASSERT_OK(kiln_hal_driver_registry_load_plugins_from_env(registry));
  } else {
    // The plugins built with the suite (the hip driver, when enabled).
    std::string list = KILN_CTS_DEFAULT_PLUGINS;
    size_t start = 0;
    while (start < list.size()) {
      size_t end = list.find(':', start);
      if (end == std::string::npos) end = list.size();
      if (end > start)
        KILN_ASSERT_OK(kiln_hal_driver_registry_load_plugin(
            registry, list.substr(start, end - start).c_str()));
      start = end + 1;
    }
  }
  kiln_status_t status = kiln_hal_driver_registry_create_device(
      registry, uri.c_str(), &device);
  kiln_status_code_t code = kiln_status_code(status);
  if (code == KILN_STATUS_NOT_FOUND || code == KILN_STATUS_UNAVAILABLE) {
    GTEST_SKIP() << "device '" << uri
                 << "' is not available here: " << consumeStatus(status);
  }
  KILN_ASSERT_OK(status);
}

void CtsFixture::TearDown() {
  kiln_hal_device_release(device);
  kiln_hal_driver_registry_release(registry);
}

kiln_hal_buffer_t* CtsFixture::allocateBuffer(kiln_device_size_t size) {
  kiln_hal_buffer_params_t params = {};
  params.memory_type =
      KILN_HAL_MEMORY_TYPE_DEVICE_LOCAL | KILN_HAL_MEMORY_TYPE_HOST_VISIBLE;
  params.usage = KILN_HAL_BUFFER_USAGE_DEFAULT | KILN_HAL_BUFFER_USAGE_MAPPING;
  kiln_hal_buffer_t* buffer = nullptr;
  kiln_status_t status = kiln_hal_allocator_allocate_buffer(
      kiln_hal_device_allocator(device), &params, size, &buffer);
  if (status) ADD_FAILURE() << "allocate_buffer: " << consumeStatus(status);
  return buffer;
}

kiln_hal_semaphore_t* CtsFixture::createSemaphore(uint64_t initialValue) {
  kiln_hal_semaphore_t* semaphore = nullptr;
  kiln_status_t status =
      kiln_hal_semaphore_create(device, initialValue, &semaphore);
  if (status) ADD_FAILURE() << "semaphore_create: " << consumeStatus(status);
  return semaphore;
}

std::vector<uint8_t> CtsFixture::readBuffer(kiln_hal_buffer_t* buffer) {
  std::vector<uint8_t> bytes(size_t(kiln_hal_buffer_byte_length(buffer)));
  kiln_status_t status =
      kiln_hal_buffer_read(buffer, 0, bytes.data(), bytes.size());
  if (status) ADD_FAILURE() << "buffer_read: " << consumeStatus(status);
  return bytes;
}

kiln_status_t CtsFixture::submitAndWait(kiln_hal_command_buffer_t* commandBuffer,
                                     const kiln_hal_binding_table_t* table) {
  kiln_hal_semaphore_t* done = createSemaphore(0);
  uint64_t one = 1;
  kiln_hal_semaphore_list_t signal = semaphoreList(&done, &one, 1);
  kiln_status_t status = kiln_hal_device_queue_execute(
      device, KILN_HAL_QUEUE_AFFINITY_ANY, nullptr, &signal, 1, &commandBuffer,
      table);
  if (!status) status = kiln_hal_semaphore_wait(done, 1, kLongTimeout);
  kiln_hal_semaphore_release(done);
  return status;
}

kiln_status_t readFromDevice(kiln_hal_device_t *on, kiln_hal_buffer_t *buffer,
                             void *target, kiln_device_size_t length) {
  if (kiln_hal_buffer_memory_type(buffer) & KILN_HAL_MEMORY_TYPE_HOST_VISIBLE)
    return kiln_hal_buffer_read(buffer, 0, target, length);
  kiln_hal_buffer_t *staging = allocateOn(on, length);
  if (!staging)
    return kiln_make_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                            "cannot allocate a staging buffer");
  kiln_hal_command_buffer_t *cb = nullptr;
  kiln_hal_semaphore_t *done = nullptr;
  kiln_status_t status = kiln_hal_command_buffer_create(
      on, KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0, &cb);
  if (!status)
    status = kiln_hal_command_buffer_begin(cb);
  if (!status)
    status = kiln_hal_command_buffer_copy_buffer(cb, {buffer, 0, 0, length},
                                                 {staging, 0, 0, length});
  if (!status)
    status = kiln_hal_command_buffer_end(cb);
  if (!status)
    status = kiln_hal_semaphore_create(on, 0, &done);
  uint64_t one = 1;
  kiln_hal_semaphore_list_t signal = semaphoreList(&done, &one, 1);
  if (!status)
    status = kiln_hal_device_queue_execute(on, KILN_HAL_QUEUE_AFFINITY_ANY,
                                           nullptr, &signal, 1, &cb, nullptr);
  if (!status)
    status = kiln_hal_semaphore_wait(done, 1, kLongTimeout);
  if (!status)
    status = kiln_hal_buffer_read(staging, 0, target, length);
  kiln_hal_semaphore_release(done);
  kiln_hal_command_buffer_release(cb);
  kiln_hal_buffer_release(staging);
  return status;
}

}  // namespace kiln::cts
