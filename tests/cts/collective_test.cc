// Collectives between several devices of the driver under test (ranks are
// devices <driver>://0 .. N-1, N = min(device count, 4)). Skips where the
// driver has fewer than two devices or no collectives.

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "cts_test_base.h"

namespace kiln::cts {
namespace {

// Runs |call(r)| for ranks 0 .. |ranks| - 1 at once, each from its own
// thread (channel and window creation block until every rank has joined),
// and returns their statuses.
std::vector<kiln_status_t> onEveryRank(
    size_t ranks, const std::function<kiln_status_t(size_t)> &call) {
  std::vector<kiln_status_t> statuses(ranks, nullptr);
  std::vector<std::thread> threads;
  for (size_t r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] { statuses[r] = call(r); });
  for (std::thread &thread : threads) thread.join();
  return statuses;
}

class CollectiveTest : public CtsTest {
 protected:
  void SetUp() override {
    CtsTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    kiln_hal_driver_t* driver = nullptr;
    KILN_ASSERT_OK(kiln_hal_driver_registry_get_driver(
        registry, kiln_hal_device_driver_name(device), &driver));
    uint32_t count = 0;
    kiln_status_t status =
        kiln_hal_driver_enumerate_devices(driver, 0, nullptr, &count);
    ranks = count < 4 ? int32_t(count) : 4;
    // $KILN_CTS_RANKS=N opens N ranks on the driver's devices in turn (rank r
    // on device r mod count), each with the options in
    // $KILN_CTS_RANK_OPTIONS: e.g. N=2 and "logical=1" runs these tests on
    // two logical hip devices of one GPU.
    const char *rankCount = std::getenv("KILN_CTS_RANKS");
    const char *rankOptions = std::getenv("KILN_CTS_RANK_OPTIONS");
    if (rankCount && *rankCount && count > 0)
      ranks = std::atoi(rankCount);
    for (int32_t r = 0; r < ranks && !status; ++r) {
      kiln_hal_device_t* rankDevice = nullptr;
      status = kiln_hal_driver_create_device_with_options(
          driver, uint32_t(r) % count, rankOptions ? rankOptions : "",
          &rankDevice);
      if (!status) devices.push_back(rankDevice);
    }
    kiln_hal_driver_release(driver);
    KILN_ASSERT_OK(status);
    if (ranks < 2) GTEST_SKIP() << "driver has fewer than two devices";
    // One rank makes the id; every rank joins from its own thread (NCCL's
    // init blocks until the whole group has joined).
    uint8_t idBytes[KILN_HAL_CHANNEL_ID_MAX_LENGTH];
    size_t idLength = 0;
    status = kiln_hal_channel_id_create(devices[0], idBytes, sizeof(idBytes),
                                        &idLength);
    if (kiln_status_code(status) == KILN_STATUS_UNIMPLEMENTED)
      GTEST_SKIP() << "driver has no collectives: " << consumeStatus(status);
    KILN_ASSERT_OK(status);
    id.assign(idBytes, idBytes + idLength);
    channels.assign(size_t(ranks), nullptr);
    std::vector<kiln_status_t> statuses =
        onEveryRank(size_t(ranks), [&](size_t r) {
          kiln_hal_channel_params_t params = {int32_t(r), ranks, id.data(),
                                              id.size()};
          return kiln_hal_channel_create(devices[r], &params, &channels[r]);
        });
    bool unimplemented = false;
    std::string failures;
    for (int32_t r = 0; r < ranks; ++r) {
      kiln_status_t rankStatus = statuses[size_t(r)];
      if (!rankStatus) continue;
      unimplemented |= kiln_status_code(rankStatus) == KILN_STATUS_UNIMPLEMENTED;
      failures += "rank " + std::to_string(r) + ": " +
                  consumeStatus(rankStatus) + "\n";
    }
    channels.erase(std::remove(channels.begin(), channels.end(), nullptr),
                   channels.end());
    if (unimplemented) GTEST_SKIP() << "driver has no collectives: " << failures;
    ASSERT_TRUE(failures.empty()) << failures;
  }

