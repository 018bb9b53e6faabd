// CTS: the device's buffer cache (hal.h "Device memory"): released storage
// is reused without a system allocation, trimming frees it, the
// memory_limit option caps what the device reserves and an allocation past
// it is RESOURCE_EXHAUSTED, and nothing stays reserved that was not asked
// for. Skipped for drivers without a cache (it is optional).
#include <string>
#include <vector>

#include "cts_test_base.h"

namespace kiln::cts {
namespace {

constexpr kiln_device_size_t kMiB = 1024 * 1024;

kiln_hal_device_memory_stats_t stats(kiln_hal_device_t* device) {
  kiln_hal_device_memory_stats_t out = {};
  kiln_status_t status = kiln_hal_device_query_memory_stats(device, &out);
  EXPECT_EQ(status, nullptr) << consumeStatus(status);
  return out;
}

// Device-local storage (not host visible): the kind calls allocate.
kiln_status_t allocateDeviceLocal(kiln_hal_device_t* device,
                                  kiln_device_size_t size,
                                  kiln_hal_buffer_t** out) {
  kiln_hal_buffer_params_t params = {};
  params.memory_type = KILN_HAL_MEMORY_TYPE_DEVICE_LOCAL;
  params.usage = KILN_HAL_BUFFER_USAGE_DEFAULT;
  return kiln_hal_allocator_allocate_buffer(kiln_hal_device_allocator(device),
                                            &params, size, out);
}

class MemoryTest : public CtsTest {
 protected:
  void SetUp() override {
    CtsTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    // The cache is optional in the driver ABI (the sample driver has none).
    kiln_hal_device_memory_stats_t unused = {};
    kiln_status_t status = kiln_hal_device_query_memory_stats(device, &unused);
    if (kiln_status_code(status) == KILN_STATUS_UNIMPLEMENTED)
      GTEST_SKIP() << consumeStatus(status);
    KILN_ASSERT_OK(status);
  }

  // Reopens the device under test with |options| (its URI query).
  void reopenWith(const std::string& options) {
    kiln_hal_device_release(device);
    device = nullptr;
    kiln_hal_driver_registry_release(registry);
    registry = nullptr;
    openDevice(GetParam() + "?" + options);
  }
};

TEST_P(MemoryTest, ReleasedStorageIsReusedWithoutASystemAllocation) {
  kiln_hal_device_memory_stats_t before = stats(device);
  kiln_hal_buffer_t* first = nullptr;
  KILN_ASSERT_OK(allocateDeviceLocal(device, 3 * kMiB, &first));
  kiln_hal_device_memory_stats_t live = stats(device);
  EXPECT_GE(live.bytes_in_use, before.bytes_in_use + 3 * kMiB);
  EXPECT_EQ(live.system_allocations, before.system_allocations + 1);
  kiln_hal_buffer_release(first);

  kiln_hal_device_memory_stats_t released = stats(device);
  EXPECT_EQ(released.bytes_in_use, before.bytes_in_use);
  EXPECT_GE(released.bytes_cached, 3 * kMiB);

  // The same size again, and a size of the same class: both from the cache.
  kiln_hal_buffer_t* second = nullptr;
  KILN_ASSERT_OK(allocateDeviceLocal(device, 3 * kMiB, &second));
  kiln_hal_device_memory_stats_t reused = stats(device);
  EXPECT_EQ(reused.system_allocations, live.system_allocations);
  EXPECT_EQ(reused.cache_hits, released.cache_hits + 1);
  kiln_hal_buffer_release(second);
  KILN_ASSERT_OK(allocateDeviceLocal(device, 3 * kMiB - 100, &second));
  EXPECT_EQ(stats(device).system_allocations, live.system_allocations);
  kiln_hal_buffer_release(second);
}

TEST_P(MemoryTest, LiveBuffersNeverShareACachedBlock) {
  // One block cached, then two live buffers of its size: one gets the
  // cached block, the other a new one; what each holds stays its own.
  kiln_hal_buffer_t* warm = nullptr;
  KILN_ASSERT_OK(allocateDeviceLocal(device, kMiB, &warm));
  kiln_hal_buffer_release(warm);
  kiln_hal_buffer_t* a = nullptr;
  kiln_hal_buffer_t* b = nullptr;
  KILN_ASSERT_OK(allocateDeviceLocal(device, kMiB, &a));
  KILN_ASSERT_OK(allocateDeviceLocal(device, kMiB, &b));
  kiln_hal_buffer_t* readA = allocateBuffer(kMiB);
  kiln_hal_buffer_t* readB = allocateBuffer(kMiB);
  ASSERT_NE(readA, nullptr);
  ASSERT_NE(readB, nullptr);
  kiln_hal_command_buffer_t* commands = nullptr;
  KILN_ASSERT_OK(kiln_hal_command_buffer_create(
      device, KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0, &commands));
  KILN_ASSERT_OK(kiln_hal_command_buffer_begin(commands));
  uint32_t one = 0x11111111, two = 0x22222222;
  KILN_ASSERT_OK(
      kiln_hal_command_buffer_fill_buffer(commands, ref(a), &one, sizeof(one)));
  KILN_ASSERT_OK(
      kiln_hal_command_buffer_fill_buffer(commands, ref(b), &two, sizeof(two)));
  KILN_ASSERT_OK(kiln_hal_command_buffer_copy_buffer(commands, ref(a), ref(readA)));
  KILN_ASSERT_OK(kiln_hal_command_buffer_copy_buffer(commands, ref(b), ref(readB)));
  KILN_ASSERT_OK(kiln_hal_command_buffer_end(commands));
  KILN_EXPECT_OK(submitAndWait(commands));
  kiln_hal_command_buffer_release(commands);
  EXPECT_EQ(readBuffer(readA), std::vector<uint8_t>(kMiB, 0x11));
  EXPECT_EQ(readBuffer(readB), std::vector<uint8_t>(kMiB, 0x22));
  for (kiln_hal_buffer_t* buffer : {a, b, readA, readB})
    kiln_hal_buffer_release(buffer);
}

TEST_P(MemoryTest, TrimFreesCachedStorageAndKeepsBuffersInUse) {
  kiln_hal_buffer_t* kept = allocateBuffer(64 * 1024);
  ASSERT_NE(kept, nullptr);
  std::vector<uint8_t> bytes(64 * 1024, 0x5a);
  KILN_ASSERT_OK(kiln_hal_buffer_write(kept, 0, bytes.data(), bytes.size()));
  kiln_hal_buffer_t* dropped = nullptr;
  KILN_ASSERT_OK(allocateDeviceLocal(device, 2 * kMiB, &dropped));
  kiln_hal_buffer_release(dropped);
  kiln_hal_device_memory_stats_t before = stats(device);
  ASSERT_GE(before.bytes_cached, 2 * kMiB);

  KILN_ASSERT_OK(kiln_hal_device_trim(device));
  kiln_hal_device_memory_stats_t after = stats(device);
  EXPECT_EQ(after.bytes_cached, 0u);
  EXPECT_GT(after.system_frees, before.system_frees);
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
  EXPECT_EQ(readBuffer(kept), bytes);
  kiln_hal_buffer_release(kept);
}

TEST_P(MemoryTest, MemoryLimitRefusesWhatDoesNotFitAndEvictsTheCache) {
  reopenWith("memory_limit=4M");
  if (IsSkipped()) return;
  kiln_hal_device_memory_stats_t start = stats(device);
  EXPECT_EQ(start.bytes_limit, 4 * kMiB);

  kiln_hal_buffer_t* first = nullptr;
  KILN_ASSERT_OK(allocateDeviceLocal(device, 3 * kMiB, &first));
  kiln_hal_buffer_t* second = nullptr;
  kiln_status_t status = allocateDeviceLocal(device, 3 * kMiB, &second);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_RESOURCE_EXHAUSTED);
  std::string message = consumeStatus(status);
  EXPECT_NE(message.find("memory_limit"), std::string::npos) << message;
  EXPECT_EQ(second, nullptr);
  // A refused allocation changes nothing.
  kiln_hal_device_memory_stats_t refused = stats(device);
  EXPECT_EQ(refused.bytes_in_use, 3 * kMiB);

