// The hip driver on real GPUs (each test skips, with the reason, where the
// machine lacks what it needs): device options in the URI, the executable
// target check, peer access between two devices, and collective channels
// over NCCL/RCCL between two devices of this process (one thread per rank,
// as ncclCommInitRank blocks until every rank joined). The CTS
// (tests/cts/collective_test.cc) checks the collective results in full;
// these tests cover what is specific to this driver. Every wait has a
// timeout, so a bug fails a test instead of hanging it.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "kiln/hal/hal.h"
#include "status_test_util.h"

namespace {

constexpr kiln_duration_t kTimeout = 60ll * 1000 * 1000 * 1000;

using kiln::testing::TakeMessage;


class HipDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"KILN_HIP_NCCL_LIBRARY", "KILN_HIP_RCCL_LIBRARY",
                             "KILN_HIP_GRAPHS", "KILN_HIP_INJECT_FAILURE"})
      unsetenv(name);
    ASSERT_OK(kiln_hal_driver_registry_create(&registry));
    const char* plugin = std::getenv("KILN_HIP_PLUGIN_PATH");
    ASSERT_OK(kiln_hal_driver_registry_load_plugin(
        registry, plugin && *plugin ? plugin : KILN_HIP_PLUGIN_PATH));
    kiln_status_t status =
        kiln_hal_driver_registry_get_driver(registry, "hip", &driver);
    if (kiln_status_code(status) == KILN_STATUS_UNAVAILABLE)
      GTEST_SKIP() << "no GPU for the hip driver here: " << TakeMessage(status);
    ASSERT_OK(status);
    ASSERT_OK(kiln_hal_driver_enumerate_devices(driver, 0, nullptr, &count));
  }
  void TearDown() override {
    for (kiln_hal_channel_t* channel : channels) kiln_hal_channel_release(channel);
    for (kiln_hal_device_t* device : devices) kiln_hal_device_release(device);
    kiln_hal_driver_release(driver);
    kiln_hal_driver_registry_release(registry);
  }

  // Opens hip://0 .. hip://n-1. May skip (too few GPUs, no NCCL): GTEST_SKIP
  // here ends only this helper, so every test follows the call with
  // `if (IsSkipped() || HasFatalFailure()) return;`.
  void open(uint32_t n, const char* options = "") {
    if (count < n) GTEST_SKIP() << "needs " << n << " GPUs, this machine has " << count;
    for (uint32_t i = 0; i < n; ++i) {
      kiln_hal_device_t* device = nullptr;
      ASSERT_OK(kiln_hal_driver_create_device_with_options(driver, i, options,
                                                           &device));
      devices.push_back(device);
    }
  }

  // One channel per open device, joined from one thread per rank.
  void joinChannels() {
    uint8_t id[KILN_HAL_CHANNEL_ID_MAX_LENGTH];
    size_t length = 0;
    kiln_status_t status =
        kiln_hal_channel_id_create(devices[0], id, sizeof(id), &length);
    if (kiln_status_code(status) == KILN_STATUS_UNAVAILABLE)
      GTEST_SKIP() << "no NCCL/RCCL here: " << TakeMessage(status);
    ASSERT_OK(status);
    int32_t ranks = int32_t(devices.size());
    channels.assign(devices.size(), nullptr);
    std::vector<kiln_status_t> statuses(devices.size(), nullptr);
    std::vector<std::thread> threads;
    for (int32_t r = 0; r < ranks; ++r)
      threads.emplace_back([&, r] {
        kiln_hal_channel_params_t params = {r, ranks, id, length};
        statuses[size_t(r)] = kiln_hal_channel_create(
            devices[size_t(r)], &params, &channels[size_t(r)]);
      });
    for (std::thread& thread : threads) thread.join();
    for (kiln_status_t s : statuses) ASSERT_OK(s);
  }

  // Opens |n| logical devices of GPU 0 (hip://0?logical=1) and joins their
  // channels. As open(), may skip: follow with the same check.
  void openLogical(int n) {
    if (count < 1) GTEST_SKIP() << "no GPU";
    for (int i = 0; i < n; ++i) {
      kiln_hal_device_t* device = nullptr;
      ASSERT_OK(kiln_hal_driver_create_device_with_options(driver, 0,
                                                           "logical=1", &device));
      devices.push_back(device);
    }
    joinChannels();
  }

  // One window of |params| per channel, created from one thread per rank
  // (creation is collective); failures are reported.
  std::vector<kiln_hal_window_t*> createWindows(kiln_hal_window_params_t params) {
    std::vector<kiln_hal_window_t*> windows(channels.size(), nullptr);
    std::vector<kiln_status_t> statuses(channels.size(), nullptr);
    std::vector<std::thread> threads;
    for (size_t r = 0; r < channels.size(); ++r)
      threads.emplace_back([&, r] {
        statuses[r] = kiln_hal_window_create(channels[r], &params, &windows[r]);
      });
    for (std::thread& thread : threads) thread.join();
    for (kiln_status_t status : statuses)
      if (status) ADD_FAILURE() << TakeMessage(status);
    return windows;
  }

  kiln_hal_buffer_t* allocate(kiln_hal_device_t* device, size_t size) {
    kiln_hal_buffer_params_t params = {};
    params.memory_type =
        KILN_HAL_MEMORY_TYPE_DEVICE_LOCAL | KILN_HAL_MEMORY_TYPE_HOST_VISIBLE;
    params.usage = KILN_HAL_BUFFER_USAGE_DEFAULT | KILN_HAL_BUFFER_USAGE_MAPPING |
                   KILN_HAL_BUFFER_USAGE_COLLECTIVE;
    kiln_hal_buffer_t* buffer = nullptr;
    kiln_status_t status = kiln_hal_allocator_allocate_buffer(
        kiln_hal_device_allocator(device), &params, size, &buffer);
    if (status) ADD_FAILURE() << TakeMessage(status);
    return buffer;
  }

  static kiln_hal_buffer_ref_t ref(kiln_hal_buffer_t* buffer) {
    return {buffer, 0, 0, KILN_HAL_WHOLE_BUFFER};
  }

  // Submits |cb| on |device| signalling a fresh semaphore to 1; returns it.
  kiln_hal_semaphore_t* submit(kiln_hal_device_t* device,
                               kiln_hal_command_buffer_t* cb) {
    kiln_hal_semaphore_t* semaphore = nullptr;
    kiln_status_t status = kiln_hal_semaphore_create(device, 0, &semaphore);
    uint64_t one = 1;
    kiln_hal_semaphore_list_t none = {0, nullptr, nullptr};
    kiln_hal_semaphore_list_t signal = {1, &semaphore, &one};
    if (!status)
      status = kiln_hal_device_queue_execute(device, KILN_HAL_QUEUE_AFFINITY_ANY,
                                             &none, &signal, 1, &cb, nullptr);
    if (status) ADD_FAILURE() << TakeMessage(status);
    return semaphore;
  }

  // A one-shot or reusable command buffer with one collective.
  kiln_hal_command_buffer_t* record(size_t rank, kiln_hal_collective_op_t op,
                                    kiln_hal_buffer_t* send,
                                    kiln_hal_buffer_t* recv,
                                    kiln_hal_command_buffer_mode_t mode =
                                        KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT) {
    kiln_hal_command_buffer_t* cb = nullptr;
    kiln_status_t status =
        kiln_hal_command_buffer_create(devices[rank], mode, 0, &cb);
    if (!status) status = kiln_hal_command_buffer_begin(cb);
    if (!status)
      status = kiln_hal_command_buffer_collective(cb, channels[rank], &op,
                                                  ref(send), ref(recv));
    if (!status) status = kiln_hal_command_buffer_end(cb);
    if (status) ADD_FAILURE() << TakeMessage(status);
    return cb;
  }

  // Copies |size| bytes of device buffer |buffer| of rank |rank| to |out|
  // (through a mappable buffer).
  void readBack(size_t rank, kiln_hal_buffer_t* buffer, void* out,
                size_t size) {
    kiln_hal_buffer_t* target = allocate(devices[rank], size);
    kiln_hal_command_buffer_t* cb = nullptr;
    ASSERT_OK(kiln_hal_command_buffer_create(
        devices[rank], KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0, &cb));
    ASSERT_OK(kiln_hal_command_buffer_begin(cb));
    ASSERT_OK(kiln_hal_command_buffer_copy_buffer(cb, {buffer, 0, 0, size},
                                                  ref(target)));
    ASSERT_OK(kiln_hal_command_buffer_end(cb));
    kiln_hal_semaphore_t* done = submit(devices[rank], cb);
    EXPECT_OK(kiln_hal_semaphore_wait(done, 1, kTimeout));
    EXPECT_OK(kiln_hal_buffer_read(target, 0, out, size));
    kiln_hal_semaphore_release(done);
    kiln_hal_command_buffer_release(cb);
    kiln_hal_buffer_release(target);
  }

  // Dispatches test kernel |name| of the PTX test kernels
  // (tests/cts/testdata/cts_kernels_nvptx.ll), one thread, on |device|;
  // returns the semaphore that reaches 1 when it is done.
  kiln_hal_semaphore_t *
  dispatchTestKernel(kiln_hal_device_t *device, const char *name,
                     std::vector<kiln_hal_buffer_ref_t> bindings,
                     std::vector<uint32_t> constants) {
    const char *path = std::getenv("KILN_HIP_TEST_PTX_PATH");
    if (!path || !*path)
      path = KILN_HIP_TEST_PTX_PATH;
    std::ifstream file(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(file)), {});
    EXPECT_FALSE(bytes.empty()) << "cannot read " << path;
    kiln_hal_executable_export_t kernel = {name,
                                           {1, 1, 1},
                                           {1, 1, 1},
                                           uint32_t(bindings.size()),
                                           uint32_t(constants.size()),
                                           0};
    kiln_hal_executable_params_t params = {"ptx", bytes.data(), bytes.size(),
                                           1,     &kernel,      nullptr};
    kiln_hal_executable_cache_t *cache = nullptr;
    kiln_hal_executable_t *executable = nullptr;
    kiln_hal_command_buffer_t *cb = nullptr;
    kiln_status_t status = kiln_hal_executable_cache_create(device, &cache);
    if (!status)
      status = kiln_hal_executable_cache_prepare_executable(cache, &params,
                                                            &executable);
    if (!status)
      status = kiln_hal_command_buffer_create(
          device, KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0, &cb);
    if (!status)
      status = kiln_hal_command_buffer_begin(cb);
    if (!status)
      status = kiln_hal_command_buffer_dispatch(
          cb, executable, 0, nullptr, uint32_t(constants.size()),
          constants.data(), uint32_t(bindings.size()), bindings.data());
    if (!status)
      status = kiln_hal_command_buffer_end(cb);
    kiln_hal_semaphore_t *done = nullptr;
    if (status)
      ADD_FAILURE() << TakeMessage(status);
    else
      done = submit(device, cb);
    kiln_hal_command_buffer_release(cb);
    kiln_hal_executable_release(executable);
    kiln_hal_executable_cache_release(cache);
    return done;
  }

  kiln_hal_driver_registry_t* registry = nullptr;
  kiln_hal_driver_t* driver = nullptr;
  uint32_t count = 0;
  std::vector<kiln_hal_device_t*> devices;
  std::vector<kiln_hal_channel_t*> channels;
};

