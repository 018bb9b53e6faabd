// Timeline semaphores: signal, query, wait, timeouts, sticky failure, many
// waiters, out-of-order signalling.

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "cts_test_base.h"

namespace kiln::cts {
namespace {

using SemaphoreTest = CtsTest;

TEST_P(SemaphoreTest, QueryReturnsInitialAndSignalledValues) {
  kiln_hal_semaphore_t* semaphore = createSemaphore(5);
  uint64_t value = 0;
  KILN_EXPECT_OK(kiln_hal_semaphore_query(semaphore, &value));
  EXPECT_EQ(value, 5u);
  KILN_EXPECT_OK(kiln_hal_semaphore_signal(semaphore, 7));
  KILN_EXPECT_OK(kiln_hal_semaphore_query(semaphore, &value));
  EXPECT_EQ(value, 7u);
  kiln_hal_semaphore_release(semaphore);
}

TEST_P(SemaphoreTest, SignalMustMoveForward) {
  kiln_hal_semaphore_t* semaphore = createSemaphore(5);
  KILN_EXPECT_STATUS(KILN_STATUS_OUT_OF_RANGE,
                     kiln_hal_semaphore_signal(semaphore, 5));
  KILN_EXPECT_STATUS(KILN_STATUS_OUT_OF_RANGE,
                     kiln_hal_semaphore_signal(semaphore, 4));
  KILN_EXPECT_STATUS(
      KILN_STATUS_INVALID_ARGUMENT,
      kiln_hal_semaphore_signal(semaphore, KILN_HAL_SEMAPHORE_FAILURE_VALUE));
  uint64_t value = 0;
  KILN_EXPECT_OK(kiln_hal_semaphore_query(semaphore, &value));
  EXPECT_EQ(value, 5u);
  kiln_hal_semaphore_release(semaphore);
}

TEST_P(SemaphoreTest, WaitForReachedValueReturnsImmediately) {
  kiln_hal_semaphore_t* semaphore = createSemaphore(3);
  KILN_EXPECT_OK(kiln_hal_semaphore_wait(semaphore, 3, KILN_DURATION_ZERO));
  KILN_EXPECT_OK(kiln_hal_semaphore_wait(semaphore, 1, KILN_DURATION_ZERO));
  kiln_hal_semaphore_release(semaphore);
}

TEST_P(SemaphoreTest, WaitTimesOutWithDeadlineExceeded) {
  kiln_hal_semaphore_t* semaphore = createSemaphore(0);
  KILN_EXPECT_STATUS(KILN_STATUS_DEADLINE_EXCEEDED,
                     kiln_hal_semaphore_wait(semaphore, 1, KILN_DURATION_ZERO));
  auto start = std::chrono::steady_clock::now();
  KILN_EXPECT_STATUS(KILN_STATUS_DEADLINE_EXCEEDED,
                     kiln_hal_semaphore_wait(semaphore, 1, 20 * kMillisecond));
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_GE(elapsed, std::chrono::milliseconds(20));
  kiln_hal_semaphore_release(semaphore);
}

TEST_P(SemaphoreTest, SignalFromAnotherThreadWakesInfiniteWait) {
  kiln_hal_semaphore_t* semaphore = createSemaphore(0);
  std::thread signaller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    KILN_EXPECT_OK(kiln_hal_semaphore_signal(semaphore, 2));
  });
  KILN_EXPECT_OK(kiln_hal_semaphore_wait(semaphore, 2, KILN_DURATION_INFINITE));
  signaller.join();
  kiln_hal_semaphore_release(semaphore);
}

