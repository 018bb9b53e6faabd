// Stress and failure tests of the hip driver on a real GPU (skipped, with
// the driver's reason, where there is none): many host threads submitting
// dispatches concurrently to one device, waiters finishing the queue's
// submissions themselves (in order), profiled calls from many threads,
// out-of-order semaphore signalling,
// and an injected launch failure ($KILN_HIP_INJECT_FAILURE) reaching every
// host and queue waiter downstream without hanging. Every wait has a
// timeout, so a bug fails a test instead of hanging it.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "kiln/hal/hal.h"
#include "status_test_util.h"

namespace {

constexpr kiln_duration_t kTimeout = 30ll * 1000 * 1000 * 1000;

using kiln::testing::TakeMessage;


class HipStressTest : public ::testing::Test {
 protected:
   // |injectEvery|: value of $KILN_HIP_INJECT_FAILURE for this test's driver;
   // |graphs|: of $KILN_HIP_GRAPHS.
   // |captureEvery|: of $KILN_HIP_INJECT_CAPTURE_FAILURE.
   void start(const char *injectEvery = nullptr, const char *graphs = "1",
              const char *captureEvery = nullptr) {
     if (injectEvery)
       setenv("KILN_HIP_INJECT_FAILURE", injectEvery, 1);
     else
       unsetenv("KILN_HIP_INJECT_FAILURE");
     if (captureEvery)
       setenv("KILN_HIP_INJECT_CAPTURE_FAILURE", captureEvery, 1);
     else
       unsetenv("KILN_HIP_INJECT_CAPTURE_FAILURE");
     setenv("KILN_HIP_GRAPHS", graphs, 1);
     ASSERT_OK(kiln_hal_driver_registry_create(&registry));
     const char *plugin = std::getenv("KILN_HIP_PLUGIN_PATH");
     ASSERT_OK(kiln_hal_driver_registry_load_plugin(
         registry, plugin && *plugin ? plugin : KILN_HIP_PLUGIN_PATH));
     kiln_status_t status =
         kiln_hal_driver_registry_create_device(registry, "hip", &device);
     unsetenv("KILN_HIP_INJECT_FAILURE");
     unsetenv("KILN_HIP_INJECT_CAPTURE_FAILURE");
     unsetenv("KILN_HIP_GRAPHS");
     kiln_status_code_t code = kiln_status_code(status);
     if (code == KILN_STATUS_UNAVAILABLE || code == KILN_STATUS_NOT_FOUND)
       GTEST_SKIP() << "no GPU for the hip driver here: "
                    << TakeMessage(status);
     ASSERT_OK(status);
     ASSERT_OK(kiln_hal_executable_cache_create(device, &cache));
     if (!kiln_hal_executable_cache_can_prepare_format(cache, "ptx"))
       GTEST_SKIP() << "the device does not load PTX (AMD platform)";
     // $KILN_HIP_TEST_PTX_PATH overrides the build path (binaries carried to
     // a GPU machine by build_tools/gpu_check.sh).
     const char *path = std::getenv("KILN_HIP_TEST_PTX_PATH");
     if (!path || !*path)
       path = KILN_HIP_TEST_PTX_PATH;
     std::ifstream file(path, std::ios::binary);
     std::vector<char> ptx((std::istreambuf_iterator<char>(file)), {});
     ASSERT_FALSE(ptx.empty()) << "cannot read " << path;
     kiln_hal_executable_export_t exports[1] = {
         {"cts_add_f32", {1, 1, 1}, {64, 1, 1}, 3, 1, 0}};
     kiln_hal_executable_params_t params = {"ptx", ptx.data(), ptx.size(), 1,
                                            exports};
     ASSERT_OK(kiln_hal_executable_cache_prepare_executable(cache, &params,
                                                            &executable));
   }

  void TearDown() override {
    kiln_hal_executable_release(executable);
    kiln_hal_executable_cache_release(cache);
    kiln_hal_device_release(device);
    kiln_hal_driver_registry_release(registry);
  }