TEST_F(HipDeviceTest, UriOptionsReachTheDevice) {
  kiln_hal_device_t* device = nullptr;
  ASSERT_OK(kiln_hal_driver_registry_create_device(
      registry, "hip://0?graphs=0&inject_failure=0&collective_checks=1",
      &device));
  kiln_hal_device_release(device);
  device = nullptr;
  kiln_status_t status =
      kiln_hal_driver_registry_create_device(registry, "hip://0?turbo=1", &device);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(TakeMessage(status).find("accepted: graphs"), std::string::npos);
  // The registry looks the device up before the driver sees the options.
  status = kiln_hal_driver_registry_create_device(registry,
                                                  "hip://999?graphs=2", &device);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_NOT_FOUND);
  EXPECT_NE(TakeMessage(status).find("hip://999"), std::string::npos);
  EXPECT_EQ(device, nullptr);
}

TEST_F(HipDeviceTest, ExecutableVariantForAnotherChipIsRefused) {
  open(1);
  if (IsSkipped() || HasFatalFailure()) return;
  kiln_hal_executable_cache_t* cache = nullptr;
  ASSERT_OK(kiln_hal_executable_cache_create(devices[0], &cache));
  bool ptx = kiln_hal_executable_cache_can_prepare_format(cache, "ptx");
  if (!ptx) {
    kiln_hal_executable_cache_release(cache);
    GTEST_SKIP() << "the test kernels are PTX; this is an AMD device";
  }
  const char* path = std::getenv("KILN_HIP_TEST_PTX_PATH");
  if (!path || !*path) path = KILN_HIP_TEST_PTX_PATH;
  std::ifstream file(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(file)), {});
  ASSERT_FALSE(bytes.empty()) << "cannot read " << path;
  kiln_hal_executable_export_t exports[1] = {
      {"cts_add_f32", {1, 1, 1}, {64, 1, 1}, 3, 1, 0}};
  for (const char* target : {"cuda:sm_999", "rocm:gfx942", "host:x86_64"}) {
    kiln_hal_executable_params_t params = {"ptx", bytes.data(), bytes.size(),
                                           1, exports, target};
    kiln_hal_executable_t* executable = nullptr;
    kiln_status_t status =
        kiln_hal_executable_cache_prepare_executable(cache, &params, &executable);
    EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INCOMPATIBLE) << target;
    std::string text = TakeMessage(status);
    EXPECT_NE(text.find(target), std::string::npos) << text;
    EXPECT_NE(text.find("cuda:sm_"), std::string::npos) << text;
  }
  // The PTX is built for sm_80: it runs on sm_80 and newer, and so does a
  // NULL (unknown) target.
  for (const char* target : {"cuda:sm_80", (const char*)nullptr}) {
    kiln_hal_executable_params_t params = {"ptx", bytes.data(), bytes.size(),
                                           1, exports, target};
    kiln_hal_executable_t* executable = nullptr;
    EXPECT_OK(kiln_hal_executable_cache_prepare_executable(cache, &params,
                                                           &executable));
    kiln_hal_executable_release(executable);
  }
  // An arch-specific variant ("sm_90a": wgmma) runs on its own chip only,
  // and counts as built for this very chip there.
  std::string own;
  for (int sm : {75, 80, 86, 87, 89, 90, 100, 101, 103, 110, 120, 121}) {
    std::string target = "cuda:sm_" + std::to_string(sm);
    if (kiln_hal_executable_cache_can_prepare_format(cache, target.c_str()))
      own = target;
  }
  ASSERT_FALSE(own.empty()) << "the device names no cuda:sm_X target";
  EXPECT_TRUE(
      kiln_hal_executable_cache_can_prepare_format(cache, (own + "a").c_str()));
  std::string older = own == "cuda:sm_80" ? "cuda:sm_75a" : "cuda:sm_80a";
  for (const std::string& target : {own + "a", older}) {
    kiln_hal_executable_params_t params = {"ptx", bytes.data(), bytes.size(),
                                           1,     exports,      target.c_str()};
    kiln_hal_executable_t* executable = nullptr;
    kiln_status_t status = kiln_hal_executable_cache_prepare_executable(
        cache, &params, &executable);
    if (target == older) {
      EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INCOMPATIBLE) << target;
      std::string text = TakeMessage(status);
      EXPECT_NE(text.find("arch-specific"), std::string::npos) << text;
    } else {
      EXPECT_OK(status);  // the variant for this very chip
      kiln_hal_executable_release(executable);
    }
  }
  kiln_hal_executable_cache_release(cache);
}

