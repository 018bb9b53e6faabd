// Executables: real kernels fed to the executable cache as bytes, in the
// format the device runs: a host shared object (testdata/cts_kernels.c,
// "elf-so-v1") or PTX (testdata/cts_kernels_nvptx.ll compiled by llc,
// "ptx"), with the same exports and behaviour; dispatch over a grid;
// corrupt binaries, missing exports, failing kernels.

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "cts_test_base.h"

namespace kiln::cts {
namespace {

constexpr const char* kHostFormat = "elf-so-v1";
constexpr const char* kPtxFormat = "ptx";

// $NAME if set (binaries moved to another machine, build_tools/gpu_check.sh),
// else the path CMake compiled in.
const char* dataPath(const char* name, const char* builtIn) {
  const char* value = std::getenv(name);
  return value && *value ? value : builtIn;
}

std::vector<uint8_t> readFile(const char* path) {
  std::ifstream file(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(file), {});
}

class ExecutableTest : public CtsTest {
 protected:
  void SetUp() override {
    CtsTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    KILN_ASSERT_OK(kiln_hal_executable_cache_create(device, &cache));
    const char* path = nullptr;
    if (kiln_hal_executable_cache_can_prepare_format(cache, kHostFormat)) {
      format = kHostFormat;
      path = dataPath("KILN_CTS_KERNELS_PATH", KILN_CTS_KERNELS_PATH);
    } else if (kiln_hal_executable_cache_can_prepare_format(cache,
                                                            kPtxFormat)) {
      format = kPtxFormat;
      path = dataPath("KILN_CTS_PTX_KERNELS_PATH", KILN_CTS_PTX_KERNELS_PATH);
      if (!*path)
        GTEST_SKIP() << "the CTS PTX kernels were not built (no llc found)";
    } else {
      GTEST_SKIP() << "device runs neither '" << kHostFormat << "' nor '"
                   << kPtxFormat << "' binaries (the CTS kernels exist only "
                   << "in those formats)";
    }
    binary = readFile(path);
    ASSERT_FALSE(binary.empty()) << "cannot read " << path;
  }
  void TearDown() override {
    kiln_hal_executable_release(executable);
    kiln_hal_executable_cache_release(cache);
    CtsTest::TearDown();
  }

  kiln_status_t prepare(const std::vector<uint8_t>& bytes,
                        const std::vector<kiln_hal_executable_export_t>& exports,
                        kiln_hal_executable_t** out) {
    kiln_hal_executable_params_t params = {};
    params.format = format;
    params.data = bytes.data();
    params.data_length = bytes.size();
    params.export_count = uint32_t(exports.size());
    params.exports = exports.data();
    return kiln_hal_executable_cache_prepare_executable(cache, &params, out);
  }

  // Exports: 0 add (n/64 workgroups), 1 mark_grid (4x3x2), 2 fail_at (8).
  // A host workgroup is one call; a GPU one has 64 threads for add.
  std::vector<kiln_hal_executable_export_t> standardExports(uint32_t n) {
    uint32_t addThreads = format == kHostFormat ? 1 : 64;
    return {
        {"cts_add_f32", {(n + 63) / 64, 1, 1}, {addThreads, 1, 1}, 3, 1, 0},
        {"cts_mark_grid", {4, 3, 2}, {1, 1, 1}, 1, 0, 0},
        {"cts_fail_at", {8, 1, 1}, {1, 1, 1}, 0, 2, 0},
    };
  }