  kiln_hal_buffer_t* allocate(kiln_device_size_t size) {
    kiln_hal_buffer_params_t params = {};
    params.memory_type =
        KILN_HAL_MEMORY_TYPE_DEVICE_LOCAL | KILN_HAL_MEMORY_TYPE_HOST_VISIBLE;
    params.usage = KILN_HAL_BUFFER_USAGE_DEFAULT | KILN_HAL_BUFFER_USAGE_MAPPING;
    kiln_hal_buffer_t* buffer = nullptr;
    kiln_status_t status = kiln_hal_allocator_allocate_buffer(
        kiln_hal_device_allocator(device), &params, size, &buffer);
    if (status) ADD_FAILURE() << TakeMessage(status);
    return buffer;
  }

  // A reusable command buffer: slot 2 = slot 0 + slot 1 over |n| floats.
  kiln_hal_command_buffer_t* recordAdd(uint32_t n) {
    kiln_hal_command_buffer_t* cb = nullptr;
    kiln_status_t status = kiln_hal_command_buffer_create(
        device, KILN_HAL_COMMAND_BUFFER_MODE_REUSABLE, 3, &cb);
    if (!status) status = kiln_hal_command_buffer_begin(cb);
    kiln_hal_buffer_ref_t bindings[3] = {
        {nullptr, 0, 0, KILN_HAL_WHOLE_BUFFER},
        {nullptr, 1, 0, KILN_HAL_WHOLE_BUFFER},
        {nullptr, 2, 0, KILN_HAL_WHOLE_BUFFER}};
    uint32_t grid[3] = {(n + 63) / 64, 1, 1};
    if (!status)
      status = kiln_hal_command_buffer_dispatch(cb, executable, 0, grid, 1, &n,
                                                3, bindings);
    if (!status) status = kiln_hal_command_buffer_end(cb);
    if (status) ADD_FAILURE() << TakeMessage(status);
    return cb;
  }

  kiln_hal_semaphore_t* semaphore() {
    kiln_hal_semaphore_t* s = nullptr;
    kiln_status_t status = kiln_hal_semaphore_create(device, 0, &s);
    if (status) ADD_FAILURE() << TakeMessage(status);
    return s;
  }