// Logical devices (hip://0?logical=1): four ranks on one GPU, channels made
// in the process (no NCCL), split like MPI_Comm_split; symmetric windows with
// zeroed memory and a peer table of every rank's device addresses; library
// collectives refused with a message that says what to do instead.
TEST_F(HipDeviceTest, LogicalDevicesShareOneGpuWithWindows) {
  openLogical(4);
  if (IsSkipped() || HasFatalFailure()) return;
  for (int32_t r = 0; r < 4; ++r) {
    EXPECT_EQ(kiln_hal_channel_rank(channels[size_t(r)]), r);
    EXPECT_EQ(kiln_hal_channel_count(channels[size_t(r)]), 4);
  }

  // Windows: one round of the four ranks.
  std::vector<kiln_hal_window_t*> windows = createWindows({4096, 12});
  if (HasFailure()) return;
  std::vector<kiln_status_t> statuses(4, nullptr);
  std::vector<std::thread> threads;
  std::vector<std::vector<uint64_t>> tables;
  for (size_t r = 0; r < 4; ++r) {
    EXPECT_EQ(kiln_hal_window_size(windows[r]), 4096u);
    EXPECT_EQ(kiln_hal_window_signal_count(windows[r]), 12u);
    // 4 data and 4 signal addresses, then the group's abort word.
    std::vector<uint64_t> table(9);
    readBack(r, kiln_hal_window_peer_table(windows[r]), table.data(),
             sizeof(uint64_t) * table.size());
    EXPECT_NE(table[8], 0u);
    table.pop_back();
    tables.push_back(table);
    std::vector<uint8_t> data(4096, 0xff);
    readBack(r, kiln_hal_window_data(windows[r]), data.data(), data.size());
    EXPECT_EQ(std::count(data.begin(), data.end(), 0), 4096) << "rank " << r;
  }
  // Every rank sees the same table; its entries are distinct addresses.
  for (size_t r = 1; r < 4; ++r) EXPECT_EQ(tables[r], tables[0]);
  std::vector<uint64_t> sorted = tables[0];
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::unique(sorted.begin(), sorted.end()), sorted.end());
  for (kiln_hal_window_t* window : windows) kiln_hal_window_release(window);

  // Mismatched sizes fail every rank; the channel goes on.
  threads.clear();
  for (size_t r = 0; r < 4; ++r)
    threads.emplace_back([&, r] {
      kiln_hal_window_params_t params = {r == 2 ? 512u : 1024u, 4};
      statuses[r] = kiln_hal_window_create(channels[r], &params, &windows[r]);
    });
  for (std::thread& thread : threads) thread.join();
  for (kiln_status_t status : statuses)
    EXPECT_EQ(kiln_status_code(status), KILN_STATUS_FAILED_PRECONDITION)
        << TakeMessage(status);

  // Split into pairs {0, 2} and {1, 3}, ordered by key.
  std::vector<kiln_hal_channel_t*> halves(4, nullptr);
  threads.clear();
  for (size_t r = 0; r < 4; ++r)
    threads.emplace_back([&, r] {
      statuses[r] = kiln_hal_channel_split(channels[r], int32_t(r % 2),
                                           -int32_t(r), &halves[r]);
    });
  for (std::thread& thread : threads) thread.join();
  for (kiln_status_t status : statuses) ASSERT_OK(status);
  EXPECT_EQ(kiln_hal_channel_count(halves[0]), 2);
  EXPECT_EQ(kiln_hal_channel_rank(halves[0]), 1);  // key 0 after key -2
  EXPECT_EQ(kiln_hal_channel_rank(halves[2]), 0);
  for (kiln_hal_channel_t* half : halves) kiln_hal_channel_release(half);

  // No library collectives on logical channels.
  kiln_hal_buffer_t* buffer = allocate(devices[0], 64);
  kiln_hal_collective_op_t op = {KILN_HAL_COLLECTIVE_ALL_REDUCE,
                                 KILN_HAL_REDUCTION_SUM,
                                 KILN_HAL_ELEMENT_TYPE_F32, 16, 0};
  kiln_hal_command_buffer_t* cb = nullptr;
  ASSERT_OK(kiln_hal_command_buffer_create(
      devices[0], KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0, &cb));
  ASSERT_OK(kiln_hal_command_buffer_begin(cb));
  kiln_status_t status = kiln_hal_command_buffer_collective(
      cb, channels[0], &op, ref(buffer), ref(buffer));
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_UNIMPLEMENTED);
  EXPECT_NE(TakeMessage(status).find("--collective-kernel-max-bytes"),
            std::string::npos);
  kiln_hal_command_buffer_release(cb);
  kiln_hal_buffer_release(buffer);
}

