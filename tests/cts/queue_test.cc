// Queue operations: deferred waits never block the caller, submissions are
// issued in order, failures propagate to signal semaphores, stream-ordered
// allocation.

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "cts_test_base.h"

namespace kiln::cts {
namespace {

using QueueTest = CtsTest;

// A one-shot command buffer that writes |value| (4 bytes) at |offset|.
kiln_hal_command_buffer_t* recordUpdate(kiln_hal_device_t* device,
                                        kiln_hal_buffer_t* buffer,
                                        kiln_device_size_t offset,
                                        uint32_t value) {
  kiln_hal_command_buffer_t* commandBuffer = nullptr;
  kiln_status_t status = kiln_hal_command_buffer_create(
      device, KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0, &commandBuffer);
  if (!status) status = kiln_hal_command_buffer_begin(commandBuffer);
  if (!status)
    status = kiln_hal_command_buffer_update_buffer(
        commandBuffer, &value, sizeof(value), ref(buffer, offset, 4));
  if (!status) status = kiln_hal_command_buffer_end(commandBuffer);
  if (status) ADD_FAILURE() << consumeStatus(status);
  return commandBuffer;
}

uint32_t readU32(kiln_hal_buffer_t* buffer, kiln_device_size_t offset) {
  uint32_t value = 0;
  kiln_status_t status = kiln_hal_buffer_read(buffer, offset, &value, 4);
  if (status) ADD_FAILURE() << consumeStatus(status);
  return value;
}

TEST_P(QueueTest, EmptyExecuteIsABarrierThatSignals) {
  kiln_hal_semaphore_t* done = createSemaphore(0);
  uint64_t value = 4;
  kiln_hal_semaphore_list_t signal = semaphoreList(&done, &value, 1);
  KILN_ASSERT_OK(kiln_hal_device_queue_execute(
      device, KILN_HAL_QUEUE_AFFINITY_ANY, nullptr, &signal, 0, nullptr,
      nullptr));
  KILN_EXPECT_OK(kiln_hal_semaphore_wait(done, 4, kLongTimeout));
  kiln_hal_semaphore_release(done);
}

TEST_P(QueueTest, UnsatisfiedWaitDefersWithoutBlockingTheCaller) {
  kiln_hal_buffer_t* buffer = allocateBuffer(16);
  kiln_hal_semaphore_t* gate = createSemaphore(0);
  kiln_hal_semaphore_t* done = createSemaphore(0);
  kiln_hal_command_buffer_t* commandBuffer = recordUpdate(device, buffer, 0, 42);
  uint64_t one = 1;
  kiln_hal_semaphore_list_t wait = semaphoreList(&gate, &one, 1);
  kiln_hal_semaphore_list_t signal = semaphoreList(&done, &one, 1);
  auto start = std::chrono::steady_clock::now();
  KILN_ASSERT_OK(kiln_hal_device_queue_execute(
      device, KILN_HAL_QUEUE_AFFINITY_ANY, &wait, &signal, 1, &commandBuffer,
      nullptr));
  // The caller got control back long before anyone signals the gate.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  KILN_EXPECT_STATUS(KILN_STATUS_DEADLINE_EXCEEDED,
                     kiln_hal_semaphore_wait(done, 1, 30 * kMillisecond));
  EXPECT_NE(readU32(buffer, 0), 42u);
  KILN_EXPECT_OK(kiln_hal_semaphore_signal(gate, 1));
  KILN_EXPECT_OK(kiln_hal_semaphore_wait(done, 1, kLongTimeout));
  EXPECT_EQ(readU32(buffer, 0), 42u);
  kiln_hal_command_buffer_release(commandBuffer);
  kiln_hal_semaphore_release(done);
  kiln_hal_semaphore_release(gate);
  kiln_hal_buffer_release(buffer);
}

TEST_P(QueueTest, DeferredSubmissionsIssueInSubmissionOrder) {
  kiln_hal_buffer_t* buffer = allocateBuffer(16);
  kiln_hal_semaphore_t* gate = createSemaphore(0);
  kiln_hal_semaphore_t* first = createSemaphore(0);
  kiln_hal_semaphore_t* second = createSemaphore(0);
  kiln_hal_command_buffer_t* writeOne = recordUpdate(device, buffer, 0, 1);
  kiln_hal_command_buffer_t* writeTwo = recordUpdate(device, buffer, 0, 2);
  uint64_t one = 1;
  kiln_hal_semaphore_list_t waitGate = semaphoreList(&gate, &one, 1);
  kiln_hal_semaphore_list_t signalFirst = semaphoreList(&first, &one, 1);
  kiln_hal_semaphore_list_t signalSecond = semaphoreList(&second, &one, 1);
  KILN_ASSERT_OK(kiln_hal_device_queue_execute(
      device, KILN_HAL_QUEUE_AFFINITY_ANY, &waitGate, &signalFirst, 1,
      &writeOne, nullptr));
  // No waits of its own, but it is behind the deferred one.
  KILN_ASSERT_OK(kiln_hal_device_queue_execute(
      device, KILN_HAL_QUEUE_AFFINITY_ANY, nullptr, &signalSecond, 1,
      &writeTwo, nullptr));
  KILN_EXPECT_STATUS(KILN_STATUS_DEADLINE_EXCEEDED,
                     kiln_hal_semaphore_wait(second, 1, 30 * kMillisecond));
  KILN_EXPECT_OK(kiln_hal_semaphore_signal(gate, 1));
  KILN_EXPECT_OK(kiln_hal_semaphore_wait(second, 1, kLongTimeout));
  uint64_t value = 0;
  KILN_EXPECT_OK(kiln_hal_semaphore_query(first, &value));
  EXPECT_EQ(value, 1u);
  EXPECT_EQ(readU32(buffer, 0), 2u);  // the second write landed last
  kiln_hal_command_buffer_release(writeOne);
  kiln_hal_command_buffer_release(writeTwo);
  for (auto* s : {gate, first, second}) kiln_hal_semaphore_release(s);
  kiln_hal_buffer_release(buffer);
}

TEST_P(QueueTest, LongChainCompletesInOrder) {
  constexpr uint32_t kSubmissions = 64;
  kiln_hal_buffer_t* buffer = allocateBuffer(kSubmissions * 4);
  kiln_hal_semaphore_t* timeline = createSemaphore(0);
  for (uint32_t i = 0; i < kSubmissions; ++i) {
    kiln_hal_command_buffer_t* commandBuffer =
        recordUpdate(device, buffer, i * 4, i + 100);
    uint64_t waitValue = i, signalValue = i + 1;
    kiln_hal_semaphore_list_t wait = semaphoreList(&timeline, &waitValue, 1);
    kiln_hal_semaphore_list_t signal =
        semaphoreList(&timeline, &signalValue, 1);
    KILN_ASSERT_OK(kiln_hal_device_queue_execute(
        device, KILN_HAL_QUEUE_AFFINITY_ANY, &wait, &signal, 1, &commandBuffer,
        nullptr));
    kiln_hal_command_buffer_release(commandBuffer);  // the queue keeps it
  }
  KILN_EXPECT_OK(kiln_hal_semaphore_wait(timeline, kSubmissions, kLongTimeout));
  for (uint32_t i = 0; i < kSubmissions; ++i)
    EXPECT_EQ(readU32(buffer, i * 4), i + 100);
  kiln_hal_semaphore_release(timeline);
  kiln_hal_buffer_release(buffer);
}

TEST_P(QueueTest, SubmissionsFromManyThreads) {
  constexpr int kThreads = 4, kPerThread = 16;
  kiln_hal_buffer_t* buffer = allocateBuffer(kThreads * kPerThread * 4);
  std::vector<kiln_hal_semaphore_t*> semaphores;
  for (int t = 0; t < kThreads; ++t) semaphores.push_back(createSemaphore(0));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        uint32_t index = uint32_t(t * kPerThread + i);
        kiln_hal_command_buffer_t* commandBuffer =
            recordUpdate(device, buffer, index * 4, index);
        uint64_t value = uint64_t(i + 1);
        kiln_hal_semaphore_list_t signal =
            semaphoreList(&semaphores[t], &value, 1);
        KILN_EXPECT_OK(kiln_hal_device_queue_execute(
            device, KILN_HAL_QUEUE_AFFINITY_ANY, nullptr, &signal, 1,
            &commandBuffer, nullptr));
        kiln_hal_command_buffer_release(commandBuffer);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t)
    KILN_EXPECT_OK(
        kiln_hal_semaphore_wait(semaphores[t], kPerThread, kLongTimeout));
  for (uint32_t i = 0; i < kThreads * kPerThread; ++i)
    EXPECT_EQ(readU32(buffer, i * 4), i);
  for (auto* s : semaphores) kiln_hal_semaphore_release(s);
  kiln_hal_buffer_release(buffer);
}