  const char* format = kHostFormat;
  kiln_hal_executable_cache_t* cache = nullptr;
  kiln_hal_executable_t* executable = nullptr;
  std::vector<uint8_t> binary;
};

TEST_P(ExecutableTest, FormatQueries) {
  EXPECT_TRUE(kiln_hal_executable_cache_can_prepare_format(cache, format));
  EXPECT_FALSE(kiln_hal_executable_cache_can_prepare_format(cache, "nope-v9"));
  std::vector<uint8_t> bytes = {1, 2, 3};
  kiln_hal_executable_params_t params = {"nope-v9", bytes.data(), bytes.size(),
                                         0, nullptr};
  kiln_status_t status =
      kiln_hal_executable_cache_prepare_executable(cache, &params, &executable);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INCOMPATIBLE);
  EXPECT_NE(std::string(kiln_status_message(status)).find("nope-v9"),
            std::string::npos);
  kiln_status_free(status);
}

TEST_P(ExecutableTest, VectorAddOverManyWorkgroups) {
  constexpr uint32_t n = 1000;  // 16 workgroups, the last one partial
  KILN_ASSERT_OK(prepare(binary, standardExports(n), &executable));
  EXPECT_EQ(kiln_hal_executable_export_count(executable), 3u);
  EXPECT_STREQ(kiln_hal_executable_export(executable, 1)->name, "cts_mark_grid");
  EXPECT_EQ(kiln_hal_executable_export(executable, 3), nullptr);
  kiln_hal_buffer_t* a = allocateBuffer(n * 4);
  kiln_hal_buffer_t* b = allocateBuffer(n * 4);
  kiln_hal_buffer_t* out = allocateBuffer(n * 4);
  std::vector<float> av(n), bv(n);
  for (uint32_t i = 0; i < n; ++i) {
    av[i] = float(i);
    bv[i] = 0.5f * float(i) + 1.0f;
  }
  KILN_ASSERT_OK(kiln_hal_buffer_write(a, 0, av.data(), n * 4));
  KILN_ASSERT_OK(kiln_hal_buffer_write(b, 0, bv.data(), n * 4));
  kiln_hal_command_buffer_t* cb = nullptr;
  KILN_ASSERT_OK(kiln_hal_command_buffer_create(
      device, KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0, &cb));
  KILN_ASSERT_OK(kiln_hal_command_buffer_begin(cb));
  kiln_hal_buffer_ref_t bindings[3] = {ref(a), ref(b), ref(out)};
  uint32_t count = n;
  KILN_ASSERT_OK(kiln_hal_command_buffer_dispatch(cb, executable, 0, nullptr, 1,
                                                  &count, 3, bindings));
  KILN_ASSERT_OK(kiln_hal_command_buffer_end(cb));
  KILN_ASSERT_OK(submitAndWait(cb));
  std::vector<float> result(n);
  KILN_ASSERT_OK(kiln_hal_buffer_read(out, 0, result.data(), n * 4));
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(result[i], av[i] + bv[i]) << i;
  kiln_hal_command_buffer_release(cb);
  for (auto* buffer : {a, b, out}) kiln_hal_buffer_release(buffer);
}

TEST_P(ExecutableTest, ReusableDispatchReplayedWithBindingTables) {
  constexpr uint32_t n = 200;
  KILN_ASSERT_OK(prepare(binary, standardExports(n), &executable));
  kiln_hal_command_buffer_t* cb = nullptr;
  KILN_ASSERT_OK(kiln_hal_command_buffer_create(
      device, KILN_HAL_COMMAND_BUFFER_MODE_REUSABLE, 3, &cb));
  KILN_ASSERT_OK(kiln_hal_command_buffer_begin(cb));
  // Slot 0 holds both inputs (a at 0, b at n*4); slot 1 the output; slot 2
  // is bound but unused by this recording.
  kiln_hal_buffer_ref_t bindings[3] = {slotRef(0, 0, n * 4),
                                       slotRef(0, n * 4, n * 4), slotRef(1)};
  uint32_t count = n;
  KILN_ASSERT_OK(kiln_hal_command_buffer_dispatch(cb, executable, 0, nullptr, 1,
                                                  &count, 3, bindings));
  KILN_ASSERT_OK(kiln_hal_command_buffer_end(cb));
  for (int call = 1; call <= 3; ++call) {
    kiln_hal_buffer_t* inputs = allocateBuffer(2 * n * 4);
    kiln_hal_buffer_t* out = allocateBuffer(n * 4);
    std::vector<float> values(2 * n);
    for (uint32_t i = 0; i < 2 * n; ++i) values[i] = float(call * i);
    KILN_ASSERT_OK(kiln_hal_buffer_write(inputs, 0, values.data(), 2 * n * 4));
    kiln_hal_binding_t table[3] = {{inputs, 0, KILN_HAL_WHOLE_BUFFER},
                                   {out, 0, KILN_HAL_WHOLE_BUFFER},
                                   {nullptr, 0, 0}};
    kiln_hal_binding_table_t bindingTable = {3, table};
    KILN_ASSERT_OK(submitAndWait(cb, &bindingTable));
    std::vector<float> result(n);
    KILN_ASSERT_OK(kiln_hal_buffer_read(out, 0, result.data(), n * 4));
    for (uint32_t i = 0; i < n; ++i)
      ASSERT_EQ(result[i], values[i] + values[n + i]) << "call " << call;
    kiln_hal_buffer_release(inputs);
    kiln_hal_buffer_release(out);
  }
  kiln_hal_command_buffer_release(cb);
}

TEST_P(ExecutableTest, EveryWorkgroupOfA3DGridRunsOnce) {
  KILN_ASSERT_OK(prepare(binary, standardExports(64), &executable));
  const uint32_t grid[3] = {7, 5, 3};  // overrides the export's 4x3x2
  kiln_hal_buffer_t* counters = allocateBuffer(7 * 5 * 3 * 4);
  kiln_hal_command_buffer_t* cb = nullptr;
  KILN_ASSERT_OK(kiln_hal_command_buffer_create(
      device, KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0, &cb));
  KILN_ASSERT_OK(kiln_hal_command_buffer_begin(cb));
  uint8_t zero = 0;
  KILN_ASSERT_OK(kiln_hal_command_buffer_fill_buffer(cb, ref(counters), &zero, 1));
  KILN_ASSERT_OK(kiln_hal_command_buffer_execution_barrier(cb));
  kiln_hal_buffer_ref_t binding = ref(counters);
  KILN_ASSERT_OK(kiln_hal_command_buffer_dispatch(cb, executable, 1, grid, 0,
                                                  nullptr, 1, &binding));
  KILN_ASSERT_OK(kiln_hal_command_buffer_execution_barrier(cb));
  KILN_ASSERT_OK(kiln_hal_command_buffer_dispatch(cb, executable, 1, grid, 0,
                                                  nullptr, 1, &binding));
  KILN_ASSERT_OK(kiln_hal_command_buffer_end(cb));
  KILN_ASSERT_OK(submitAndWait(cb));
  std::vector<uint32_t> values(7 * 5 * 3);
  KILN_ASSERT_OK(kiln_hal_buffer_read(counters, 0, values.data(), values.size() * 4));
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(values[i], 2u) << i;
  kiln_hal_command_buffer_release(cb);
  kiln_hal_buffer_release(counters);
}

TEST_P(ExecutableTest, CorruptBinaryIsAClearError) {
  std::vector<uint8_t> garbage(4096);
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = uint8_t(i * 37 + 11);
  kiln_status_t status = prepare(garbage, standardExports(64), &executable);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT)
      << kiln_status_message(status);
  kiln_status_free(status);
  EXPECT_EQ(executable, nullptr);
  // A real ELF header followed by nothing.
  std::vector<uint8_t> truncated(binary.begin(), binary.begin() + 200);
  status = prepare(truncated, standardExports(64), &executable);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT)
      << kiln_status_message(status);
  kiln_status_free(status);
  // Empty.
  std::vector<uint8_t> empty;
  KILN_EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                     prepare(empty, standardExports(64), &executable));
}