  void TearDown() override {
    for (kiln_hal_channel_t* channel : channels) kiln_hal_channel_release(channel);
    for (kiln_hal_device_t* rankDevice : devices)
      kiln_hal_device_release(rankDevice);
    CtsTest::TearDown();
  }

  // Runs |ops[r]| on every rank at once with send bytes |sends[r]| and a
  // recv buffer of |recvSize| bytes (in place when |inPlace|: recv is the
  // send buffer). Returns each rank's recv bytes and status codes.
  std::vector<std::vector<uint8_t>> run(
      const std::vector<kiln_hal_collective_op_t>& ops,
      const std::vector<std::vector<uint8_t>>& sends, size_t recvSize,
      bool inPlace = false, std::vector<kiln_status_code_t>* codes = nullptr) {
    std::vector<kiln_hal_buffer_t*> sendBuffers, recvBuffers;
    std::vector<kiln_hal_semaphore_t*> done;
    for (int32_t r = 0; r < ranks; ++r) {
      kiln_hal_device_t* on = devices[size_t(r)];
      sendBuffers.push_back(allocateOn(on, sends[size_t(r)].size()));
      KILN_EXPECT_OK(kiln_hal_buffer_write(sendBuffers.back(), 0,
                                           sends[size_t(r)].data(),
                                           sends[size_t(r)].size()));
      recvBuffers.push_back(inPlace ? sendBuffers.back()
                                    : allocateOn(on, recvSize));
      kiln_hal_command_buffer_t* cb = nullptr;
      KILN_EXPECT_OK(kiln_hal_command_buffer_create(
          on, KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0, &cb));
      KILN_EXPECT_OK(kiln_hal_command_buffer_begin(cb));
      KILN_EXPECT_OK(kiln_hal_command_buffer_collective(
          cb, channels[size_t(r)], &ops[size_t(r)], ref(sendBuffers.back()),
          ref(recvBuffers.back())));
      KILN_EXPECT_OK(kiln_hal_command_buffer_end(cb));
      kiln_hal_semaphore_t* semaphore = nullptr;
      KILN_EXPECT_OK(kiln_hal_semaphore_create(on, 0, &semaphore));
      done.push_back(semaphore);
      uint64_t one = 1;
      kiln_hal_semaphore_list_t signal = semaphoreList(&done.back(), &one, 1);
      KILN_EXPECT_OK(kiln_hal_device_queue_execute(
          on, KILN_HAL_QUEUE_AFFINITY_ANY, nullptr, &signal, 1, &cb, nullptr));
      kiln_hal_command_buffer_release(cb);
    }
    std::vector<std::vector<uint8_t>> results(static_cast<size_t>(ranks));
    for (int32_t r = 0; r < ranks; ++r) {
      kiln_status_t status =
          kiln_hal_semaphore_wait(done[size_t(r)], 1, kLongTimeout);
      if (codes) {
        codes->push_back(kiln_status_code(status));
        kiln_status_free(status);
      } else {
        KILN_EXPECT_OK(status);
      }
      results[size_t(r)].resize(recvSize);
      if (recvSize)
        KILN_EXPECT_OK(kiln_hal_buffer_read(recvBuffers[size_t(r)], 0,
                                            results[size_t(r)].data(),
                                            recvSize));
      kiln_hal_semaphore_release(done[size_t(r)]);
      kiln_hal_buffer_release(sendBuffers[size_t(r)]);
      if (!inPlace) kiln_hal_buffer_release(recvBuffers[size_t(r)]);
    }
    return results;
  }

  std::vector<kiln_hal_collective_op_t> same(kiln_hal_collective_op_t op) {
    return std::vector<kiln_hal_collective_op_t>(size_t(ranks), op);
  }