TEST_P(QueueTest, FailedWaitSemaphorePropagatesDownTheChain) {
  kiln_hal_buffer_t* buffer = allocateBuffer(16);
  KILN_ASSERT_OK(kiln_hal_buffer_write(buffer, 0, "\0\0\0\0", 4));
  kiln_hal_semaphore_t* gate = createSemaphore(0);
  kiln_hal_semaphore_t* middle = createSemaphore(0);
  kiln_hal_semaphore_t* last = createSemaphore(0);
  kiln_hal_command_buffer_t* write = recordUpdate(device, buffer, 0, 9);
  uint64_t one = 1;
  kiln_hal_semaphore_list_t waitGate = semaphoreList(&gate, &one, 1);
  kiln_hal_semaphore_list_t signalMiddle = semaphoreList(&middle, &one, 1);
  kiln_hal_semaphore_list_t waitMiddle = semaphoreList(&middle, &one, 1);
  kiln_hal_semaphore_list_t signalLast = semaphoreList(&last, &one, 1);
  KILN_ASSERT_OK(kiln_hal_device_queue_execute(
      device, KILN_HAL_QUEUE_AFFINITY_ANY, &waitGate, &signalMiddle, 1, &write,
      nullptr));
  KILN_ASSERT_OK(kiln_hal_device_queue_execute(
      device, KILN_HAL_QUEUE_AFFINITY_ANY, &waitMiddle, &signalLast, 0,
      nullptr, nullptr));
  kiln_hal_semaphore_fail(
      gate, kiln_make_status(KILN_STATUS_CANCELLED, "upstream cancelled"));
  kiln_status_t status = kiln_hal_semaphore_wait(last, 1, kLongTimeout);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_CANCELLED);
  EXPECT_NE(std::string(kiln_status_message(status)).find("upstream cancelled"),
            std::string::npos)
      << kiln_status_message(status);
  kiln_status_free(status);
  KILN_EXPECT_STATUS(KILN_STATUS_CANCELLED,
                     kiln_hal_semaphore_wait(middle, 1, KILN_DURATION_ZERO));
  EXPECT_EQ(readU32(buffer, 0), 0u);  // the failed submission did not run
  kiln_hal_command_buffer_release(write);
  for (auto* s : {gate, middle, last}) kiln_hal_semaphore_release(s);
  kiln_hal_buffer_release(buffer);
}