TEST_P(ExecutableTest, MissingExportIsNamed) {
  std::vector<kiln_hal_executable_export_t> exports = standardExports(64);
  exports.push_back({"cts_not_there", {1, 1, 1}, {1, 1, 1}, 0, 0, 0});
  kiln_status_t status = prepare(binary, exports, &executable);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kiln_status_message(status)).find("cts_not_there"),
            std::string::npos)
      << kiln_status_message(status);
  kiln_status_free(status);
  EXPECT_EQ(executable, nullptr);
}

TEST_P(ExecutableTest, FailingKernelFailsTheSubmissionAndItsSignal) {
  if (format != kHostFormat)
    GTEST_SKIP() << "'" << format << "' kernels cannot return an error code";
  KILN_ASSERT_OK(prepare(binary, standardExports(64), &executable));
  kiln_hal_command_buffer_t* cb = nullptr;
  KILN_ASSERT_OK(kiln_hal_command_buffer_create(
      device, KILN_HAL_COMMAND_BUFFER_MODE_REUSABLE, 0, &cb));
  KILN_ASSERT_OK(kiln_hal_command_buffer_begin(cb));
  uint32_t pushConstants[2] = {5, 42};  // workgroup 5 returns 42
  KILN_ASSERT_OK(kiln_hal_command_buffer_dispatch(cb, executable, 2, nullptr, 2,
                                                  pushConstants, 0, nullptr));
  KILN_ASSERT_OK(kiln_hal_command_buffer_end(cb));
  kiln_hal_semaphore_t* done = createSemaphore(0);
  kiln_hal_semaphore_t* after = createSemaphore(0);
  uint64_t one = 1;
  kiln_hal_semaphore_list_t signalDone = semaphoreList(&done, &one, 1);
  kiln_hal_semaphore_list_t waitDone = semaphoreList(&done, &one, 1);
  kiln_hal_semaphore_list_t signalAfter = semaphoreList(&after, &one, 1);
  KILN_ASSERT_OK(kiln_hal_device_queue_execute(
      device, KILN_HAL_QUEUE_AFFINITY_ANY, nullptr, &signalDone, 1, &cb,
      nullptr));
  KILN_ASSERT_OK(kiln_hal_device_queue_execute(
      device, KILN_HAL_QUEUE_AFFINITY_ANY, &waitDone, &signalAfter, 0, nullptr,
      nullptr));
  kiln_status_t status = kiln_hal_semaphore_wait(done, 1, kLongTimeout);
  ASSERT_NE(status, nullptr);
  std::string message = kiln_status_message(status);
  EXPECT_NE(message.find("cts_fail_at"), std::string::npos) << message;
  EXPECT_NE(message.find("42"), std::string::npos) << message;
  kiln_status_free(status);
  EXPECT_NE(kiln_status_consume_code(
                kiln_hal_semaphore_wait(after, 1, kLongTimeout)),
            KILN_STATUS_OK);
  // The queue keeps working after a failed submission.
  uint32_t noFailure[2] = {1000, 1};
  kiln_hal_command_buffer_t* ok = nullptr;
  KILN_ASSERT_OK(kiln_hal_command_buffer_create(
      device, KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0, &ok));
  KILN_ASSERT_OK(kiln_hal_command_buffer_begin(ok));
  KILN_ASSERT_OK(kiln_hal_command_buffer_dispatch(ok, executable, 2, nullptr, 2,
                                                  noFailure, 0, nullptr));
  KILN_ASSERT_OK(kiln_hal_command_buffer_end(ok));
  KILN_EXPECT_OK(submitAndWait(ok));
  kiln_hal_command_buffer_release(ok);
  kiln_hal_semaphore_release(done);
  kiln_hal_semaphore_release(after);
  kiln_hal_command_buffer_release(cb);
}