// Kernels write through the peer table of logical ranks' windows
// (cts_window_put: 100 + rank into word |rank| of every rank's data, then a
// system-scope release of signal |rank|), and read the group's abort word
// (cts_window_abort_word): zero while every rank holds its window, set once
// one lets it go. The same PTX kernels serve the CTS window tests on `hip`
// over NCCL channels (2+ GPUs).
TEST_F(HipDeviceTest, LogicalWindowsCarryPeersWrites) {
  openLogical(3);
  if (IsSkipped() || HasFatalFailure())
    return;
  std::vector<kiln_hal_window_t *> windows = createWindows({4096, 8});
  if (HasFailure())
    return;
  for (uint32_t r = 0; r < 3; ++r) {
    kiln_hal_semaphore_t *done = dispatchTestKernel(
        devices[r], "cts_window_put",
        {ref(kiln_hal_window_peer_table(windows[r]))}, {r, 3});
    ASSERT_NE(done, nullptr);
    EXPECT_OK(kiln_hal_semaphore_wait(done, 1, kTimeout));
    kiln_hal_semaphore_release(done);
  }
  for (size_t r = 0; r < 3; ++r) {
    uint32_t data[3] = {};
    uint64_t signals[8] = {};
    readBack(r, kiln_hal_window_data(windows[r]), data, sizeof(data));
    readBack(r, kiln_hal_window_signals(windows[r]), signals, sizeof(signals));
    for (uint32_t peer = 0; peer < 3; ++peer) {
      EXPECT_EQ(data[peer], 100u + peer) << "rank " << r << ", peer " << peer;
      EXPECT_EQ(signals[peer], 1u) << "rank " << r << ", peer " << peer;
    }
    for (int slot = 3; slot < 8; ++slot)
      EXPECT_EQ(signals[slot], 0u);
  }
  auto abortWord = [&](size_t r) {
    uint64_t word = ~uint64_t{0};
    kiln_hal_buffer_t *out = allocate(devices[r], 8);
    kiln_hal_semaphore_t *done = dispatchTestKernel(
        devices[r], "cts_window_abort_word",
        {ref(kiln_hal_window_peer_table(windows[r])), ref(out)}, {3});
    if (done) {
      EXPECT_OK(kiln_hal_semaphore_wait(done, 1, kTimeout));
      kiln_hal_semaphore_release(done);
      readBack(r, out, &word, sizeof(word));
    }
    kiln_hal_buffer_release(out);
    return word;
  };
  EXPECT_EQ(abortWord(2), 0u);
  kiln_hal_window_release(windows[0]);
  EXPECT_EQ(abortWord(2), 1u);
  kiln_hal_window_release(windows[1]);
  kiln_hal_window_release(windows[2]);
}