  kiln_hal_driver_registry_t* registry = nullptr;
  kiln_hal_device_t* device = nullptr;
  kiln_hal_executable_cache_t* cache = nullptr;
  kiln_hal_executable_t* executable = nullptr;
};

// 8 threads x 40 calls of one shared reusable command buffer, each thread
// chaining its calls on its own timeline and accumulating out += in, so any
// lost, reordered or duplicated submission shows in the final values.
TEST_F(HipStressTest, ConcurrentChainsFromManyThreads) {
  start();
  if (IsSkipped() || HasFatalFailure()) return;
  constexpr int kThreads = 8, kCalls = 40;
  constexpr uint32_t n = 1000;
  kiln_hal_command_buffer_t* cb = recordAdd(n);
  std::vector<kiln_hal_buffer_t*> accumulators, increments;
  std::vector<kiln_hal_semaphore_t*> timelines;
  for (int t = 0; t < kThreads; ++t) {
    accumulators.push_back(allocate(n * 4));
    increments.push_back(allocate(n * 4));
    std::vector<float> zeros(n, 0.0f), ones(n, float(t + 1));
    ASSERT_OK(kiln_hal_buffer_write(accumulators[t], 0, zeros.data(), n * 4));
    ASSERT_OK(kiln_hal_buffer_write(increments[t], 0, ones.data(), n * 4));
    timelines.push_back(semaphore());
  }
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int call = 0; call < kCalls; ++call) {
        // acc = acc + inc, in place (slot 0 and slot 2 are the same range).
        kiln_hal_binding_t table[3] = {
            {accumulators[t], 0, KILN_HAL_WHOLE_BUFFER},
            {increments[t], 0, KILN_HAL_WHOLE_BUFFER},
            {accumulators[t], 0, KILN_HAL_WHOLE_BUFFER}};
        kiln_hal_binding_table_t bindingTable = {3, table};
        uint64_t waitValue = uint64_t(call), signalValue = uint64_t(call + 1);
        kiln_hal_semaphore_list_t wait = {1, &timelines[t], &waitValue};
        kiln_hal_semaphore_list_t signal = {1, &timelines[t], &signalValue};
        kiln_status_t status = kiln_hal_device_queue_execute(
            device, KILN_HAL_QUEUE_AFFINITY_ANY, &wait, &signal, 1, &cb,
            &bindingTable);
        if (status) {
          ++errors;
          ADD_FAILURE() << TakeMessage(status);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(errors.load(), 0);
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_OK(kiln_hal_semaphore_wait(timelines[t], kCalls, kTimeout));
    std::vector<float> result(n);
    ASSERT_OK(kiln_hal_buffer_read(accumulators[t], 0, result.data(), n * 4));
    for (uint32_t i = 0; i < n; ++i)
      ASSERT_EQ(result[i], float(kCalls * (t + 1))) << "thread " << t << " i " << i;
  }
  for (int t = 0; t < kThreads; ++t) {
    kiln_hal_buffer_release(accumulators[t]);
    kiln_hal_buffer_release(increments[t]);
    kiln_hal_semaphore_release(timelines[t]);
  }
  kiln_hal_command_buffer_release(cb);
}

// Waiting threads finish their device queue's completed submissions
// themselves (QueueProgress). 300 submissions signal one timeline to 1, 2,
// ..., 300 in stream order while 8 threads wait for values spread over it,
// each stepping the queue: the submissions must still finish one at a time
// and in order (a later one finished first would move the timeline back and
// fail it), and every waiter must return.
TEST_F(HipStressTest, WaitersFinishSubmissionsInOrder) {
  start();
  if (IsSkipped() || HasFatalFailure())
    return;
  constexpr int kCalls = 300, kWaiters = 8;
  constexpr uint32_t n = 1000;
  kiln_hal_command_buffer_t *cb = recordAdd(n);
  kiln_hal_buffer_t *acc = allocate(n * 4);
  kiln_hal_buffer_t *inc = allocate(n * 4);
  std::vector<float> zeros(n, 0.0f), ones(n, 1.0f);
  ASSERT_OK(kiln_hal_buffer_write(acc, 0, zeros.data(), n * 4));
  ASSERT_OK(kiln_hal_buffer_write(inc, 0, ones.data(), n * 4));
  kiln_hal_semaphore_t *timeline = semaphore();
  kiln_hal_binding_t table[3] = {{acc, 0, KILN_HAL_WHOLE_BUFFER},
                                 {inc, 0, KILN_HAL_WHOLE_BUFFER},
                                 {acc, 0, KILN_HAL_WHOLE_BUFFER}};
  kiln_hal_binding_table_t bindingTable = {3, table};
  std::atomic<int> submitted{0};
  std::vector<std::thread> waiters;
  std::atomic<int> errors{0};
  for (int t = 0; t < kWaiters; ++t) {
    waiters.emplace_back([&, t] {
      // Each waiter starts once its first value is submitted, then waits
      // for every kWaiters-th value, from the latest backwards and then
      // forwards, so that waits for far and near values overlap.
      while (submitted.load() < t + 1)
        std::this_thread::yield();
      for (int pass = 0; pass < 2; ++pass) {
        for (int i = 0; i < kCalls / kWaiters; ++i) {
          int k = pass == 0 ? kCalls / kWaiters - 1 - i : i;
          uint64_t value = uint64_t(k * kWaiters + t + 1);
          kiln_status_t status =
              kiln_hal_semaphore_wait(timeline, value, kTimeout);
          if (status) {
            ++errors;
            ADD_FAILURE() << "waiter " << t << " value " << value << ": "
                          << TakeMessage(status);
            return;
          }
        }
      }
    });
  }
  for (int call = 0; call < kCalls; ++call) {
    uint64_t value = uint64_t(call + 1);
    kiln_hal_semaphore_list_t wait = {0, nullptr, nullptr};
    kiln_hal_semaphore_list_t signal = {1, &timeline, &value};
    ASSERT_OK(kiln_hal_device_queue_execute(device, KILN_HAL_QUEUE_AFFINITY_ANY,
                                            &wait, &signal, 1, &cb,
                                            &bindingTable));
    submitted.store(call + 1);
  }
  for (std::thread &waiter : waiters)
    waiter.join();
  EXPECT_EQ(errors.load(), 0);
  ASSERT_OK(kiln_hal_semaphore_wait(timeline, kCalls, kTimeout));
  uint64_t reached = 0;
  ASSERT_OK(kiln_hal_semaphore_query(timeline, &reached));
  EXPECT_EQ(reached, uint64_t(kCalls));
  std::vector<float> result(n);
  ASSERT_OK(kiln_hal_buffer_read(acc, 0, result.data(), n * 4));
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(result[i], float(kCalls));
  kiln_hal_semaphore_release(timeline);
  kiln_hal_buffer_release(acc);
  kiln_hal_buffer_release(inc);
  kiln_hal_command_buffer_release(cb);
}

// Synchronous profiled calls (span mode, as kiln_function_call_timed issues
// them) from several threads at once: the span's end event also marks each
// submission's completion, and the timing events are reused across calls.
TEST_F(HipStressTest, SpanProfiledCallsFromManyThreads) {
  start();
  if (IsSkipped() || HasFatalFailure())
    return;
  constexpr int kThreads = 4, kCalls = 50;
  constexpr uint32_t n = 4096;
  kiln_hal_command_buffer_t *cb = recordAdd(n);
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      kiln_hal_buffer_t *a = allocate(n * 4);
      kiln_hal_buffer_t *out = allocate(n * 4);
      kiln_hal_semaphore_t *done = semaphore();
      std::vector<float> av(n, float(t) + 0.5f), result(n);
      kiln_status_t status = kiln_hal_buffer_write(a, 0, av.data(), n * 4);
      for (int call = 0; call < kCalls && !status; ++call) {
        kiln_hal_binding_t table[3] = {{a, 0, KILN_HAL_WHOLE_BUFFER},
                                       {a, 0, KILN_HAL_WHOLE_BUFFER},
                                       {out, 0, KILN_HAL_WHOLE_BUFFER}};
        kiln_hal_binding_table_t bindingTable = {3, table};
        uint64_t value = uint64_t(call + 1);
        kiln_hal_semaphore_list_t wait = {0, nullptr, nullptr};
        kiln_hal_semaphore_list_t signal = {1, &done, &value};
        kiln_hal_execution_profile_t profile = {};
        profile.mode = KILN_HAL_PROFILE_SPAN;
        status = kiln_hal_device_queue_execute_profiled(
            device, KILN_HAL_QUEUE_AFFINITY_ANY, &wait, &signal, 1, &cb,
            &bindingTable, &profile);
        if (!status)
          status = kiln_hal_semaphore_wait(done, value, kTimeout);
        if (!status && profile.span_ns == 0) {
          ++errors;
          ADD_FAILURE() << "thread " << t << " call " << call
                        << ": no device span";
        }
        if (!status)
          status = kiln_hal_buffer_read(out, 0, result.data(), n * 4);
        if (!status && result[n - 1] != 2 * av[n - 1]) {
          ++errors;
          ADD_FAILURE() << "thread " << t << " call " << call << ": got "
                        << result[n - 1];
        }
      }
      if (status) {
        ++errors;
        ADD_FAILURE() << "thread " << t << ": " << TakeMessage(status);
      }
      kiln_hal_semaphore_release(done);
      kiln_hal_buffer_release(a);
      kiln_hal_buffer_release(out);
    });
  }
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(errors.load(), 0);
  kiln_hal_command_buffer_release(cb);
}