TEST_P(SemaphoreTest, FailureIsStickyAndReachesEveryWaiter) {
  kiln_hal_semaphore_t* semaphore = createSemaphore(0);
  constexpr int kWaiters = 8;
  std::vector<std::thread> waiters;
  std::vector<kiln_status_code_t> codes(kWaiters, KILN_STATUS_OK);
  std::vector<std::string> messages(kWaiters);
  std::atomic<int> started{0};
  for (int i = 0; i < kWaiters; ++i) {
    waiters.emplace_back([&, i] {
      ++started;
      kiln_status_t status =
          kiln_hal_semaphore_wait(semaphore, 10, kLongTimeout);
      codes[i] = kiln_status_code(status);
      messages[i] = kiln_status_message(status);
      kiln_status_free(status);
    });
  }
  while (started.load() < kWaiters) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  kiln_hal_semaphore_fail(
      semaphore, kiln_make_status(KILN_STATUS_DATA_LOSS, "disk on fire"));
  for (std::thread& waiter : waiters) waiter.join();
  for (int i = 0; i < kWaiters; ++i) {
    EXPECT_EQ(codes[i], KILN_STATUS_DATA_LOSS);
    EXPECT_NE(messages[i].find("disk on fire"), std::string::npos);
  }
  // Later waits, queries and signals see the same failure; a second failure
  // does not replace the first.
  kiln_hal_semaphore_fail(semaphore,
                          kiln_make_status(KILN_STATUS_INTERNAL, "second"));
  KILN_EXPECT_STATUS(KILN_STATUS_DATA_LOSS,
                     kiln_hal_semaphore_wait(semaphore, 0, KILN_DURATION_ZERO));
  uint64_t value = 0;
  KILN_EXPECT_STATUS(KILN_STATUS_DATA_LOSS,
                     kiln_hal_semaphore_query(semaphore, &value));
  EXPECT_EQ(value, KILN_HAL_SEMAPHORE_FAILURE_VALUE);
  KILN_EXPECT_STATUS(KILN_STATUS_DATA_LOSS,
                     kiln_hal_semaphore_signal(semaphore, 11));
  kiln_hal_semaphore_release(semaphore);
}

TEST_P(SemaphoreTest, ManyWaitersOnManyThreadsAndSemaphores) {
  constexpr int kSemaphores = 4;
  constexpr int kValues = 16;
  std::vector<kiln_hal_semaphore_t*> semaphores;
  for (int s = 0; s < kSemaphores; ++s) semaphores.push_back(createSemaphore(0));
  std::atomic<int> woken{0};
  std::vector<std::thread> waiters;
  for (int s = 0; s < kSemaphores; ++s) {
    for (int v = 1; v <= kValues; ++v) {
      waiters.emplace_back([&, s, v] {
        KILN_EXPECT_OK(
            kiln_hal_semaphore_wait(semaphores[s], uint64_t(v), kLongTimeout));
        ++woken;
      });
    }
  }
  // Signal all semaphores step by step from two threads, interleaved.
  std::thread even([&] {
    for (int v = 1; v <= kValues; ++v)
      for (int s = 0; s < kSemaphores; s += 2)
        KILN_EXPECT_OK(kiln_hal_semaphore_signal(semaphores[s], uint64_t(v)));
  });
  std::thread odd([&] {
    for (int v = 1; v <= kValues; ++v)
      for (int s = 1; s < kSemaphores; s += 2)
        KILN_EXPECT_OK(kiln_hal_semaphore_signal(semaphores[s], uint64_t(v)));
  });
  even.join();
  odd.join();
  for (std::thread& waiter : waiters) waiter.join();
  EXPECT_EQ(woken.load(), kSemaphores * kValues);
  for (kiln_hal_semaphore_t* semaphore : semaphores)
    kiln_hal_semaphore_release(semaphore);
}

TEST_P(SemaphoreTest, OutOfOrderSignallingSatisfiesListWait) {
  kiln_hal_semaphore_t* semaphores[2] = {createSemaphore(0), createSemaphore(0)};
  uint64_t values[2] = {1, 3};
  kiln_hal_semaphore_list_t list = semaphoreList(semaphores, values, 2);
  KILN_EXPECT_STATUS(KILN_STATUS_DEADLINE_EXCEEDED,
                     kiln_hal_semaphore_list_wait(&list, KILN_DURATION_ZERO));
  std::thread signaller([&] {
    // Second semaphore first, in two steps, then the first one.
    KILN_EXPECT_OK(kiln_hal_semaphore_signal(semaphores[1], 2));
    KILN_EXPECT_OK(kiln_hal_semaphore_signal(semaphores[1], 3));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    KILN_EXPECT_OK(kiln_hal_semaphore_signal(semaphores[0], 1));
  });
  KILN_EXPECT_OK(kiln_hal_semaphore_list_wait(&list, kLongTimeout));
  signaller.join();
  for (kiln_hal_semaphore_t* semaphore : semaphores)
    kiln_hal_semaphore_release(semaphore);
}

TEST_P(SemaphoreTest, NullArgumentsAreErrors) {
  kiln_hal_semaphore_t* semaphore = nullptr;
  KILN_EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                     kiln_hal_semaphore_create(device, 0, nullptr));
  KILN_EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                     kiln_hal_semaphore_create(nullptr, 0, &semaphore));
  KILN_EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                     kiln_hal_semaphore_wait(nullptr, 0, 0));
  KILN_EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                     kiln_hal_semaphore_signal(nullptr, 1));
}

KILN_CTS_INSTANTIATE(SemaphoreTest);

}  // namespace
}  // namespace kiln::cts