// A failed submission on one logical rank sets its group's abort word (in
// pinned host memory, which the host reads at the kernels' address), so
// that the other ranks' compiled collectives stop waiting for it.
TEST_F(HipDeviceTest, LogicalFailedSubmissionAbortsTheWindowGroup) {
  openLogical(2);
  if (IsSkipped() || HasFatalFailure()) return;
  std::vector<kiln_hal_window_t*> windows = createWindows({256, 4});
  if (HasFailure()) return;
  // 2 data and 2 signal addresses, then the group's abort word.
  uint64_t table[5] = {};
  readBack(0, kiln_hal_window_peer_table(windows[0]), table, sizeof(table));
  ASSERT_NE(table[4], 0u);
  auto abortWord = [&] {
    return __atomic_load_n(reinterpret_cast<uint64_t*>(uintptr_t(table[4])),
                           __ATOMIC_ACQUIRE);
  };
  EXPECT_EQ(abortWord(), 0u);
  // Rank 1 submits work that waits for a semaphore which then fails.
  kiln_hal_semaphore_t *input = nullptr, *done = nullptr;
  ASSERT_OK(kiln_hal_semaphore_create(devices[1], 0, &input));
  ASSERT_OK(kiln_hal_semaphore_create(devices[1], 0, &done));
  kiln_hal_command_buffer_t* cb = nullptr;
  ASSERT_OK(kiln_hal_command_buffer_create(
      devices[1], KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0, &cb));
  ASSERT_OK(kiln_hal_command_buffer_begin(cb));
  ASSERT_OK(kiln_hal_command_buffer_end(cb));
  uint64_t one = 1;
  kiln_hal_semaphore_list_t wait = {1, &input, &one};
  kiln_hal_semaphore_list_t signal = {1, &done, &one};
  ASSERT_OK(kiln_hal_device_queue_execute(devices[1],
                                          KILN_HAL_QUEUE_AFFINITY_ANY, &wait,
                                          &signal, 1, &cb, nullptr));
  EXPECT_EQ(abortWord(), 0u);
  kiln_hal_semaphore_fail(input, kiln_make_status(KILN_STATUS_ABORTED,
                                                  "test: no input"));
  kiln_status_t status = kiln_hal_semaphore_wait(done, 1, kTimeout);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_ABORTED);
  kiln_status_free(status);
  EXPECT_EQ(abortWord(), 1u);
  kiln_hal_command_buffer_release(cb);
  kiln_hal_semaphore_release(input);
  kiln_hal_semaphore_release(done);
  for (kiln_hal_window_t* window : windows) kiln_hal_window_release(window);
}