// A submission waits on two semaphores that the host signals in the
// opposite order, in several steps, from another thread; a second
// submission chains on the first's signal on the device.
TEST_F(HipStressTest, OutOfOrderSignallingReleasesDeferredWork) {
  start();
  if (IsSkipped() || HasFatalFailure()) return;
  constexpr uint32_t n = 256;
  kiln_hal_command_buffer_t* cb = recordAdd(n);
  kiln_hal_buffer_t* a = allocate(n * 4);
  kiln_hal_buffer_t* b = allocate(n * 4);
  kiln_hal_buffer_t* out = allocate(n * 4);
  std::vector<float> av(n, 1.5f), bv(n, 2.0f);
  ASSERT_OK(kiln_hal_buffer_write(a, 0, av.data(), n * 4));
  ASSERT_OK(kiln_hal_buffer_write(b, 0, bv.data(), n * 4));
  kiln_hal_semaphore_t* gates[2] = {semaphore(), semaphore()};
  kiln_hal_semaphore_t* middle = semaphore();
  kiln_hal_semaphore_t* done = semaphore();
  uint64_t gateValues[2] = {3, 2}, one = 1;
  kiln_hal_semaphore_list_t waitGates = {2, gates, gateValues};
  kiln_hal_semaphore_list_t signalMiddle = {1, &middle, &one};
  kiln_hal_semaphore_list_t waitMiddle = {1, &middle, &one};
  kiln_hal_semaphore_list_t signalDone = {1, &done, &one};
  kiln_hal_binding_t first[3] = {{a, 0, KILN_HAL_WHOLE_BUFFER},
                                 {b, 0, KILN_HAL_WHOLE_BUFFER},
                                 {out, 0, KILN_HAL_WHOLE_BUFFER}};
  kiln_hal_binding_t second[3] = {{out, 0, KILN_HAL_WHOLE_BUFFER},
                                  {b, 0, KILN_HAL_WHOLE_BUFFER},
                                  {out, 0, KILN_HAL_WHOLE_BUFFER}};
  kiln_hal_binding_table_t firstTable = {3, first}, secondTable = {3, second};
  ASSERT_OK(kiln_hal_device_queue_execute(device, KILN_HAL_QUEUE_AFFINITY_ANY,
                                          &waitGates, &signalMiddle, 1, &cb,
                                          &firstTable));
  ASSERT_OK(kiln_hal_device_queue_execute(device, KILN_HAL_QUEUE_AFFINITY_ANY,
                                          &waitMiddle, &signalDone, 1, &cb,
                                          &secondTable));
  EXPECT_EQ(kiln_status_consume_code(
                kiln_hal_semaphore_wait(done, 1, 20 * 1000 * 1000)),
            KILN_STATUS_DEADLINE_EXCEEDED);
  std::thread signaller([&] {
    EXPECT_EQ(kiln_hal_semaphore_signal(gates[1], 1), nullptr);
    EXPECT_EQ(kiln_hal_semaphore_signal(gates[1], 2), nullptr);
    EXPECT_EQ(kiln_hal_semaphore_signal(gates[0], 1), nullptr);
    EXPECT_EQ(kiln_hal_semaphore_signal(gates[0], 3), nullptr);
  });
  ASSERT_OK(kiln_hal_semaphore_wait(done, 1, kTimeout));
  signaller.join();
  std::vector<float> result(n);
  ASSERT_OK(kiln_hal_buffer_read(out, 0, result.data(), n * 4));
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(result[i], 1.5f + 2.0f + 2.0f);
  for (auto* s : {gates[0], gates[1], middle, done}) kiln_hal_semaphore_release(s);
  for (auto* buffer : {a, b, out}) kiln_hal_buffer_release(buffer);
  kiln_hal_command_buffer_release(cb);
}