  // Released, the 3 MiB block is cached; a 2 MiB buffer only fits once the
  // cache gives it back.
  kiln_hal_buffer_release(first);
  KILN_ASSERT_OK(allocateDeviceLocal(device, 2 * kMiB, &second));
  kiln_hal_device_memory_stats_t evicted = stats(device);
  EXPECT_EQ(evicted.bytes_cached, 0u);
  EXPECT_GT(evicted.system_frees, refused.system_frees);
  EXPECT_LE(evicted.peak_bytes_reserved, 4 * kMiB);
  kiln_hal_buffer_release(second);

  // Larger than the whole limit.
  KILN_EXPECT_STATUS(KILN_STATUS_RESOURCE_EXHAUSTED,
                     allocateDeviceLocal(device, 5 * kMiB, &second));
}

TEST_P(MemoryTest, BadMemoryLimitIsRejected) {
  kiln_hal_device_release(device);
  device = nullptr;
  for (const char* option : {"memory_limit=lots", "memory_limit=",
                             "memory_limit=99999999999999999999T"}) {
    kiln_hal_device_t* other = nullptr;
    std::string uri = GetParam() + "?" + option;
    kiln_status_t status =
        kiln_hal_driver_registry_create_device(registry, uri.c_str(), &other);
    EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT) << uri;
    std::string message = consumeStatus(status);
    EXPECT_NE(message.find("memory_limit"), std::string::npos) << message;
    EXPECT_EQ(other, nullptr);
  }
}

TEST_P(MemoryTest, CachedBytesStayBoundedOverManySizes) {
  // Buffers of ever new sizes, each released before the next: without a
  // bound the cache would keep every one of them.
  kiln_device_size_t largest = 0;
  for (kiln_device_size_t size = 64 * 1024; size <= 8 * kMiB;
       size = size * 5 / 4) {
    kiln_hal_buffer_t* buffer = nullptr;
    KILN_ASSERT_OK(allocateDeviceLocal(device, size, &buffer));
    kiln_hal_buffer_release(buffer);
    largest = size;
  }
  kiln_hal_device_memory_stats_t after = stats(device);
  // What is cached never exceeds the live bytes plus the newest blocks.
  EXPECT_LE(after.bytes_cached, 3 * largest);
  EXPECT_GT(after.system_frees, 0u);
}

KILN_CTS_INSTANTIATE(MemoryTest);

}  // namespace
}  // namespace kiln::cts