TEST_F(HipDeviceTest, ChannelIdIsAUniqueIdAndOtherIdsAreRefused) {
  open(1);
  if (IsSkipped() || HasFatalFailure()) return;
  uint8_t id[KILN_HAL_CHANNEL_ID_MAX_LENGTH];
  size_t length = 0;
  kiln_status_t status =
      kiln_hal_channel_id_create(devices[0], id, sizeof(id), &length);
  if (kiln_status_code(status) == KILN_STATUS_UNAVAILABLE)
    GTEST_SKIP() << "no NCCL/RCCL here: " << TakeMessage(status);
  ASSERT_OK(status);
  EXPECT_EQ(length, 128u);
  uint8_t other[KILN_HAL_CHANNEL_ID_MAX_LENGTH];
  ASSERT_OK(kiln_hal_channel_id_create(devices[0], other, sizeof(other), &length));
  EXPECT_NE(std::memcmp(id, other, 128), 0) << "two ids are equal";
  const char text[] = "not-an-nccl-id";
  kiln_hal_channel_params_t params = {0, 1, text, sizeof(text)};
  kiln_hal_channel_t* channel = nullptr;
  status = kiln_hal_channel_create(devices[0], &params, &channel);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(TakeMessage(status).find("128"), std::string::npos);
  // A one-rank channel needs no other thread.
  params = {0, 1, id, 128};
  ASSERT_OK(kiln_hal_channel_create(devices[0], &params, &channel));
  channels.push_back(channel);
  EXPECT_EQ(kiln_hal_channel_count(channel), 1);
  kiln_hal_channel_t* duplicate = nullptr;
  status = kiln_hal_channel_create(devices[0], &params, &duplicate);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_ALREADY_EXISTS) << TakeMessage(status);
}

TEST_F(HipDeviceTest, MissingCollectiveLibraryIsAClearError) {
  setenv("KILN_HIP_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", 1);
  setenv("KILN_HIP_RCCL_LIBRARY", "/nonexistent/librccl.so.1", 1);
  open(1);
  if (IsSkipped() || HasFatalFailure()) return;
  uint8_t id[KILN_HAL_CHANNEL_ID_MAX_LENGTH];
  size_t length = 0;
  kiln_status_t status =
      kiln_hal_channel_id_create(devices[0], id, sizeof(id), &length);
  unsetenv("KILN_HIP_NCCL_LIBRARY");
  unsetenv("KILN_HIP_RCCL_LIBRARY");
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_UNAVAILABLE);
  std::string text = TakeMessage(status);
  EXPECT_NE(text.find("/nonexistent/lib"), std::string::npos) << text;
  EXPECT_NE(text.find("_LIBRARY"), std::string::npos) << text;
}