// The 3rd submission's launch fails ($KILN_HIP_INJECT_FAILURE=3). The
// failure reaches its signal semaphore, a device-side dependent submission,
// and every host thread waiting on either; the queue keeps working.
TEST_F(HipStressTest, InjectedFailureReachesEveryWaiter) {
  start("3");
  if (IsSkipped() || HasFatalFailure()) return;
  constexpr uint32_t n = 128;
  kiln_hal_command_buffer_t* cb = recordAdd(n);
  kiln_hal_buffer_t* a = allocate(n * 4);
  kiln_hal_binding_t table[3] = {{a, 0, KILN_HAL_WHOLE_BUFFER},
                                 {a, 0, KILN_HAL_WHOLE_BUFFER},
                                 {a, 0, KILN_HAL_WHOLE_BUFFER}};
  kiln_hal_binding_table_t bindingTable = {3, table};
  kiln_hal_semaphore_t* timeline = semaphore();
  kiln_hal_semaphore_t* downstream = semaphore();
  for (uint64_t i = 0; i < 3; ++i) {
    uint64_t waitValue = i, signalValue = i + 1;
    kiln_hal_semaphore_list_t wait = {1, &timeline, &waitValue};
    kiln_hal_semaphore_list_t signal = {1, &timeline, &signalValue};
    ASSERT_OK(kiln_hal_device_queue_execute(device, KILN_HAL_QUEUE_AFFINITY_ANY,
                                            &wait, &signal, 1, &cb,
                                            &bindingTable));
  }
  uint64_t three = 3, one = 1;
  kiln_hal_semaphore_list_t waitThree = {1, &timeline, &three};
  kiln_hal_semaphore_list_t signalDownstream = {1, &downstream, &one};
  ASSERT_OK(kiln_hal_device_queue_execute(device, KILN_HAL_QUEUE_AFFINITY_ANY,
                                          &waitThree, &signalDownstream, 1, &cb,
                                          &bindingTable));
  constexpr int kWaiters = 8;
  std::vector<std::thread> waiters;
  std::vector<std::string> messages(kWaiters);
  for (int w = 0; w < kWaiters; ++w) {
    waiters.emplace_back([&, w] {
      kiln_hal_semaphore_t* on = w % 2 ? downstream : timeline;
      messages[w] = TakeMessage(kiln_hal_semaphore_wait(on, w % 2 ? 1 : 3, kTimeout));
    });
  }
  for (std::thread& waiter : waiters) waiter.join();
  for (int w = 0; w < kWaiters; ++w)
    EXPECT_NE(messages[w].find("injected failure"), std::string::npos)
        << "waiter " << w << ": " << messages[w];
  uint64_t value = 0;
  EXPECT_EQ(kiln_status_consume_code(kiln_hal_semaphore_query(timeline, &value)),
            KILN_STATUS_ABORTED);
  // The device still runs new work (submission 5; 6 would fail again).
  kiln_hal_semaphore_t* fresh = semaphore();
  kiln_hal_semaphore_list_t signalFresh = {1, &fresh, &one};
  ASSERT_OK(kiln_hal_device_queue_execute(device, KILN_HAL_QUEUE_AFFINITY_ANY,
                                          nullptr, &signalFresh, 1, &cb,
                                          &bindingTable));
  ASSERT_OK(kiln_hal_semaphore_wait(fresh, 1, kTimeout));
  for (auto* s : {timeline, downstream, fresh}) kiln_hal_semaphore_release(s);
  kiln_hal_buffer_release(a);
  kiln_hal_command_buffer_release(cb);
}