TEST_P(QueueTest, AllocaAndDeallocaAreStreamOrdered) {
  kiln_hal_semaphore_t* gate = createSemaphore(0);
  kiln_hal_semaphore_t* timeline = createSemaphore(0);
  kiln_hal_buffer_params_t params = {};
  params.memory_type =
      KILN_HAL_MEMORY_TYPE_DEVICE_LOCAL | KILN_HAL_MEMORY_TYPE_HOST_VISIBLE;
  params.usage = KILN_HAL_BUFFER_USAGE_DEFAULT | KILN_HAL_BUFFER_USAGE_MAPPING;
  uint64_t one = 1, two = 2, three = 3;
  kiln_hal_semaphore_list_t waitGate = semaphoreList(&gate, &one, 1);
  kiln_hal_semaphore_list_t signalOne = semaphoreList(&timeline, &one, 1);
  kiln_hal_buffer_t* buffer = nullptr;
  KILN_ASSERT_OK(kiln_hal_device_queue_alloca(
      device, KILN_HAL_QUEUE_AFFINITY_ANY, &waitGate, &signalOne, &params, 256,
      &buffer));
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(kiln_hal_buffer_byte_length(buffer), 256u);
  // Storage does not exist before the alloca ran.
  uint8_t byte = 0;
  KILN_EXPECT_STATUS(KILN_STATUS_FAILED_PRECONDITION,
                     kiln_hal_buffer_read(buffer, 0, &byte, 1));
  KILN_EXPECT_OK(kiln_hal_semaphore_signal(gate, 1));
  KILN_EXPECT_OK(kiln_hal_semaphore_wait(timeline, 1, kLongTimeout));
  // Use it on the queue, in order after the alloca.
  kiln_hal_command_buffer_t* write = recordUpdate(device, buffer, 8, 77);
  kiln_hal_semaphore_list_t waitOne = semaphoreList(&timeline, &one, 1);
  kiln_hal_semaphore_list_t signalTwo = semaphoreList(&timeline, &two, 1);
  KILN_ASSERT_OK(kiln_hal_device_queue_execute(
      device, KILN_HAL_QUEUE_AFFINITY_ANY, &waitOne, &signalTwo, 1, &write,
      nullptr));
  KILN_EXPECT_OK(kiln_hal_semaphore_wait(timeline, 2, kLongTimeout));
  EXPECT_EQ(readU32(buffer, 8), 77u);
  kiln_hal_semaphore_list_t waitTwo = semaphoreList(&timeline, &two, 1);
  kiln_hal_semaphore_list_t signalThree = semaphoreList(&timeline, &three, 1);
  KILN_ASSERT_OK(kiln_hal_device_queue_dealloca(
      device, KILN_HAL_QUEUE_AFFINITY_ANY, &waitTwo, &signalThree, buffer));
  KILN_EXPECT_OK(kiln_hal_semaphore_wait(timeline, 3, kLongTimeout));
  KILN_EXPECT_STATUS(KILN_STATUS_FAILED_PRECONDITION,
                     kiln_hal_buffer_read(buffer, 0, &byte, 1));
  kiln_hal_command_buffer_release(write);
  kiln_hal_buffer_release(buffer);
  kiln_hal_semaphore_release(timeline);
  kiln_hal_semaphore_release(gate);
}