TEST_P(ExecutableTest, DispatchArgumentsAreValidated) {
  KILN_ASSERT_OK(prepare(binary, standardExports(64), &executable));
  kiln_hal_buffer_t* buffer = allocateBuffer(256);
  kiln_hal_command_buffer_t* cb = nullptr;
  KILN_ASSERT_OK(kiln_hal_command_buffer_create(
      device, KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 1, &cb));
  KILN_ASSERT_OK(kiln_hal_command_buffer_begin(cb));
  kiln_hal_buffer_ref_t bindings[3] = {ref(buffer), ref(buffer), ref(buffer)};
  uint32_t pc = 64;
  KILN_EXPECT_STATUS(KILN_STATUS_OUT_OF_RANGE,
                     kiln_hal_command_buffer_dispatch(cb, executable, 3, nullptr,
                                                      1, &pc, 3, bindings));
  KILN_EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                     kiln_hal_command_buffer_dispatch(cb, executable, 0, nullptr,
                                                      1, &pc, 2, bindings));
  KILN_EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                     kiln_hal_command_buffer_dispatch(cb, executable, 0, nullptr,
                                                      0, nullptr, 3, bindings));
  bindings[2] = ref(buffer, 128, 256);
  KILN_EXPECT_STATUS(KILN_STATUS_OUT_OF_RANGE,
                     kiln_hal_command_buffer_dispatch(cb, executable, 0, nullptr,
                                                      1, &pc, 3, bindings));
  const uint32_t hugeGrid[3] = {0xFFFFFFFFu, 0xFFFFFFFFu, 2};
  KILN_EXPECT_STATUS(KILN_STATUS_OUT_OF_RANGE,
                     kiln_hal_command_buffer_dispatch(cb, executable, 0, hugeGrid,
                                                      1, &pc, 3, bindings));
  bindings[2] = slotRef(1);
  KILN_EXPECT_STATUS(KILN_STATUS_OUT_OF_RANGE,
                     kiln_hal_command_buffer_dispatch(cb, executable, 0, nullptr,
                                                      1, &pc, 3, bindings));
  KILN_ASSERT_OK(kiln_hal_command_buffer_end(cb));
  kiln_hal_command_buffer_release(cb);
  kiln_hal_buffer_release(buffer);
}

KILN_CTS_INSTANTIATE(ExecutableTest);

}  // namespace
}  // namespace kiln::cts