size_t countOf(const std::string &text, const std::string &word) {
  size_t count = 0;
  for (size_t at = text.find(word); at != std::string::npos;
       at = text.find(word, at + 1))
    ++count;
  return count;
}

// A graph capture that fails (injected as an invalidated capture) replays
// that run and tries again later: with every capture failing, after 1, 2
// and 4 replays, then never again (four reports, the last final); with
// every second capture failing, the capture after the failure succeeds.
// The results are right throughout.
class HipCaptureFailureTest : public HipStressTest {
protected:
  // Runs |calls| calls of recordAdd's command buffer, call i on binding table
  // i % 2 (x_t += 1 for table t's x), each after the one before, and checks
  // both x. Returns what the driver wrote on stderr meanwhile.
  std::string runAlternatingTables(kiln_hal_command_buffer_t *cb,
                                   kiln_hal_semaphore_t *timeline,
                                   kiln_hal_buffer_t *const x[2],
                                   kiln_hal_buffer_t *inc, uint32_t calls) {
    kiln_hal_binding_t tables[2][3];
    for (int t = 0; t < 2; ++t) {
      tables[t][0] = {x[t], 0, KILN_HAL_WHOLE_BUFFER};
      tables[t][1] = {inc, 0, KILN_HAL_WHOLE_BUFFER};
      tables[t][2] = {x[t], 0, KILN_HAL_WHOLE_BUFFER};
    }
    ::testing::internal::CaptureStderr();
    for (uint64_t call = 0; call < calls; ++call) {
      kiln_hal_binding_table_t table = {3, tables[call % 2]};
      uint64_t waitValue = call, signalValue = call + 1;
      kiln_hal_semaphore_list_t wait = {1, &timeline, &waitValue};
      kiln_hal_semaphore_list_t signal = {1, &timeline, &signalValue};
      EXPECT_OK(kiln_hal_device_queue_execute(
          device, KILN_HAL_QUEUE_AFFINITY_ANY, &wait, &signal, 1, &cb, &table));
    }
    EXPECT_OK(kiln_hal_semaphore_wait(timeline, calls, kTimeout));
    std::string log = ::testing::internal::GetCapturedStderr();
    for (int t = 0; t < 2; ++t) {
      float value[64];
      EXPECT_OK(kiln_hal_buffer_read(x[t], 0, value, sizeof(value)));
      float expected = float((calls + 1 - t) / 2);
      for (float v : value)
        EXPECT_EQ(v, expected) << "table " << t;
    }
    return log;
  }

