// Shared fixture of the HAL conformance suite (CTS). Every test is written
// once against kiln/hal/hal.h and runs for each device URI in the suite's
// parameter list: $KILN_CTS_DEVICES (comma separated) if set, else the
// KILN_CTS_DEVICES CMake cache variable (default "local", plus "hip" when the
// hip plugin is built). Drivers come from the built-ins plus
// $KILN_HAL_DRIVER_PLUGINS (or, when that is unset, the plugins built with
// the suite), so a plugin driver is tested by listing its plugin and URI. A device that is not available
// here (driver or device NOT_FOUND / UNAVAILABLE) skips with the reason.
#ifndef KILN_TESTS_CTS_CTS_TEST_BASE_H_
#define KILN_TESTS_CTS_CTS_TEST_BASE_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/hal/hal.h"

namespace kiln::cts {

// Returns the status text ("CODE: message") and frees the status.
std::string consumeStatus(kiln_status_t status);

#define KILN_ASSERT_OK(expr)                                             \
  do {                                                                   \
    kiln_status_t kiln_assert_status_ = (expr);                          \
    ASSERT_EQ(kiln_assert_status_, nullptr)                              \
        << #expr << ": " << ::kiln::cts::consumeStatus(kiln_assert_status_); \
  } while (0)

#define KILN_EXPECT_OK(expr)                                             \
  do {                                                                   \
    kiln_status_t kiln_expect_status_ = (expr);                          \
    EXPECT_EQ(kiln_expect_status_, nullptr)                              \
        << #expr << ": " << ::kiln::cts::consumeStatus(kiln_expect_status_); \
  } while (0)

// Checks the code of |expr|'s status (freeing it).
#define KILN_EXPECT_STATUS(code, expr)                                   \
  do {                                                                   \
    kiln_status_t kiln_expect_status_ = (expr);                          \
    EXPECT_EQ(kiln_status_code(kiln_expect_status_), (code))             \
        << #expr << ": "                                                 \
        << (kiln_expect_status_ ? kiln_status_message(kiln_expect_status_) \
                                : "OK");                                 \
    kiln_status_free(kiln_expect_status_);                               \
  } while (0)

std::vector<std::string> deviceUris();
std::string uriTestName(const ::testing::TestParamInfo<std::string>& info);

// Holds a registry (built-in drivers and the suite's plugins) and one device.
class CtsFixture : public ::testing::Test {
 protected:
  // Creates the registry and opens |uri| as |device|; skips the test where
  // the device is not available here.
  void openDevice(const std::string& uri);
  void TearDown() override;

  // A HOST_VISIBLE | DEVICE_LOCAL buffer of |size| bytes (ADD_FAILURE on
  // error, returns nullptr).
  kiln_hal_buffer_t* allocateBuffer(kiln_device_size_t size);
  kiln_hal_semaphore_t* createSemaphore(uint64_t initialValue);
  std::vector<uint8_t> readBuffer(kiln_hal_buffer_t* buffer);
  // Submits |commandBuffer| (optionally with a binding table) signalling a
  // fresh semaphore and waits for it; returns the wait's status.
  kiln_status_t submitAndWait(kiln_hal_command_buffer_t* commandBuffer,
                              const kiln_hal_binding_table_t* table = nullptr);

  kiln_hal_driver_registry_t* registry = nullptr;
  kiln_hal_device_t* device = nullptr;
};

// A CTS test parameterized by the device URI.
class CtsTest : public CtsFixture,
                public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override { openDevice(GetParam()); }
};

// Buffer refs.
inline kiln_hal_buffer_ref_t ref(kiln_hal_buffer_t* buffer,
                                 kiln_device_size_t offset = 0,
                                 kiln_device_size_t length =
                                     KILN_HAL_WHOLE_BUFFER) {
  return {buffer, 0, offset, length};
}
inline kiln_hal_buffer_ref_t slotRef(uint32_t slot,
                                     kiln_device_size_t offset = 0,
                                     kiln_device_size_t length =
                                         KILN_HAL_WHOLE_BUFFER) {
  return {nullptr, slot, offset, length};
}
inline kiln_hal_semaphore_list_t semaphoreList(kiln_hal_semaphore_t** semaphores,
                                               const uint64_t* values,
                                               uint32_t count) {
  return {count, semaphores, values};
}

// A mappable buffer of |size| bytes (at least 1) on |on|, usable by
// dispatches and collectives; null (reported) if allocation fails.
inline kiln_hal_buffer_t* allocateOn(kiln_hal_device_t* on,
                                     kiln_device_size_t size) {
  kiln_hal_buffer_params_t params = {};
  params.memory_type =
      KILN_HAL_MEMORY_TYPE_DEVICE_LOCAL | KILN_HAL_MEMORY_TYPE_HOST_VISIBLE;
  params.usage = KILN_HAL_BUFFER_USAGE_DEFAULT | KILN_HAL_BUFFER_USAGE_MAPPING |
                 KILN_HAL_BUFFER_USAGE_COLLECTIVE;
  kiln_hal_buffer_t* buffer = nullptr;
  kiln_status_t status = kiln_hal_allocator_allocate_buffer(
      kiln_hal_device_allocator(on), &params, size ? size : 1, &buffer);
  if (status) ADD_FAILURE() << consumeStatus(status);
  return buffer;
}

// Reads |length| bytes of |buffer| (on |on|) into |target|: directly when it
// is host visible, else through a copy into a mappable buffer on |on| (a
// window's data and signals are device-local on GPUs). Returns the status.
kiln_status_t readFromDevice(kiln_hal_device_t *on, kiln_hal_buffer_t *buffer,
                             void *target, kiln_device_size_t length);

constexpr kiln_duration_t kMillisecond = 1000 * 1000;
// Generous bound for things that must happen "soon" (sanitizer builds on a
// loaded 2-core CI machine are slow).
constexpr kiln_duration_t kLongTimeout = 30000 * kMillisecond;

}  // namespace kiln::cts

#define KILN_CTS_INSTANTIATE(suite)                                   \
  INSTANTIATE_TEST_SUITE_P(Devices, suite,                            \
                           ::testing::ValuesIn(::kiln::cts::deviceUris()), \
                           ::kiln::cts::uriTestName)

#endif  // KILN_TESTS_CTS_CTS_TEST_BASE_H_
