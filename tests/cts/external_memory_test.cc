// External memory: buffers over memory another library owns (import), a
// buffer's memory handed out (export), and the device's stream for ordering
// work against another library's (DLPack's device and stream exchange).
//
// Written against the HAL only: the memory to import comes from the device
// itself (an exported buffer of its own kind), so every driver that shares
// memory is tested the same way; drivers that share none answer UNIMPLEMENTED
// everywhere.

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "cts_test_base.h"

namespace kiln::cts {
namespace {

class ExternalMemoryTest : public CtsTest {
 protected:
  void SetUp() override {
    CtsTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    kiln_status_t status = kiln_hal_device_query_external_info(device, &info);
    if (kiln_status_code(status) == KILN_STATUS_UNIMPLEMENTED) {
      kiln_status_free(status);
      shares = false;
      return;
    }
    KILN_ASSERT_OK(status);
  }

  // A DEVICE_LOCAL buffer (device memory on GPUs), filled with bytes
  // 0, 1, 2, ... through the device.
  kiln_hal_buffer_t* deviceBuffer(kiln_device_size_t size) {
    kiln_hal_buffer_params_t params = {};
    params.memory_type = KILN_HAL_MEMORY_TYPE_DEVICE_LOCAL;
    params.usage = KILN_HAL_BUFFER_USAGE_DEFAULT;
    kiln_hal_buffer_t* buffer = nullptr;
    kiln_status_t status = kiln_hal_allocator_allocate_buffer(
        kiln_hal_device_allocator(device), &params, size, &buffer);
    EXPECT_EQ(status, nullptr) << consumeStatus(status);
    kiln_hal_buffer_t* staging = allocateBuffer(size);
    std::vector<uint8_t> bytes(size);
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(i);
    EXPECT_EQ(kiln_hal_buffer_write(staging, 0, bytes.data(), size), nullptr);
    copy(staging, buffer, size);
    kiln_hal_buffer_release(staging);
    return buffer;
  }

  void copy(kiln_hal_buffer_t* source, kiln_hal_buffer_t* target,
            kiln_device_size_t size) {
    kiln_hal_command_buffer_t* cb = nullptr;
    KILN_ASSERT_OK(kiln_hal_command_buffer_create(
        device, KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0, &cb));
    KILN_ASSERT_OK(kiln_hal_command_buffer_begin(cb));
    KILN_ASSERT_OK(kiln_hal_command_buffer_copy_buffer(cb, ref(source, 0, size),
                                                       ref(target, 0, size)));
    KILN_ASSERT_OK(kiln_hal_command_buffer_end(cb));
    KILN_ASSERT_OK(submitAndWait(cb));
    kiln_hal_command_buffer_release(cb);
  }

  static void countRelease(void* userData) {
    static_cast<std::atomic<int>*>(userData)->fetch_add(1);
  }

  kiln_status_t import(void* data, kiln_device_size_t length,
                       kiln_hal_external_memory_type_t type,
                       std::atomic<int>* released, kiln_hal_buffer_t** buffer) {
    kiln_hal_buffer_params_t params = {};
    params.memory_type = KILN_HAL_MEMORY_TYPE_DEVICE_LOCAL;
    params.usage = KILN_HAL_BUFFER_USAGE_DEFAULT;
    kiln_hal_external_memory_t memory = {type, data, length};
    kiln_hal_external_release_t release = {countRelease, released};
    return kiln_hal_allocator_import_buffer(kiln_hal_device_allocator(device),
                                            &params, &memory, &release, buffer);
  }