TEST_F(HipDeviceTest, PeerAccessIsEnabledAndCopiesCrossDevices) {
  open(2);
  if (IsSkipped() || HasFatalFailure()) return;
  for (uint32_t i = 0; i < 2; ++i) {
    kiln_hal_device_info_t info;
    ASSERT_OK(kiln_hal_device_info(devices[i], &info));
    std::string peer = "peer access: hip://" + std::to_string(1 - i);
    EXPECT_NE(std::string(info.name).find(peer), std::string::npos)
        << "hip://" << i << " reports '" << info.name
        << "' (GPUs without peer access? see the driver's stderr)";
  }
  // hip://0 copies from a buffer of hip://1 into its own.
  constexpr size_t n = 1 << 20;
  kiln_hal_buffer_t* source = allocate(devices[1], n);
  kiln_hal_buffer_t* target = allocate(devices[0], n);
  std::vector<uint8_t> bytes(n);
  for (size_t i = 0; i < n; ++i) bytes[i] = uint8_t(i * 7 + 3);
  ASSERT_OK(kiln_hal_buffer_write(source, 0, bytes.data(), n));
  kiln_hal_command_buffer_t* cb = nullptr;
  ASSERT_OK(kiln_hal_command_buffer_create(
      devices[0], KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0, &cb));
  ASSERT_OK(kiln_hal_command_buffer_begin(cb));
  ASSERT_OK(kiln_hal_command_buffer_copy_buffer(cb, ref(source), ref(target)));
  ASSERT_OK(kiln_hal_command_buffer_end(cb));
  kiln_hal_semaphore_t* done = submit(devices[0], cb);
  EXPECT_OK(kiln_hal_semaphore_wait(done, 1, kTimeout));
  std::vector<uint8_t> got(n);
  EXPECT_OK(kiln_hal_buffer_read(target, 0, got.data(), n));
  EXPECT_EQ(got, bytes);
  kiln_hal_semaphore_release(done);
  kiln_hal_command_buffer_release(cb);
  kiln_hal_buffer_release(source);
  kiln_hal_buffer_release(target);
}

TEST_F(HipDeviceTest, TwoRankCollectivesInReusableCommandBuffers) {
  open(2);
  if (IsSkipped() || HasFatalFailure()) return;
  joinChannels();
  if (IsSkipped() || HasFatalFailure()) return;
  constexpr uint64_t n = 1000;
  std::vector<kiln_hal_buffer_t*> sends, recvs;
  std::vector<kiln_hal_command_buffer_t*> cbs;
  for (size_t r = 0; r < 2; ++r) {
    std::vector<float> values(n);
    for (uint64_t i = 0; i < n; ++i) values[i] = float(r + 1) * float(i);
    sends.push_back(allocate(devices[r], n * 4));
    recvs.push_back(allocate(devices[r], n * 4));
    ASSERT_OK(kiln_hal_buffer_write(sends[r], 0, values.data(), n * 4));
    cbs.push_back(record(r,
                         {KILN_HAL_COLLECTIVE_ALL_REDUCE, KILN_HAL_REDUCTION_SUM,
                          KILN_HAL_ELEMENT_TYPE_F32, n, 0},
                         sends[r], recvs[r], KILN_HAL_COMMAND_BUFFER_MODE_REUSABLE));
  }
  // Reusable command buffers with collectives are replayed, never captured.
  for (int round = 0; round < 3; ++round) {
    std::vector<kiln_hal_semaphore_t*> done;
    for (size_t r = 0; r < 2; ++r) done.push_back(submit(devices[r], cbs[r]));
    for (size_t r = 0; r < 2; ++r) {
      EXPECT_OK(kiln_hal_semaphore_wait(done[r], 1, kTimeout));
      kiln_hal_semaphore_release(done[r]);
      std::vector<float> got(n);
      EXPECT_OK(kiln_hal_buffer_read(recvs[r], 0, got.data(), n * 4));
      for (uint64_t i = 0; i < n; i += 97)
        EXPECT_EQ(got[i], 3.0f * float(i)) << "round " << round << " rank " << r;
    }
  }
  // all_to_all of i16 (a type NCCL lacks, but bytes move fine) and a
  // reduction of i16, which NCCL cannot do.
  kiln_hal_collective_op_t exchange = {KILN_HAL_COLLECTIVE_ALL_TO_ALL,
                                       KILN_HAL_REDUCTION_NONE,
                                       KILN_HAL_ELEMENT_TYPE_I16, 4, 0};
  std::vector<kiln_hal_semaphore_t*> done;
  for (size_t r = 0; r < 2; ++r) {
    std::vector<int16_t> values = {int16_t(r * 10), int16_t(r * 10 + 1),
                                   int16_t(r * 10 + 2), int16_t(r * 10 + 3)};
    ASSERT_OK(kiln_hal_buffer_write(sends[r], 0, values.data(), 8));
    kiln_hal_command_buffer_t* cb = nullptr;
    ASSERT_OK(kiln_hal_command_buffer_create(
        devices[r], KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0, &cb));
    ASSERT_OK(kiln_hal_command_buffer_begin(cb));
    kiln_hal_collective_op_t sum = {KILN_HAL_COLLECTIVE_ALL_REDUCE,
                                    KILN_HAL_REDUCTION_SUM,
                                    KILN_HAL_ELEMENT_TYPE_I16, 4, 0};
    kiln_status_t status = kiln_hal_command_buffer_collective(
        cb, channels[r], &sum, ref(sends[r]), ref(recvs[r]));
    EXPECT_EQ(kiln_status_code(status), KILN_STATUS_UNIMPLEMENTED);
    EXPECT_NE(TakeMessage(status).find("i16"), std::string::npos);
    ASSERT_OK(kiln_hal_command_buffer_collective(
        cb, channels[r], &exchange, {sends[r], 0, 0, 8}, {recvs[r], 0, 0, 8}));
    ASSERT_OK(kiln_hal_command_buffer_end(cb));
    done.push_back(submit(devices[r], cb));
    kiln_hal_command_buffer_release(cb);
  }
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_OK(kiln_hal_semaphore_wait(done[r], 1, kTimeout));
    kiln_hal_semaphore_release(done[r]);
    std::vector<int16_t> got(4);
    EXPECT_OK(kiln_hal_buffer_read(recvs[r], 0, got.data(), 8));
    // Chunk j of rank i lands at chunk i of rank j (chunks of 2).
    EXPECT_EQ(got, (std::vector<int16_t>{int16_t(r * 2), int16_t(r * 2 + 1),
                                         int16_t(10 + r * 2),
                                         int16_t(10 + r * 2 + 1)}));
  }
  for (size_t r = 0; r < 2; ++r) {
    kiln_hal_command_buffer_release(cbs[r]);
    kiln_hal_buffer_release(sends[r]);
    kiln_hal_buffer_release(recvs[r]);
  }
}