  int32_t ranks = 0;
  std::vector<kiln_hal_device_t*> devices;
  std::vector<kiln_hal_channel_t*> channels;
  std::vector<uint8_t> id;  // the group's rendezvous id
};

template <typename T>
std::vector<uint8_t> bytesOf(const std::vector<T>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <typename T>
std::vector<T> valuesOf(const std::vector<uint8_t>& bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

// Every rank creates the window from its own thread (creation is
// collective); returns the windows, or an empty vector after a failure
// (reported) or where the driver has none (|unimplemented| set).
std::vector<kiln_hal_window_t *> createWindows(
    const std::vector<kiln_hal_channel_t *> &channels,
    const std::vector<kiln_hal_window_params_t> &params, bool *unimplemented,
    std::vector<kiln_status_code_t> *codes = nullptr) {
  size_t ranks = channels.size();
  std::vector<kiln_hal_window_t *> windows(ranks, nullptr);
  std::vector<kiln_status_t> statuses = onEveryRank(ranks, [&](size_t r) {
    return kiln_hal_window_create(channels[r], &params[r], &windows[r]);
  });
  *unimplemented = false;
  bool failed = false;
  for (size_t r = 0; r < ranks; ++r) {
    if (codes) codes->push_back(kiln_status_code(statuses[r]));
    if (!statuses[r]) continue;
    failed = true;
    *unimplemented |=
        kiln_status_code(statuses[r]) == KILN_STATUS_UNIMPLEMENTED;
    std::string message = kiln_status_message(statuses[r]);
    kiln_status_free(statuses[r]);
    if (!codes && !*unimplemented)
      ADD_FAILURE() << "rank " << r << ": " << message;
  }
  if (failed) {
    for (kiln_hal_window_t *window : windows) kiln_hal_window_release(window);
    return {};
  }
  return windows;
}

// The CTS kernels: tests/cts/testdata/cts_kernels.c as a host shared object
// (`local`), or tests/cts/testdata/cts_kernels_nvptx.ll as PTX (`hip` on
// NVIDIA), whichever format the device's executable cache prepares.
class CtsKernels {
 public:
   // Reads both binaries (the PTX may be absent: llc not found at build
   // time); false (reported) if the host one cannot be read.
   bool load() {
     host_ = readBinary("KILN_CTS_KERNELS_PATH", KILN_CTS_KERNELS_PATH);
     ptx_ = readBinary("KILN_CTS_PTX_KERNELS_PATH", KILN_CTS_PTX_KERNELS_PATH);
     if (host_.empty())
       ADD_FAILURE() << "cannot read the CTS host kernels";
     return !host_.empty();
  }

  // Dispatches |name| (bindings, push constants) once, as one workgroup of
  // one thread, on |on|; returns the semaphore that reaches 1 when it is
  // done.
  kiln_hal_semaphore_t *dispatchOnce(kiln_hal_device_t *on, const char *name,
                                     std::vector<kiln_hal_buffer_ref_t> bindings,
                                     std::vector<uint32_t> constants) {
    kiln_hal_executable_export_t kernel = {name,
                                           {1, 1, 1},
                                           {1, 1, 1},
                                           uint32_t(bindings.size()),
                                           uint32_t(constants.size()),
                                           0};
    kiln_hal_executable_cache_t *cache = nullptr;
    KILN_EXPECT_OK(kiln_hal_executable_cache_create(on, &cache));
    bool host =
        kiln_hal_executable_cache_can_prepare_format(cache, "elf-so-v1");
    const std::vector<uint8_t> &binary = host ? host_ : ptx_;
    EXPECT_FALSE(binary.empty())
        << "no CTS kernels in a format this device runs ('elf-so-v1', or "
           "'ptx' when llc was found at build time)";
    kiln_hal_executable_params_t params = {
        host ? "elf-so-v1" : "ptx", binary.data(), binary.size(), 1, &kernel};
    kiln_hal_executable_t *executable = nullptr;
    KILN_EXPECT_OK(kiln_hal_executable_cache_prepare_executable(cache, &params,
                                                                &executable));
    kiln_hal_executable_cache_release(cache);
    kiln_hal_command_buffer_t *cb = nullptr;
    KILN_EXPECT_OK(kiln_hal_command_buffer_create(
        on, KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0, &cb));
    KILN_EXPECT_OK(kiln_hal_command_buffer_begin(cb));
    KILN_EXPECT_OK(kiln_hal_command_buffer_dispatch(
        cb, executable, 0, nullptr, uint32_t(constants.size()),
        constants.data(), uint32_t(bindings.size()), bindings.data()));
    KILN_EXPECT_OK(kiln_hal_command_buffer_end(cb));
    kiln_hal_semaphore_t *semaphore = nullptr;
    KILN_EXPECT_OK(kiln_hal_semaphore_create(on, 0, &semaphore));
    uint64_t one = 1;
    kiln_hal_semaphore_list_t signal = semaphoreList(&semaphore, &one, 1);
    KILN_EXPECT_OK(kiln_hal_device_queue_execute(
        on, KILN_HAL_QUEUE_AFFINITY_ANY, nullptr, &signal, 1, &cb, nullptr));
    kiln_hal_command_buffer_release(cb);
    kiln_hal_executable_release(executable);
    return semaphore;
  }

  // The group's abort word as a kernel on |on| reads it through |window|'s
  // peer table (the window of a |ranks|-rank group).
  uint64_t abortWord(kiln_hal_device_t *on, kiln_hal_window_t *window,
                     int32_t ranks) {
    uint64_t word = ~uint64_t{0};
    kiln_hal_buffer_t *result = allocateOn(on, 8);
    kiln_hal_semaphore_t *semaphore = dispatchOnce(
        on, "cts_window_abort_word",
        {ref(kiln_hal_window_peer_table(window)), ref(result)},
        {uint32_t(ranks)});
    KILN_EXPECT_OK(kiln_hal_semaphore_wait(semaphore, 1, kLongTimeout));
    KILN_EXPECT_OK(kiln_hal_buffer_read(result, 0, &word, 8));
    kiln_hal_semaphore_release(semaphore);
    kiln_hal_buffer_release(result);
    return word;
  }

 private:
   static std::vector<uint8_t> readBinary(const char *variable,
                                          const char *builtIn) {
     const char *path = std::getenv(variable);
     if (!path || !*path)
       path = builtIn;
     if (!*path)
       return {};
     std::ifstream file(path, std::ios::binary);
     return std::vector<uint8_t>(std::istreambuf_iterator<char>(file), {});
   }

   std::vector<uint8_t> host_;
   std::vector<uint8_t> ptx_;
};

// Every rank's kernel writes through the peer table into every rank's data
// and signals (cts_window_put); each rank then finds every peer's word and
// signal in its own window. The memory starts zeroed, and each rank's lives
// on after its owner released its window while a peer still holds one.
TEST_P(CollectiveTest, WindowPeersWriteEachOthersDataAndSignals) {
  constexpr uint64_t kSize = 4096;
  constexpr uint32_t kSignals = 8;
  bool unimplemented = false;
  std::vector<kiln_hal_window_t *> windows = createWindows(
      channels,
      std::vector<kiln_hal_window_params_t>(size_t(ranks), {kSize, kSignals}),
      &unimplemented);
  if (unimplemented) GTEST_SKIP() << "driver has no symmetric windows";
  ASSERT_EQ(windows.size(), size_t(ranks));
  for (int32_t r = 0; r < ranks; ++r) {
    kiln_hal_window_t *window = windows[size_t(r)];
    EXPECT_EQ(kiln_hal_window_size(window), kSize);
    EXPECT_EQ(kiln_hal_window_signal_count(window), kSignals);
    EXPECT_EQ(kiln_hal_buffer_byte_length(kiln_hal_window_data(window)), kSize);
    EXPECT_EQ(kiln_hal_buffer_byte_length(kiln_hal_window_signals(window)),
              8u * kSignals);
    EXPECT_EQ(kiln_hal_buffer_byte_length(kiln_hal_window_peer_table(window)),
              16u * uint64_t(ranks) + 8);
    std::vector<uint32_t> data(kSize / 4, 1);
    KILN_EXPECT_OK(readFromDevice(
        devices[size_t(r)], kiln_hal_window_data(window), data.data(), kSize));
    for (uint32_t word : data) ASSERT_EQ(word, 0u) << "rank " << r;
  }
  CtsKernels kernels;
  ASSERT_TRUE(kernels.load());
  std::vector<kiln_hal_semaphore_t *> done;
  for (int32_t r = 0; r < ranks; ++r)
    done.push_back(kernels.dispatchOnce(
        devices[size_t(r)], "cts_window_put",
        {ref(kiln_hal_window_peer_table(windows[size_t(r)]))},
        {uint32_t(r), uint32_t(ranks)}));
  for (kiln_hal_semaphore_t *semaphore : done) {
    KILN_EXPECT_OK(kiln_hal_semaphore_wait(semaphore, 1, kLongTimeout));
    kiln_hal_semaphore_release(semaphore);
  }
  // The group's abort word: zero while every rank holds its window, set
  // once one lets it go (compiled collectives waiting for a peer stop).
  auto abortWord = [&](int32_t r) {
    return kernels.abortWord(devices[size_t(r)], windows[size_t(r)], ranks);
  };
  EXPECT_EQ(abortWord(ranks - 1), 0u);
  // Rank 0 lets its window go first: the others still read its memory.
  kiln_hal_window_release(windows[0]);
  EXPECT_NE(abortWord(ranks - 1), 0u);
  for (int32_t r = 1; r < ranks; ++r) {
    std::vector<uint32_t> data(static_cast<size_t>(ranks));
    KILN_EXPECT_OK(readFromDevice(devices[size_t(r)],
                                  kiln_hal_window_data(windows[size_t(r)]),
                                  data.data(), data.size() * 4));
    std::vector<uint64_t> signals(kSignals);
    KILN_EXPECT_OK(readFromDevice(devices[size_t(r)],
                                  kiln_hal_window_signals(windows[size_t(r)]),
                                  signals.data(), kSignals * 8));
    for (int32_t peer = 0; peer < ranks; ++peer) {
      EXPECT_EQ(data[size_t(peer)], 100u + uint32_t(peer))
          << "rank " << r << ", word of rank " << peer;
      EXPECT_EQ(signals[size_t(peer)], 1u)
          << "rank " << r << ", signal of rank " << peer;
    }
    for (uint32_t slot = uint32_t(ranks); slot < kSignals; ++slot)
      EXPECT_EQ(signals[slot], 0u) << "rank " << r << ", slot " << slot;
    kiln_hal_window_release(windows[size_t(r)]);
  }
}

// A failed submission on a rank's device aborts the windows of that device's
// channels: compiled collectives on every rank stop waiting for a rank
// whose later work will never run (drivers/common/window_aborts.h).
TEST_P(CollectiveTest, FailedSubmissionAbortsTheWindowGroup) {
  bool unimplemented = false;
  std::vector<kiln_hal_window_t *> windows = createWindows(
      channels,
      std::vector<kiln_hal_window_params_t>(size_t(ranks), {256, 4}),
      &unimplemented);
  if (unimplemented) GTEST_SKIP() << "driver has no symmetric windows";
  ASSERT_EQ(windows.size(), size_t(ranks));
  CtsKernels kernels;
  ASSERT_TRUE(kernels.load());
  EXPECT_EQ(kernels.abortWord(devices[0], windows[0], ranks), 0u);
  // A submission of the last rank waits for a semaphore that fails.
  kiln_hal_device_t *last = devices.back();
  kiln_hal_semaphore_t *input = nullptr, *done = nullptr;
  KILN_ASSERT_OK(kiln_hal_semaphore_create(last, 0, &input));
  KILN_ASSERT_OK(kiln_hal_semaphore_create(last, 0, &done));
  kiln_hal_command_buffer_t *cb = nullptr;
  KILN_ASSERT_OK(kiln_hal_command_buffer_create(
      last, KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0, &cb));
  KILN_ASSERT_OK(kiln_hal_command_buffer_begin(cb));
  KILN_ASSERT_OK(kiln_hal_command_buffer_end(cb));
  uint64_t one = 1;
  kiln_hal_semaphore_list_t wait = semaphoreList(&input, &one, 1);
  kiln_hal_semaphore_list_t signal = semaphoreList(&done, &one, 1);
  KILN_ASSERT_OK(kiln_hal_device_queue_execute(
      last, KILN_HAL_QUEUE_AFFINITY_ANY, &wait, &signal, 1, &cb, nullptr));
  // Nothing failed yet: the group is whole.
  EXPECT_EQ(kernels.abortWord(devices[0], windows[0], ranks), 0u);
  kiln_hal_semaphore_fail(input, kiln_make_status(KILN_STATUS_ABORTED,
                                                  "cts: an input never came"));
  kiln_status_t status = kiln_hal_semaphore_wait(done, 1, kLongTimeout);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_ABORTED);
  kiln_status_free(status);
  // Every rank's kernels see the group aborted, the failed rank's too.
  for (int32_t r = 0; r < ranks; ++r)
    EXPECT_NE(kernels.abortWord(devices[size_t(r)], windows[size_t(r)], ranks),
              0u)
        << "rank " << r;
  kiln_hal_command_buffer_release(cb);
  kiln_hal_semaphore_release(input);
  kiln_hal_semaphore_release(done);
  for (kiln_hal_window_t *window : windows) kiln_hal_window_release(window);
}

// Ranks that ask for different windows all fail (none waits forever), the
// group still works afterwards, and bad parameters are refused before any
// rank waits.
TEST_P(CollectiveTest, MismatchedWindowsFailEveryRankAndBadParamsAreRefused) {
  std::vector<kiln_hal_window_params_t> params(size_t(ranks), {256, 4});
  params.back().size = 512;
  bool unimplemented = false;
  std::vector<kiln_status_code_t> codes;
  std::vector<kiln_hal_window_t *> windows =
      createWindows(channels, params, &unimplemented, &codes);
  if (unimplemented) GTEST_SKIP() << "driver has no symmetric windows";
  EXPECT_TRUE(windows.empty());
  for (kiln_status_code_t code : codes)
    EXPECT_EQ(code, KILN_STATUS_FAILED_PRECONDITION);
  windows = createWindows(
      channels, std::vector<kiln_hal_window_params_t>(size_t(ranks), {64, 0}),
      &unimplemented);
  ASSERT_EQ(windows.size(), size_t(ranks));
  // No signal slots still gives one 8-byte buffer.
  EXPECT_EQ(kiln_hal_buffer_byte_length(kiln_hal_window_signals(windows[0])),
            8u);
  for (kiln_hal_window_t *window : windows) kiln_hal_window_release(window);

  kiln_hal_window_t *window = nullptr;
  for (kiln_hal_window_params_t bad :
       {kiln_hal_window_params_t{0, 1},
        kiln_hal_window_params_t{(uint64_t(1) << 40) + 1, 1},
        kiln_hal_window_params_t{64, (1u << 20) + 1}}) {
    kiln_status_t status = kiln_hal_window_create(channels[0], &bad, &window);
    EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(window, nullptr);
    kiln_status_free(status);
  }
  kiln_status_t status = kiln_hal_window_create(channels[0], nullptr, &window);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT);
  kiln_status_free(status);
}

TEST_P(CollectiveTest, AllReduceSumF32) {
  constexpr uint64_t n = 37;
  std::vector<std::vector<uint8_t>> sends;
  for (int32_t r = 0; r < ranks; ++r) {
    std::vector<float> values(n);
    for (uint64_t i = 0; i < n; ++i) values[i] = float(r * 100) + float(i);
    sends.push_back(bytesOf(values));
  }
  auto results = run(same({KILN_HAL_COLLECTIVE_ALL_REDUCE, KILN_HAL_REDUCTION_SUM,
                           KILN_HAL_ELEMENT_TYPE_F32, n, 0}),
                     sends, n * 4);
  for (int32_t r = 0; r < ranks; ++r) {
    std::vector<float> got = valuesOf<float>(results[size_t(r)]);
    for (uint64_t i = 0; i < n; ++i) {
      float expected = 0;
      for (int32_t s = 0; s < ranks; ++s) expected += float(s * 100) + float(i);
      EXPECT_EQ(got[i], expected) << "rank " << r << " element " << i;
    }
  }
}

TEST_P(CollectiveTest, AllReduceMaxI32InPlace) {
  constexpr uint64_t n = 8;
  std::vector<std::vector<uint8_t>> sends;
  for (int32_t r = 0; r < ranks; ++r) {
    std::vector<int32_t> values(n);
    for (uint64_t i = 0; i < n; ++i) values[i] = (i % 2 ? 1 : -1) * r * int32_t(i);
    sends.push_back(bytesOf(values));
  }
  auto results = run(same({KILN_HAL_COLLECTIVE_ALL_REDUCE, KILN_HAL_REDUCTION_MAX,
                           KILN_HAL_ELEMENT_TYPE_I32, n, 0}),
                     sends, n * 4, /*inPlace=*/true);
  for (int32_t r = 0; r < ranks; ++r) {
    std::vector<int32_t> got = valuesOf<int32_t>(results[size_t(r)]);
    for (uint64_t i = 0; i < n; ++i)
      EXPECT_EQ(got[i], i % 2 ? (ranks - 1) * int32_t(i) : 0) << i;
  }
}

TEST_P(CollectiveTest, AllReduceAvgBF16AndMinF16) {
  // bf16 1.0 = 0x3F80, 3.0 = 0x4040; f16 2.0 = 0x4000, -1.0 = 0xBC00.
  std::vector<std::vector<uint8_t>> bf16, f16;
  for (int32_t r = 0; r < ranks; ++r) {
    bf16.push_back(bytesOf(std::vector<uint16_t>{
        uint16_t(r % 2 ? 0x4040 : 0x3F80), 0x3F80}));
    f16.push_back(bytesOf(std::vector<uint16_t>{
        uint16_t(r == 1 ? 0xBC00 : 0x4000), 0x4000}));
  }
  auto avg = run(same({KILN_HAL_COLLECTIVE_ALL_REDUCE, KILN_HAL_REDUCTION_AVG,
                       KILN_HAL_ELEMENT_TYPE_BF16, 2, 0}),
                 bf16, 4);
  // Average of alternating 1 and 3 is 2 (0x4000) for an even rank count.
  if (ranks % 2 == 0)
    EXPECT_EQ(valuesOf<uint16_t>(avg[0])[0], 0x4000);
  EXPECT_EQ(valuesOf<uint16_t>(avg[0])[1], 0x3F80);
  auto min = run(same({KILN_HAL_COLLECTIVE_ALL_REDUCE, KILN_HAL_REDUCTION_MIN,
                       KILN_HAL_ELEMENT_TYPE_F16, 2, 0}),
                 f16, 4);
  for (int32_t r = 0; r < ranks; ++r) {
    EXPECT_EQ(valuesOf<uint16_t>(min[size_t(r)])[0], 0xBC00);
    EXPECT_EQ(valuesOf<uint16_t>(min[size_t(r)])[1], 0x4000);
  }
}

TEST_P(CollectiveTest, AllGatherReduceScatterAllToAllBroadcast) {
  uint64_t n = uint64_t(ranks) * 2;  // splits evenly
  std::vector<std::vector<uint8_t>> sends;
  for (int32_t r = 0; r < ranks; ++r) {
    std::vector<int64_t> values(n);
    for (uint64_t i = 0; i < n; ++i) values[i] = r * 1000 + int64_t(i);
    sends.push_back(bytesOf(values));
  }
  auto gathered = run(same({KILN_HAL_COLLECTIVE_ALL_GATHER, KILN_HAL_REDUCTION_NONE,
                            KILN_HAL_ELEMENT_TYPE_I64, n, 0}),
                      sends, n * 8 * uint64_t(ranks));
  auto scattered = run(same({KILN_HAL_COLLECTIVE_REDUCE_SCATTER,
                             KILN_HAL_REDUCTION_SUM, KILN_HAL_ELEMENT_TYPE_I64,
                             n, 0}),
                       sends, 2 * 8);
  auto exchanged = run(same({KILN_HAL_COLLECTIVE_ALL_TO_ALL,
                             KILN_HAL_REDUCTION_NONE, KILN_HAL_ELEMENT_TYPE_I64,
                             n, 0}),
                       sends, n * 8);
  auto broadcast = run(same({KILN_HAL_COLLECTIVE_BROADCAST,
                             KILN_HAL_REDUCTION_NONE, KILN_HAL_ELEMENT_TYPE_I64,
                             n, 1}),
                       sends, n * 8);
  for (int32_t r = 0; r < ranks; ++r) {
    std::vector<int64_t> g = valuesOf<int64_t>(gathered[size_t(r)]);
    for (int32_t s = 0; s < ranks; ++s)
      for (uint64_t i = 0; i < n; ++i)
        EXPECT_EQ(g[uint64_t(s) * n + i], s * 1000 + int64_t(i));
    std::vector<int64_t> rs = valuesOf<int64_t>(scattered[size_t(r)]);
    for (uint64_t i = 0; i < 2; ++i) {
      int64_t expected = 0;
      for (int32_t s = 0; s < ranks; ++s)
        expected += s * 1000 + int64_t(uint64_t(r) * 2 + i);
      EXPECT_EQ(rs[i], expected);
    }
    std::vector<int64_t> a2a = valuesOf<int64_t>(exchanged[size_t(r)]);
    for (int32_t s = 0; s < ranks; ++s)
      for (uint64_t i = 0; i < 2; ++i)
        EXPECT_EQ(a2a[uint64_t(s) * 2 + i],
                  s * 1000 + int64_t(uint64_t(r) * 2 + i));
    std::vector<int64_t> b = valuesOf<int64_t>(broadcast[size_t(r)]);
    for (uint64_t i = 0; i < n; ++i) EXPECT_EQ(b[i], 1000 + int64_t(i));
  }
}

TEST_P(CollectiveTest, MismatchedCollectivesFailEveryRankAndGroupRecovers) {
  std::vector<std::vector<uint8_t>> sends(size_t(ranks),
                                          std::vector<uint8_t>(64, 1));
  auto ops = same({KILN_HAL_COLLECTIVE_ALL_REDUCE, KILN_HAL_REDUCTION_SUM,
                   KILN_HAL_ELEMENT_TYPE_U8, 16, 0});
  ops[1].element_count = 8;
  std::vector<kiln_status_code_t> codes;
  run(ops, sends, 16, false, &codes);
  ASSERT_EQ(codes.size(), size_t(ranks));
  for (kiln_status_code_t code : codes) EXPECT_NE(code, KILN_STATUS_OK);
  // A well-formed collective on the same channels still works.
  auto results = run(same({KILN_HAL_COLLECTIVE_ALL_REDUCE, KILN_HAL_REDUCTION_SUM,
                           KILN_HAL_ELEMENT_TYPE_U8, 16, 0}),
                     sends, 16);
  for (uint8_t value : results[0]) EXPECT_EQ(value, uint8_t(ranks));
}

TEST_P(CollectiveTest, ChannelRanksAreUniquePerGroup) {
  EXPECT_EQ(kiln_hal_channel_rank(channels[1]), 1);
  EXPECT_EQ(kiln_hal_channel_count(channels[1]), ranks);
  kiln_hal_channel_params_t params = {1, ranks, id.data(), id.size()};
  kiln_hal_channel_t* duplicate = nullptr;
  KILN_EXPECT_STATUS(KILN_STATUS_ALREADY_EXISTS,
                     kiln_hal_channel_create(devices[1], &params, &duplicate));
}

KILN_CTS_INSTANTIATE(CollectiveTest);

}  // namespace
}  // namespace kiln::cts