  kiln_hal_device_external_info_t info = {};
  bool shares = true;
};

TEST_P(ExternalMemoryTest, DriversThatShareNothingSayUnimplemented) {
  if (shares) GTEST_SKIP() << "the driver shares memory";
  kiln_hal_buffer_t* buffer = allocateBuffer(64);
  kiln_hal_external_memory_t memory;
  KILN_EXPECT_STATUS(KILN_STATUS_UNIMPLEMENTED,
                     kiln_hal_buffer_export_memory(buffer, &memory));
  alignas(16) uint8_t bytes[64];
  std::atomic<int> released{0};
  kiln_hal_buffer_t* imported = nullptr;
  KILN_EXPECT_STATUS(KILN_STATUS_UNIMPLEMENTED,
                     import(bytes, sizeof(bytes), KILN_HAL_EXTERNAL_MEMORY_HOST,
                            &released, &imported));
  EXPECT_EQ(released.load(), 0);
  kiln_hal_buffer_release(buffer);
}

TEST_P(ExternalMemoryTest, ExportedMemoryImportsAsTheSameBytes) {
  if (!shares) GTEST_SKIP() << "the driver shares no memory";
  constexpr kiln_device_size_t kSize = 4096;
  kiln_hal_buffer_t* original = deviceBuffer(kSize);
  ASSERT_NE(original, nullptr);
  kiln_hal_external_memory_t memory = {};
  KILN_ASSERT_OK(kiln_hal_buffer_export_memory(original, &memory));
  EXPECT_EQ(memory.type, info.memory_type);
  EXPECT_EQ(memory.byte_length, kSize);
  ASSERT_NE(memory.data, nullptr);

  // A window of the exported bytes, imported: reads see the original's
  // bytes and writes land in them.
  std::atomic<int> released{0};
  kiln_hal_buffer_t* imported = nullptr;
  KILN_ASSERT_OK(import(static_cast<uint8_t*>(memory.data) + 256, 1024,
                        memory.type, &released, &imported));
  EXPECT_EQ(kiln_hal_buffer_byte_length(imported), 1024u);
  EXPECT_TRUE(kiln_hal_buffer_memory_type(imported) &
              KILN_HAL_MEMORY_TYPE_DEVICE_LOCAL);
  kiln_hal_buffer_t* host = allocateBuffer(1024);
  copy(imported, host, 1024);
  std::vector<uint8_t> bytes = readBuffer(host);
  for (size_t i = 0; i < bytes.size(); ++i)
    ASSERT_EQ(bytes[i], uint8_t(256 + i)) << "byte " << i;

  uint32_t pattern = 0xA5A5A5A5u;
  kiln_hal_command_buffer_t* cb = nullptr;
  KILN_ASSERT_OK(kiln_hal_command_buffer_create(
      device, KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0, &cb));
  KILN_ASSERT_OK(kiln_hal_command_buffer_begin(cb));
  KILN_ASSERT_OK(kiln_hal_command_buffer_fill_buffer(cb, ref(imported, 0, 64),
                                                     &pattern, 4));
  KILN_ASSERT_OK(kiln_hal_command_buffer_end(cb));
  KILN_ASSERT_OK(submitAndWait(cb));
  kiln_hal_command_buffer_release(cb);
  kiln_hal_buffer_t* whole = allocateBuffer(kSize);
  copy(original, whole, kSize);
  bytes = readBuffer(whole);
  EXPECT_EQ(bytes[255], 255);
  for (size_t i = 256; i < 320; ++i) ASSERT_EQ(bytes[i], 0xA5) << "byte " << i;
  EXPECT_EQ(bytes[320], uint8_t(320));

  // The release callback runs once, when the imported buffer goes.
  EXPECT_EQ(released.load(), 0);
  kiln_hal_buffer_release(imported);
  EXPECT_EQ(released.load(), 1);
  kiln_hal_buffer_release(whole);
  kiln_hal_buffer_release(host);
  kiln_hal_buffer_release(original);
}

TEST_P(ExternalMemoryTest, ReleaseWaitsForWorkThatUsesTheMemory) {
  if (!shares) GTEST_SKIP() << "the driver shares no memory";
  kiln_hal_buffer_t* original = deviceBuffer(256);
  kiln_hal_external_memory_t memory = {};
  KILN_ASSERT_OK(kiln_hal_buffer_export_memory(original, &memory));
  std::atomic<int> released{0};
  kiln_hal_buffer_t* imported = nullptr;
  KILN_ASSERT_OK(import(memory.data, 256, memory.type, &released, &imported));
  kiln_hal_buffer_t* host = allocateBuffer(256);
  // Submitted behind a semaphore nobody has signalled yet: the queue holds
  // the imported buffer until the copy ran.
  kiln_hal_semaphore_t* gate = createSemaphore(0);
  kiln_hal_semaphore_t* done = createSemaphore(0);
  kiln_hal_command_buffer_t* cb = nullptr;
  KILN_ASSERT_OK(kiln_hal_command_buffer_create(
      device, KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0, &cb));
  KILN_ASSERT_OK(kiln_hal_command_buffer_begin(cb));
  KILN_ASSERT_OK(
      kiln_hal_command_buffer_copy_buffer(cb, ref(imported), ref(host)));
  KILN_ASSERT_OK(kiln_hal_command_buffer_end(cb));
  uint64_t one = 1;
  kiln_hal_semaphore_list_t wait = semaphoreList(&gate, &one, 1);
  kiln_hal_semaphore_list_t signal = semaphoreList(&done, &one, 1);
  KILN_ASSERT_OK(kiln_hal_device_queue_execute(device, 0, &wait, &signal, 1,
                                               &cb, nullptr));
  kiln_hal_buffer_release(imported);
  EXPECT_EQ(released.load(), 0) << "released while a queued copy uses it";
  KILN_ASSERT_OK(kiln_hal_semaphore_signal(gate, 1));
  KILN_ASSERT_OK(
      kiln_hal_semaphore_wait(done, 1, kiln_time_now() + kLongTimeout));
  kiln_hal_command_buffer_release(cb);
  // The driver lets go of the submission's buffers once it completed; that
  // may trail the signal a little.
  kiln_time_t deadline = kiln_time_now() + kLongTimeout;
  while (released.load() == 0 && kiln_time_now() < deadline)
    std::this_thread::yield();
  EXPECT_EQ(released.load(), 1);
  std::vector<uint8_t> bytes = readBuffer(host);
  for (size_t i = 0; i < bytes.size(); ++i) ASSERT_EQ(bytes[i], uint8_t(i));
  kiln_hal_semaphore_release(gate);
  kiln_hal_semaphore_release(done);
  kiln_hal_buffer_release(host);
  kiln_hal_buffer_release(original);
}

TEST_P(ExternalMemoryTest, BadImportsAreErrorsAndNeverReleased) {
  if (!shares) GTEST_SKIP() << "the driver shares no memory";
  kiln_hal_buffer_t* original = deviceBuffer(1024);
  kiln_hal_external_memory_t memory = {};
  KILN_ASSERT_OK(kiln_hal_buffer_export_memory(original, &memory));
  auto* data = static_cast<uint8_t*>(memory.data);
  std::atomic<int> released{0};
  kiln_hal_buffer_t* imported = nullptr;
  // Misaligned, empty, NULL, unknown type, the other kinds of memory.
  KILN_EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                     import(data + 4, 64, memory.type, &released, &imported));
  KILN_EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                     import(data, 0, memory.type, &released, &imported));
  KILN_EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                     import(nullptr, 64, memory.type, &released, &imported));
  KILN_EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                     import(data, 64, kiln_hal_external_memory_type_t(99),
                            &released, &imported));
  for (kiln_hal_external_memory_type_t other :
       {KILN_HAL_EXTERNAL_MEMORY_HOST, KILN_HAL_EXTERNAL_MEMORY_CUDA,
        KILN_HAL_EXTERNAL_MEMORY_ROCM}) {
    if (other == info.memory_type) continue;
    KILN_EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                       import(data, 64, other, &released, &imported));
  }
  if (info.memory_type != KILN_HAL_EXTERNAL_MEMORY_HOST) {
    // GPU drivers check the range against the allocation holding it.
    KILN_EXPECT_STATUS(
        KILN_STATUS_INVALID_ARGUMENT,
        import(data + 512, 1024, memory.type, &released, &imported));
  }
  EXPECT_EQ(imported, nullptr);
  EXPECT_EQ(released.load(), 0);
  kiln_hal_buffer_release(original);
}