  void run(const char *every, uint32_t calls, size_t retries, size_t finals) {
    start(nullptr, "1", every);
    if (IsSkipped() || HasFatalFailure())
      return;
    kiln_hal_command_buffer_t *cb = recordAdd(64);
    kiln_hal_buffer_t *x[2] = {allocate(256), allocate(256)};
    kiln_hal_buffer_t *inc = allocate(256);
    std::vector<float> zeros(64, 0.0f), ones(64, 1.0f);
    for (kiln_hal_buffer_t *buffer : x)
      ASSERT_OK(kiln_hal_buffer_write(buffer, 0, zeros.data(), 256));
    ASSERT_OK(kiln_hal_buffer_write(inc, 0, ones.data(), 256));
    kiln_hal_semaphore_t *timeline = semaphore();
    std::string log = runAlternatingTables(cb, timeline, x, inc, calls);
    EXPECT_EQ(countOf(log, "could not be captured into a graph"),
              retries + finals)
        << log;
    EXPECT_EQ(countOf(log, "a later run tries again"), retries) << log;
    EXPECT_EQ(countOf(log, "replayed on the stream from now on"), finals)
        << log;
    EXPECT_EQ(countOf(log, "$KILN_HIP_INJECT_CAPTURE_FAILURE"),
              retries + finals)
        << log;
    kiln_hal_semaphore_release(timeline);
    for (kiln_hal_buffer_t *buffer : x)
      kiln_hal_buffer_release(buffer);
    kiln_hal_buffer_release(inc);
    kiln_hal_command_buffer_release(cb);
  }
};

TEST_F(HipCaptureFailureTest, EveryCaptureFailsThenReplaysForGood) {
  // Captures at calls 0, 2, 5 and 10 (backoff 1, 2, 4), then none.
  run("1", 40, 3, 1);
}

TEST_F(HipCaptureFailureTest, CaptureAfterAFailureSucceeds) {
  // Capture 1 (table 0) succeeds, 2 (table 1) fails, 3 (table 1 after one
  // replay) succeeds; the graphs of both tables are cached from then on.
  run("2", 40, 1, 0);
}

// The module executor's pattern at a realistic size: a reusable command
// buffer of 50 dispatches replayed per call, as a graph ($KILN_HIP_GRAPHS=1)
// and as a stream replay (=0). Both must compute the same; the per-call
// host time of each is printed (evidence that the graph path is taken: it
// costs one launch instead of 50).
class HipReplayTest : public HipStressTest,
                      public ::testing::WithParamInterface<const char*> {};