TEST_F(HipDeviceTest, MismatchedArgumentsFailBothRanksAndTheChannelGoesOn) {
  open(2, "collective_checks=1");
  if (IsSkipped() || HasFatalFailure()) return;
  joinChannels();
  if (IsSkipped() || HasFatalFailure()) return;
  std::vector<kiln_hal_buffer_t*> buffers;
  for (size_t r = 0; r < 2; ++r) {
    buffers.push_back(allocate(devices[r], 64));
    std::vector<uint8_t> ones(64, 1);
    ASSERT_OK(kiln_hal_buffer_write(buffers[r], 0, ones.data(), 64));
  }
  for (uint64_t rank1Count : {8u, 16u}) {
    std::vector<kiln_hal_semaphore_t*> done;
    for (size_t r = 0; r < 2; ++r) {
      kiln_hal_collective_op_t op = {KILN_HAL_COLLECTIVE_ALL_REDUCE,
                                     KILN_HAL_REDUCTION_SUM,
                                     KILN_HAL_ELEMENT_TYPE_U8,
                                     r == 1 ? rank1Count : 16, 0};
      kiln_hal_command_buffer_t* cb = record(r, op, buffers[r], buffers[r]);
      done.push_back(submit(devices[r], cb));
      kiln_hal_command_buffer_release(cb);
    }
    for (size_t r = 0; r < 2; ++r) {
      kiln_status_t status = kiln_hal_semaphore_wait(done[r], 1, kTimeout);
      if (rank1Count == 16) {
        EXPECT_OK(status);
      } else {
        EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT);
        EXPECT_NE(TakeMessage(status).find("differ between the ranks"),
                  std::string::npos);
      }
      kiln_hal_semaphore_release(done[r]);
    }
  }
  std::vector<uint8_t> got(16);
  EXPECT_OK(kiln_hal_buffer_read(buffers[0], 0, got.data(), 16));
  EXPECT_EQ(got, std::vector<uint8_t>(16, 2));
  for (kiln_hal_buffer_t* buffer : buffers) kiln_hal_buffer_release(buffer);
}

TEST_F(HipDeviceTest, DestroyingADeviceAbortsACollectiveWaitingForItsPeer) {
  open(2);
  if (IsSkipped() || HasFatalFailure()) return;
  joinChannels();
  if (IsSkipped() || HasFatalFailure()) return;
  kiln_hal_buffer_t* buffer = allocate(devices[0], 64);
  // Only rank 0 submits: its all-reduce waits for rank 1 forever.
  kiln_hal_command_buffer_t* cb =
      record(0, {KILN_HAL_COLLECTIVE_ALL_REDUCE, KILN_HAL_REDUCTION_SUM,
                 KILN_HAL_ELEMENT_TYPE_F32, 16, 0},
             buffer, buffer);
  kiln_hal_semaphore_t* done = submit(devices[0], cb);
  kiln_hal_command_buffer_release(cb);
  kiln_hal_buffer_release(buffer);
  kiln_status_t status = kiln_hal_semaphore_wait(done, 1, 1000ll * 1000 * 1000);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_DEADLINE_EXCEEDED)
      << TakeMessage(status);
  kiln_status_free(status);
  kiln_hal_channel_release(channels[0]);
  channels[0] = nullptr;
  auto start = std::chrono::steady_clock::now();
  kiln_hal_device_release(devices[0]);  // grace period, then ncclCommAbort
  devices[0] = nullptr;
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 30.0);
  status = kiln_hal_semaphore_wait(done, 1, kTimeout);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_ABORTED) << TakeMessage(status);
  kiln_status_free(status);
  kiln_hal_semaphore_release(done);
}

}  // namespace