TEST_P(ExternalMemoryTest, ExternalStreamWaitsOrAreUnimplemented) {
  if (!shares) GTEST_SKIP() << "the driver shares no memory";
  if (info.memory_type == KILN_HAL_EXTERNAL_MEMORY_HOST) {
    EXPECT_EQ(info.stream, 0u);
    KILN_EXPECT_STATUS(KILN_STATUS_UNIMPLEMENTED,
                       kiln_hal_device_wait_external_stream(device, 1));
    return;
  }
  EXPECT_NE(info.stream, 0u);
  EXPECT_GE(info.device_ordinal, 0);
  // The device's own stream and the legacy default stream.
  KILN_EXPECT_OK(kiln_hal_device_wait_external_stream(device, info.stream));
  KILN_EXPECT_OK(kiln_hal_device_wait_external_stream(device, 1));
}

TEST_P(ExternalMemoryTest, QueueAllocatedBuffersExportOnceAllocated) {
  if (!shares) GTEST_SKIP() << "the driver shares no memory";
  kiln_hal_semaphore_t* gate = createSemaphore(0);
  kiln_hal_semaphore_t* ready = createSemaphore(0);
  uint64_t one = 1;
  kiln_hal_semaphore_list_t wait = semaphoreList(&gate, &one, 1);
  kiln_hal_semaphore_list_t signal = semaphoreList(&ready, &one, 1);
  kiln_hal_buffer_params_t params = {};
  params.memory_type = KILN_HAL_MEMORY_TYPE_DEVICE_LOCAL;
  params.usage = KILN_HAL_BUFFER_USAGE_DEFAULT;
  kiln_hal_buffer_t* buffer = nullptr;
  KILN_ASSERT_OK(kiln_hal_device_queue_alloca(device, 0, &wait, &signal,
                                              &params, 128, &buffer));
  kiln_hal_external_memory_t memory = {};
  KILN_EXPECT_STATUS(KILN_STATUS_FAILED_PRECONDITION,
                     kiln_hal_buffer_export_memory(buffer, &memory));
  KILN_ASSERT_OK(kiln_hal_semaphore_signal(gate, 1));
  KILN_ASSERT_OK(
      kiln_hal_semaphore_wait(ready, 1, kiln_time_now() + kLongTimeout));
  KILN_EXPECT_OK(kiln_hal_buffer_export_memory(buffer, &memory));
  EXPECT_NE(memory.data, nullptr);
  EXPECT_EQ(memory.byte_length, 128u);
  kiln_hal_buffer_release(buffer);
  kiln_hal_semaphore_release(gate);
  kiln_hal_semaphore_release(ready);
}

KILN_CTS_INSTANTIATE(ExternalMemoryTest);

}  // namespace
}  // namespace kiln::cts