TEST_P(QueueTest, UseAfterDeallocaFailsTheSubmission) {
  kiln_hal_semaphore_t* timeline = createSemaphore(0);
  kiln_hal_buffer_params_t params = {};
  params.memory_type = KILN_HAL_MEMORY_TYPE_DEVICE_LOCAL;
  params.usage = KILN_HAL_BUFFER_USAGE_DEFAULT;
  uint64_t one = 1, two = 2;
  kiln_hal_semaphore_list_t signalOne = semaphoreList(&timeline, &one, 1);
  kiln_hal_semaphore_list_t waitOne = semaphoreList(&timeline, &one, 1);
  kiln_hal_semaphore_list_t signalTwo = semaphoreList(&timeline, &two, 1);
  kiln_hal_buffer_t* buffer = nullptr;
  KILN_ASSERT_OK(kiln_hal_device_queue_alloca(
      device, KILN_HAL_QUEUE_AFFINITY_ANY, nullptr, nullptr, &params, 64,
      &buffer));
  KILN_ASSERT_OK(kiln_hal_device_queue_dealloca(
      device, KILN_HAL_QUEUE_AFFINITY_ANY, nullptr, &signalOne, buffer));
  kiln_hal_command_buffer_t* write = recordUpdate(device, buffer, 0, 1);
  KILN_ASSERT_OK(kiln_hal_device_queue_execute(
      device, KILN_HAL_QUEUE_AFFINITY_ANY, &waitOne, &signalTwo, 1, &write,
      nullptr));
  KILN_EXPECT_STATUS(KILN_STATUS_FAILED_PRECONDITION,
                     kiln_hal_semaphore_wait(timeline, 2, kLongTimeout));
  kiln_hal_command_buffer_release(write);
  kiln_hal_buffer_release(buffer);
  kiln_hal_semaphore_release(timeline);
}

TEST_P(QueueTest, BadSemaphoreListsAreRejected) {
  kiln_hal_semaphore_t* nullSemaphore = nullptr;
  uint64_t one = 1;
  kiln_hal_semaphore_list_t bad = semaphoreList(&nullSemaphore, &one, 1);
  KILN_EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                     kiln_hal_device_queue_execute(
                         device, KILN_HAL_QUEUE_AFFINITY_ANY, &bad, nullptr, 0,
                         nullptr, nullptr));
  kiln_hal_semaphore_list_t noArrays = {2, nullptr, nullptr};
  KILN_EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                     kiln_hal_device_queue_execute(
                         device, KILN_HAL_QUEUE_AFFINITY_ANY, nullptr,
                         &noArrays, 0, nullptr, nullptr));
}

TEST_P(QueueTest, ReleasingTheDeviceWithAStuckSubmissionFailsIt) {
  kiln_hal_semaphore_t* gate = createSemaphore(0);
  kiln_hal_semaphore_t* done = createSemaphore(0);
  uint64_t one = 1;
  kiln_hal_semaphore_list_t wait = semaphoreList(&gate, &one, 1);
  kiln_hal_semaphore_list_t signal = semaphoreList(&done, &one, 1);
  KILN_ASSERT_OK(kiln_hal_device_queue_execute(
      device, KILN_HAL_QUEUE_AFFINITY_ANY, &wait, &signal, 0, nullptr,
      nullptr));
  kiln_hal_device_release(device);
  device = nullptr;
  // The semaphore outlives the device and tells waiters what happened.
  KILN_EXPECT_STATUS(KILN_STATUS_ABORTED,
                     kiln_hal_semaphore_wait(done, 1, kLongTimeout));
  kiln_hal_semaphore_release(done);
  kiln_hal_semaphore_release(gate);
}

KILN_CTS_INSTANTIATE(QueueTest);

}  // namespace
}  // namespace kiln::cts