TEST_P(HipReplayTest, FiftyDispatchFunctionReplayedPerCall) {
  start(nullptr, GetParam());
  if (IsSkipped() || HasFatalFailure()) return;
  constexpr uint32_t n = 4096, kDispatches = 50, kCalls = 200;
  kiln_hal_command_buffer_t* cb = nullptr;
  ASSERT_OK(kiln_hal_command_buffer_create(
      device, KILN_HAL_COMMAND_BUFFER_MODE_REUSABLE, 2, &cb));
  ASSERT_OK(kiln_hal_command_buffer_begin(cb));
  kiln_hal_buffer_ref_t bindings[3] = {
      {nullptr, 0, 0, KILN_HAL_WHOLE_BUFFER},
      {nullptr, 1, 0, KILN_HAL_WHOLE_BUFFER},
      {nullptr, 0, 0, KILN_HAL_WHOLE_BUFFER}};
  uint32_t grid[3] = {n / 64, 1, 1};
  uint32_t count = n;
  for (uint32_t d = 0; d < kDispatches; ++d) {
    ASSERT_OK(kiln_hal_command_buffer_dispatch(cb, executable, 0, grid, 1,
                                               &count, 3, bindings));
    ASSERT_OK(kiln_hal_command_buffer_execution_barrier(cb));
  }
  ASSERT_OK(kiln_hal_command_buffer_end(cb));
  kiln_hal_buffer_t* x = allocate(n * 4);
  kiln_hal_buffer_t* inc = allocate(n * 4);
  std::vector<float> zeros(n, 0.0f), ones(n, 1.0f);
  ASSERT_OK(kiln_hal_buffer_write(x, 0, zeros.data(), n * 4));
  ASSERT_OK(kiln_hal_buffer_write(inc, 0, ones.data(), n * 4));
  kiln_hal_binding_t table[2] = {{x, 0, KILN_HAL_WHOLE_BUFFER},
                                 {inc, 0, KILN_HAL_WHOLE_BUFFER}};
  kiln_hal_binding_table_t bindingTable = {2, table};
  kiln_hal_semaphore_t* timeline = semaphore();
  auto submit = [&](uint64_t call) {
    uint64_t waitValue = call, signalValue = call + 1;
    kiln_hal_semaphore_list_t wait = {1, &timeline, &waitValue};
    kiln_hal_semaphore_list_t signal = {1, &timeline, &signalValue};
    return kiln_hal_device_queue_execute(device, KILN_HAL_QUEUE_AFFINITY_ANY,
                                         &wait, &signal, 1, &cb,
                                         &bindingTable);
  };
  // Warm up (first call captures the graph), then time.
  ASSERT_OK(submit(0));
  ASSERT_OK(kiln_hal_semaphore_wait(timeline, 1, kTimeout));
  auto begin = std::chrono::steady_clock::now();
  for (uint64_t call = 1; call < kCalls; ++call) ASSERT_OK(submit(call));
  auto submitted = std::chrono::steady_clock::now();
  ASSERT_OK(kiln_hal_semaphore_wait(timeline, kCalls, kTimeout));
  auto done = std::chrono::steady_clock::now();
  auto us = [](auto d) {
    return std::chrono::duration<double, std::micro>(d).count();
  };
  std::printf("[ timing   ] graphs=%s: %u dispatches/call, %.1f us/call "
              "(submit %.1f us/call on the caller)\n",
              GetParam(), kDispatches, us(done - begin) / (kCalls - 1),
              us(submitted - begin) / (kCalls - 1));
  std::vector<float> result(n);
  ASSERT_OK(kiln_hal_buffer_read(x, 0, result.data(), n * 4));
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(result[i], float(kDispatches * kCalls)) << i;
  kiln_hal_semaphore_release(timeline);
  kiln_hal_buffer_release(x);
  kiln_hal_buffer_release(inc);
  kiln_hal_command_buffer_release(cb);
}

INSTANTIATE_TEST_SUITE_P(Modes, HipReplayTest, ::testing::Values("1", "0"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param[0] == '1'
                                                  ? "Graph"
                                                  : "StreamReplay");
                         });

}  // namespace
