// The embedding API end to end: load a real module (host kernels built from
// C) on the local device, call its functions and check the numbers, and
// check the errors users get for bad inputs.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kiln/runtime.h"
#include "status_test_util.h"
#include "test_modules.h"

namespace kiln {
namespace {

using testing::StatusInfo;
using testing::Take;

class RuntimeApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kiln_instance_options_t options = {};
    options.ignore_plugin_environment = true;
    ASSERT_OK(kiln_instance_create(&options, &instance_));
    ASSERT_OK(kiln_device_create(instance_, "local", &device_));
    std::vector<uint8_t> bytes = testing::TestModuleBytes();
    ASSERT_OK(kiln_module_load_memory(device_, bytes.data(), bytes.size(),
                                      &module_));
  }
  void TearDown() override {
    kiln_module_release(module_);
    kiln_device_release(device_);
    kiln_instance_release(instance_);
  }

  kiln_buffer_view_t* MakeF32(std::vector<int64_t> shape,
                              std::vector<float> values) {
    kiln_buffer_view_t* view = nullptr;
    StatusInfo info = Take(kiln_buffer_view_create_from_host(
        device_, KILN_ELEMENT_TYPE_F32, shape.size(), shape.data(),
        values.data(), values.size() * sizeof(float), &view));
    EXPECT_EQ(info.code, KILN_STATUS_OK) << info.message;
    return view;
  }

  std::vector<float> ReadF32(kiln_buffer_view_t* view) {
    std::vector<float> values(kiln_buffer_view_element_count(view));
    StatusInfo info = Take(kiln_buffer_view_read(
        view, values.data(), values.size() * sizeof(float)));
    EXPECT_EQ(info.code, KILN_STATUS_OK) << info.message;
    return values;
  }

  kiln_function_t* Lookup(const char* name) {
    kiln_function_t* function = nullptr;
    StatusInfo info = Take(kiln_module_lookup_function(module_, name, &function));
    EXPECT_EQ(info.code, KILN_STATUS_OK) << info.message;
    return function;
  }

  kiln_instance_t* instance_ = nullptr;
  kiln_device_t* device_ = nullptr;
  kiln_module_t* module_ = nullptr;
};

TEST_F(RuntimeApiTest, Reflection) {
  EXPECT_STREQ(kiln_module_name(module_), "kiln_test");
  EXPECT_EQ(kiln_module_function_count(module_), 4u);
  kiln_function_t* add = Lookup("add");
  ASSERT_NE(add, nullptr);
  EXPECT_STREQ(kiln_function_name(add), "add");
  EXPECT_EQ(kiln_function_input_count(add), 2u);
  EXPECT_EQ(kiln_function_output_count(add), 1u);
  kiln_tensor_type_t type;
  ASSERT_OK(kiln_function_input_type(add, 1, &type));
  EXPECT_EQ(type.element_type, KILN_ELEMENT_TYPE_F32);
  ASSERT_EQ(type.rank, 2u);
  EXPECT_EQ(type.shape[0], 2);
  EXPECT_EQ(type.shape[1], 3);
  EXPECT_EQ(Take(kiln_function_input_type(add, 2, &type)).code,
            KILN_STATUS_OUT_OF_RANGE);
  char signature[128];
  kiln_function_format_signature(add, signature, sizeof(signature));
  EXPECT_STREQ(signature, "(2x3xf32, 2x3xf32) -> (2x3xf32)");
  kiln_function_t* fill = nullptr;
  ASSERT_OK(kiln_module_function_at(module_, 2, &fill));
  EXPECT_STREQ(kiln_function_name(fill), "fill");
  EXPECT_EQ(Take(kiln_module_function_at(module_, 9, &fill)).code,
            KILN_STATUS_OUT_OF_RANGE);
}

TEST_F(RuntimeApiTest, ElementTypes) {
  EXPECT_EQ(kiln_element_type_size(KILN_ELEMENT_TYPE_I1), 1u);
  EXPECT_EQ(kiln_element_type_size(KILN_ELEMENT_TYPE_BF16), 2u);
  EXPECT_EQ(kiln_element_type_size(KILN_ELEMENT_TYPE_U32), 4u);
  EXPECT_EQ(kiln_element_type_size(KILN_ELEMENT_TYPE_F64), 8u);
  EXPECT_EQ(kiln_element_type_size(KILN_ELEMENT_TYPE_INVALID), 0u);
  EXPECT_EQ(kiln_element_type_from_name("bf16"), KILN_ELEMENT_TYPE_BF16);
  EXPECT_EQ(kiln_element_type_from_name("f128"), KILN_ELEMENT_TYPE_INVALID);
  EXPECT_STREQ(kiln_element_type_name(KILN_ELEMENT_TYPE_I1), "i1");
}

TEST_F(RuntimeApiTest, CallAddComputesTheSum) {
  kiln_buffer_view_t* inputs[2] = {MakeF32({2, 3}, {1, 2, 3, 4, 5, 6}),
                                   MakeF32({2, 3}, {0.5f, 1, 1.5f, 2, 2.5f, 3})};
  kiln_buffer_view_t* output = nullptr;
  ASSERT_OK(kiln_function_call(Lookup("add"), 2, inputs, 1, &output));
  ASSERT_NE(output, nullptr);
  EXPECT_EQ(kiln_buffer_view_element_type(output), KILN_ELEMENT_TYPE_F32);
  ASSERT_EQ(kiln_buffer_view_rank(output), 2u);
  EXPECT_EQ(kiln_buffer_view_shape(output)[1], 3);
  EXPECT_EQ(ReadF32(output),
            (std::vector<float>{1.5f, 3, 4.5f, 6, 7.5f, 9}));
  // Calling again replays the same recorded command buffer with new
  // bindings.
  kiln_buffer_view_t* again = nullptr;
  kiln_buffer_view_t* chained[2] = {output, output};
  ASSERT_OK(kiln_function_call(Lookup("add"), 2, chained, 1, &again));
  EXPECT_EQ(ReadF32(again), (std::vector<float>{3, 6, 9, 12, 15, 18}));
  kiln_buffer_view_release(again);
  kiln_buffer_view_release(output);
  kiln_buffer_view_release(inputs[0]);
  kiln_buffer_view_release(inputs[1]);
}

TEST_F(RuntimeApiTest, ProfileTimesEveryCommandOfACall) {
  kiln_buffer_view_t* input = MakeF32({2, 3}, {1, 2, 3, 4, 5, 6});
  kiln_buffer_view_t* output = nullptr;
  kiln_call_profile_t* profile = nullptr;
  ASSERT_OK(kiln_function_profile(Lookup("add_bias"), 1, &input, 1, &output,
                                  &profile));
  ASSERT_NE(profile, nullptr);
  // The profiled call computes what a plain one does.
  EXPECT_EQ(ReadF32(output), (std::vector<float>{11, 22, 33, 44, 55, 66}));
  ASSERT_GE(profile->command_count, 1u);
  bool dispatched = false;
  uint64_t sum = 0;
  for (size_t i = 0; i < profile->command_count; ++i) {
    const kiln_command_profile_t& command = profile->commands[i];
    std::string kind = command.kind;
    EXPECT_TRUE(kind == "dispatch" || kind == "copy" || kind == "fill" ||
                kind == "update" || kind == "collective")
        << kind;
    EXPECT_GT(std::strlen(command.name), 0u);
    if (i > 0) EXPECT_GT(command.index, profile->commands[i - 1].index);
    if (kind == "dispatch") dispatched = true;
    sum += command.device_ns;
  }
  EXPECT_TRUE(dispatched);
  EXPECT_GT(profile->device_ns, 0u);
  EXPECT_LE(sum, profile->device_ns);
  EXPECT_GE(profile->host_ns, profile->device_ns);
  kiln_call_profile_free(profile);
  kiln_buffer_view_release(output);

  // Argument errors are the call's, and no profile is returned.
  profile = nullptr;
  EXPECT_EQ(Take(kiln_function_profile(Lookup("add_bias"), 0, nullptr, 1,
                                       &output, &profile))
                .code,
            KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(profile, nullptr);
  EXPECT_EQ(Take(kiln_function_profile(Lookup("add_bias"), 1, &input, 1,
                                       &output, nullptr))
                .code,
            KILN_STATUS_INVALID_ARGUMENT);
  kiln_buffer_view_release(input);
}

TEST_F(RuntimeApiTest, TimedCallReportsHostAndDeviceTimeOfTheSameCall) {
  kiln_buffer_view_t* input = MakeF32({2, 3}, {1, 2, 3, 4, 5, 6});
  for (int round = 0; round < 3; ++round) {
    kiln_buffer_view_t* output = nullptr;
    kiln_call_timing_t timing = {};
    ASSERT_OK(kiln_function_call_timed(Lookup("add_bias"), 1, &input, 1,
                                       &output, &timing));
    EXPECT_EQ(ReadF32(output), (std::vector<float>{11, 22, 33, 44, 55, 66}));
    EXPECT_GT(timing.device_ns, 0u);
    EXPECT_GE(timing.host_ns, timing.device_ns);
    kiln_buffer_view_release(output);
  }
  kiln_buffer_view_t* output = nullptr;
  EXPECT_EQ(Take(kiln_function_call_timed(Lookup("add_bias"), 1, &input, 1,
                                          &output, nullptr))
                .code,
            KILN_STATUS_INVALID_ARGUMENT);
  kiln_call_timing_t timing = {};
  timing.host_ns = 5;
  EXPECT_EQ(Take(kiln_function_call_timed(Lookup("add_bias"), 0, nullptr, 1,
                                          &output, &timing))
                .code,
            KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(timing.host_ns, 0u);
  EXPECT_EQ(output, nullptr);
  kiln_buffer_view_release(input);
}

TEST_F(RuntimeApiTest, CallsReuseTheStorageOfReleasedOutputs) {
  kiln_buffer_view_t* inputs[2] = {MakeF32({2, 3}, {1, 2, 3, 4, 5, 6}),
                                   MakeF32({2, 3}, {1, 1, 1, 1, 1, 1})};
  kiln_function_t* add = Lookup("add");
  kiln_buffer_view_t* output = nullptr;
  ASSERT_OK(kiln_function_call(add, 2, inputs, 1, &output));
  kiln_buffer_view_release(output);
  kiln_device_memory_stats_t first = {};
  ASSERT_OK(kiln_device_query_memory_stats(device_, &first));
  for (int i = 0; i < 5; ++i) {
    ASSERT_OK(kiln_function_call(add, 2, inputs, 1, &output));
    EXPECT_EQ(ReadF32(output), (std::vector<float>{2, 3, 4, 5, 6, 7}));
    kiln_buffer_view_release(output);
  }
  kiln_device_memory_stats_t later = {};
  ASSERT_OK(kiln_device_query_memory_stats(device_, &later));
  EXPECT_EQ(later.system_allocations, first.system_allocations);
  EXPECT_GE(later.cache_hits, first.cache_hits + 5);
  EXPECT_GT(later.bytes_cached, 0u);

  ASSERT_OK(kiln_device_trim(device_));
  kiln_device_memory_stats_t trimmed = {};
  ASSERT_OK(kiln_device_query_memory_stats(device_, &trimmed));
  EXPECT_EQ(trimmed.bytes_cached, 0u);
  EXPECT_EQ(trimmed.bytes_in_use, later.bytes_in_use);
  EXPECT_EQ(Take(kiln_device_trim(nullptr)).code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Take(kiln_device_query_memory_stats(device_, nullptr)).code,
            KILN_STATUS_INVALID_ARGUMENT);
  kiln_buffer_view_release(inputs[0]);
  kiln_buffer_view_release(inputs[1]);
}

TEST_F(RuntimeApiTest, MemoryLimitFromTheUriFailsCallsCleanly) {
  kiln_device_t* device = nullptr;
  ASSERT_OK(kiln_device_create(instance_, "local?memory_limit=8K", &device));
  kiln_device_memory_stats_t stats = {};
  ASSERT_OK(kiln_device_query_memory_stats(device, &stats));
  EXPECT_EQ(stats.bytes_limit, 8192u);
  std::vector<uint8_t> bytes = testing::TestModuleBytes();
  kiln_module_t* module = nullptr;
  ASSERT_OK(kiln_module_load_memory(device, bytes.data(), bytes.size(), &module));
  kiln_function_t* add = nullptr;
  ASSERT_OK(kiln_module_lookup_function(module, "add", &add));
  std::vector<float> values = {1, 2, 3, 4, 5, 6};
  int64_t shape[2] = {2, 3};
  kiln_buffer_view_t* input = nullptr;
  ASSERT_OK(kiln_buffer_view_create_from_host(
      device, KILN_ELEMENT_TYPE_F32, 2, shape, values.data(),
      values.size() * sizeof(float), &input));
  // Keep every output: the limit is reached within a few calls.
  std::vector<kiln_buffer_view_t*> kept;
  StatusInfo failure{KILN_STATUS_OK, "OK"};
  for (int i = 0; i < 64 && failure.code == KILN_STATUS_OK; ++i) {
    kiln_buffer_view_t* inputs[2] = {input, input};
    kiln_buffer_view_t* output = nullptr;
    failure = Take(kiln_function_call(add, 2, inputs, 1, &output));
    if (failure.code == KILN_STATUS_OK) kept.push_back(output);
    else EXPECT_EQ(output, nullptr);
  }
  EXPECT_EQ(failure.code, KILN_STATUS_RESOURCE_EXHAUSTED);
  EXPECT_NE(failure.message.find("memory_limit of 8192 bytes"),
            std::string::npos)
      << failure.message;
  EXPECT_FALSE(kept.empty());
  for (kiln_buffer_view_t* view : kept) kiln_buffer_view_release(view);
  // With the outputs released, calls fit again.
  kiln_buffer_view_t* inputs[2] = {input, input};
  kiln_buffer_view_t* output = nullptr;
  ASSERT_OK(kiln_function_call(add, 2, inputs, 1, &output));
  kiln_buffer_view_release(output);
  kiln_buffer_view_release(input);
  kiln_module_release(module);
  kiln_device_release(device);

  // Bad values name the option.
  StatusInfo bad = Take(kiln_device_create(instance_, "local?memory_limit=x",
                                           &device));
  EXPECT_EQ(bad.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(bad.message.find("memory_limit"), std::string::npos) << bad.message;
}

TEST_F(RuntimeApiTest, RodataTransientAndCopy) {
  kiln_buffer_view_t* input = MakeF32({2, 3}, {1, 2, 3, 4, 5, 6});
  kiln_buffer_view_t* output = nullptr;
  ASSERT_OK(kiln_function_call(Lookup("add_bias"), 1, &input, 1, &output));
  EXPECT_EQ(ReadF32(output), (std::vector<float>{11, 22, 33, 44, 55, 66}));
  kiln_buffer_view_release(output);
  kiln_buffer_view_release(input);
}

TEST_F(RuntimeApiTest, FillWithoutInputs) {
  kiln_buffer_view_t* output = nullptr;
  ASSERT_OK(kiln_function_call(Lookup("fill"), 0, nullptr, 1, &output));
  int32_t values[4] = {};
  ASSERT_OK(kiln_buffer_view_read(output, values, sizeof(values)));
  for (int32_t v : values) EXPECT_EQ(v, 7);
  // A wrongly sized destination is refused.
  EXPECT_EQ(Take(kiln_buffer_view_read(output, values, 8)).code,
            KILN_STATUS_INVALID_ARGUMENT);
  kiln_buffer_view_release(output);
}

void CountRelease(void* user_data) {
  static_cast<std::atomic<int>*>(user_data)->fetch_add(1);
}

TEST_F(RuntimeApiTest, ImportedHostMemoryIsReadInPlaceAndReleasedAfterUse) {
  alignas(64) float a[6] = {1, 2, 3, 4, 5, 6};
  alignas(64) float b[6] = {10, 20, 30, 40, 50, 60};
  std::atomic<int> released{0};
  int64_t shape[2] = {2, 3};
  kiln_external_memory_t memory = {KILN_EXTERNAL_MEMORY_HOST, a, sizeof(a),
                                   CountRelease, &released};
  kiln_buffer_view_t* inputs[2] = {nullptr, nullptr};
  ASSERT_OK(kiln_buffer_view_import(device_, KILN_ELEMENT_TYPE_F32, 2, shape,
                                    &memory, &inputs[0]));
  memory.data = b;
  ASSERT_OK(kiln_buffer_view_import(device_, KILN_ELEMENT_TYPE_F32, 2, shape,
                                    &memory, &inputs[1]));
  // In place: a write to the owner's memory before the call is what it reads.
  a[0] = 100;
  kiln_fence_t* gate = nullptr;
  ASSERT_OK(kiln_fence_create(device_, &gate));
  kiln_buffer_view_t* output = nullptr;
  ASSERT_OK(kiln_function_call_async(Lookup("add"), 2, inputs, gate, nullptr, 1,
                                     &output));
  // The views go, but the queued call still holds the memory.
  kiln_buffer_view_release(inputs[0]);
  kiln_buffer_view_release(inputs[1]);
  EXPECT_EQ(released.load(), 0);
  ASSERT_OK(kiln_fence_signal(gate));
  EXPECT_EQ(ReadF32(output), (std::vector<float>{110, 22, 33, 44, 55, 66}));
  for (int i = 0; i < 3000 && released.load() < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(released.load(), 2);

  // An output handed out in place: the same bytes, valid while the view
  // lives.
  kiln_external_memory_t exported = {};
  ASSERT_OK(kiln_buffer_view_export(output, &exported));
  EXPECT_EQ(exported.type, KILN_EXTERNAL_MEMORY_HOST);
  EXPECT_EQ(exported.byte_length, 6 * sizeof(float));
  EXPECT_EQ(exported.release, nullptr);
  ASSERT_NE(exported.data, nullptr);
  EXPECT_EQ(static_cast<float*>(exported.data)[5], 66.0f);
  kiln_device_external_info_t info = {};
  ASSERT_OK(kiln_device_query_external_info(device_, &info));
  EXPECT_EQ(info.memory_type, KILN_EXTERNAL_MEMORY_HOST);
  EXPECT_EQ(info.stream, 0u);
  EXPECT_EQ(Take(kiln_device_wait_external_stream(device_, 1)).code,
            KILN_STATUS_UNIMPLEMENTED);
  kiln_buffer_view_release(output);
  kiln_fence_release(gate);
}

TEST_F(RuntimeApiTest, BadImportsAreErrorsThatKeepTheMemory) {
  alignas(64) float data[8] = {};
  std::atomic<int> released{0};
  int64_t shape[1] = {6};
  kiln_external_memory_t memory = {KILN_EXTERNAL_MEMORY_HOST, data,
                                   sizeof(data), CountRelease, &released};
  kiln_buffer_view_t* view = nullptr;
  StatusInfo info = Take(kiln_buffer_view_import(device_, KILN_ELEMENT_TYPE_F32,
                                                 1, shape, &memory, &view));
  EXPECT_EQ(info.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("6xf32 tensor has 24 bytes, the external "
                              "memory 32"),
            std::string::npos)
      << info.message;
  memory.byte_length = 24;
  memory.data = reinterpret_cast<char*>(data) + 4;
  info = Take(kiln_buffer_view_import(device_, KILN_ELEMENT_TYPE_F32, 1, shape,
                                      &memory, &view));
  EXPECT_EQ(info.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("not 16-byte aligned"), std::string::npos)
      << info.message;
  memory.data = data;
  memory.type = KILN_EXTERNAL_MEMORY_CUDA;
  info = Take(kiln_buffer_view_import(device_, KILN_ELEMENT_TYPE_F32, 1, shape,
                                      &memory, &view));
  EXPECT_EQ(info.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("local"), std::string::npos) << info.message;
  memory.type = KILN_EXTERNAL_MEMORY_HOST;
  EXPECT_EQ(Take(kiln_buffer_view_import(device_, KILN_ELEMENT_TYPE_INVALID, 1,
                                         shape, &memory, &view))
                .code,
            KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(view, nullptr);
  EXPECT_EQ(released.load(), 0);
  // An empty tensor shares nothing: its memory is released at once.
  int64_t empty[1] = {0};
  memory.byte_length = 0;
  ASSERT_OK(kiln_buffer_view_import(device_, KILN_ELEMENT_TYPE_F32, 1, empty,
                                    &memory, &view));
  EXPECT_EQ(released.load(), 1);
  EXPECT_EQ(kiln_buffer_view_element_count(view), 0u);
  kiln_buffer_view_release(view);
}

TEST_F(RuntimeApiTest, AsyncCallWaitsForItsFence) {
  kiln_fence_t* wait = nullptr;
  kiln_fence_t* signal = nullptr;
  ASSERT_OK(kiln_fence_create(device_, &wait));
  ASSERT_OK(kiln_fence_create(device_, &signal));
  kiln_buffer_view_t* inputs[2] = {MakeF32({2, 3}, {1, 1, 1, 1, 1, 1}),
                                   MakeF32({2, 3}, {2, 2, 2, 2, 2, 2})};
  kiln_buffer_view_t* output = nullptr;
  ASSERT_OK(kiln_function_call_async(Lookup("add"), 2, inputs, wait, signal, 1,
                                     &output));
  // Nothing can run before the wait fence is signaled.
  bool signaled = true;
  ASSERT_OK(kiln_fence_query(signal, &signaled));
  EXPECT_FALSE(signaled);
  EXPECT_EQ(Take(kiln_fence_wait(signal, 1000000)).code,
            KILN_STATUS_DEADLINE_EXCEEDED);
  ASSERT_OK(kiln_fence_signal(wait));
  EXPECT_EQ(Take(kiln_fence_signal(wait)).code, KILN_STATUS_FAILED_PRECONDITION);
  ASSERT_OK(kiln_fence_wait(signal, INT64_MAX));
  ASSERT_OK(kiln_fence_query(signal, &signaled));
  EXPECT_TRUE(signaled);
  EXPECT_EQ(ReadF32(output), (std::vector<float>(6, 3.0f)));
  kiln_buffer_view_release(output);
  kiln_buffer_view_release(inputs[0]);
  kiln_buffer_view_release(inputs[1]);
  kiln_fence_release(wait);
  kiln_fence_release(signal);
}

TEST_F(RuntimeApiTest, ChainedAsyncCallsAndReadWaits) {
  kiln_buffer_view_t* inputs[2] = {MakeF32({2, 3}, {1, 2, 3, 4, 5, 6}),
                                   MakeF32({2, 3}, {1, 1, 1, 1, 1, 1})};
  kiln_fence_t* start = nullptr;
  ASSERT_OK(kiln_fence_create(device_, &start));
  kiln_buffer_view_t* first = nullptr;
  ASSERT_OK(kiln_function_call_async(Lookup("add"), 2, inputs, start, nullptr,
                                     1, &first));
  // The second call consumes the first's pending output: it waits for it.
  kiln_buffer_view_t* second_inputs[2] = {first, inputs[1]};
  kiln_buffer_view_t* second = nullptr;
  ASSERT_OK(kiln_function_call_async(Lookup("add"), 2, second_inputs, nullptr,
                                     nullptr, 1, &second));
  std::thread signaler([&] { kiln_status_free(kiln_fence_signal(start)); });
  EXPECT_EQ(ReadF32(second), (std::vector<float>{3, 4, 5, 6, 7, 8}));
  signaler.join();
  kiln_buffer_view_release(second);
  kiln_buffer_view_release(first);
  kiln_buffer_view_release(inputs[0]);
  kiln_buffer_view_release(inputs[1]);
  kiln_fence_release(start);
}

TEST_F(RuntimeApiTest, KernelFailureReachesCallerAndFence) {
  kiln_buffer_view_t* inputs[2] = {MakeF32({2, 3}, {1, 2, 3, 4, 5, 6}),
                                   MakeF32({2, 3}, {1, 2, 3, 4, 5, 6})};
  kiln_buffer_view_t* output = nullptr;
  StatusInfo info =
      Take(kiln_function_call(Lookup("fail"), 2, inputs, 1, &output));
  EXPECT_NE(info.code, KILN_STATUS_OK);
  EXPECT_NE(info.message.find("fail"), std::string::npos) << info.message;
  EXPECT_EQ(output, nullptr);

  kiln_fence_t* signal = nullptr;
  ASSERT_OK(kiln_fence_create(device_, &signal));
  ASSERT_OK(kiln_function_call_async(Lookup("fail"), 2, inputs, nullptr, signal,
                                     1, &output));
  EXPECT_NE(Take(kiln_fence_wait(signal, INT64_MAX)).code, KILN_STATUS_OK);
  float values[6];
  EXPECT_NE(Take(kiln_buffer_view_read(output, values, sizeof(values))).code,
            KILN_STATUS_OK);
  kiln_buffer_view_release(output);
  kiln_fence_release(signal);
  kiln_buffer_view_release(inputs[0]);
  kiln_buffer_view_release(inputs[1]);
}

TEST_F(RuntimeApiTest, WrongInputsAreInvalidArgumentsNamingTheInput) {
  kiln_function_t* add = Lookup("add");
  kiln_buffer_view_t* good = MakeF32({2, 3}, {1, 2, 3, 4, 5, 6});
  kiln_buffer_view_t* transposed = MakeF32({3, 2}, {1, 2, 3, 4, 5, 6});
  int32_t ints[6] = {1, 2, 3, 4, 5, 6};
  int64_t shape[2] = {2, 3};
  kiln_buffer_view_t* wrong_type = nullptr;
  ASSERT_OK(kiln_buffer_view_create_from_host(device_, KILN_ELEMENT_TYPE_I32,
                                              2, shape, ints, sizeof(ints),
                                              &wrong_type));
  kiln_buffer_view_t* output = nullptr;

  kiln_buffer_view_t* bad_shape[2] = {good, transposed};
  StatusInfo info = Take(kiln_function_call(add, 2, bad_shape, 1, &output));
  EXPECT_EQ(info.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("function 'add' input 1: expected 2x3xf32, got "
                              "3x2xf32"),
            std::string::npos)
      << info.message;

  kiln_buffer_view_t* bad_type[2] = {wrong_type, good};
  info = Take(kiln_function_call(add, 2, bad_type, 1, &output));
  EXPECT_EQ(info.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("input 0: expected 2x3xf32, got 2x3xi32"),
            std::string::npos)
      << info.message;

  info = Take(kiln_function_call(add, 1, bad_type, 1, &output));
  EXPECT_EQ(info.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("expects 2 inputs, got 1"), std::string::npos)
      << info.message;

  kiln_buffer_view_t* null_input[2] = {good, nullptr};
  EXPECT_EQ(Take(kiln_function_call(add, 2, null_input, 1, &output)).code,
            KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Take(kiln_function_call(nullptr, 0, nullptr, 0, nullptr)).code,
            KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(output, nullptr);

  // Host data of the wrong size.
  kiln_buffer_view_t* view = nullptr;
  EXPECT_EQ(Take(kiln_buffer_view_create_from_host(device_,
                                                   KILN_ELEMENT_TYPE_F32, 2,
                                                   shape, ints, 8, &view))
                .code,
            KILN_STATUS_INVALID_ARGUMENT);
  int64_t negative[1] = {-1};
  EXPECT_EQ(Take(kiln_buffer_view_create_from_host(
                     device_, KILN_ELEMENT_TYPE_F32, 1, negative, nullptr, 0,
                     &view))
                .code,
            KILN_STATUS_INVALID_ARGUMENT);
  kiln_buffer_view_release(good);
  kiln_buffer_view_release(transposed);
  kiln_buffer_view_release(wrong_type);
}

TEST_F(RuntimeApiTest, MissingFunctionListsTheExistingOnes) {
  kiln_function_t* function = nullptr;
  StatusInfo info =
      Take(kiln_module_lookup_function(module_, "mul", &function));
  EXPECT_EQ(info.code, KILN_STATUS_NOT_FOUND);
  EXPECT_NE(info.message.find("'mul' not found"), std::string::npos);
  EXPECT_NE(info.message.find("add, add_bias, fill, fail"), std::string::npos)
      << info.message;
}

TEST_F(RuntimeApiTest, UnknownDeviceListsAvailableDevices) {
  kiln_device_t* device = nullptr;
  StatusInfo info = Take(kiln_device_create(instance_, "cuda://0", &device));
  EXPECT_EQ(info.code, KILN_STATUS_NOT_FOUND);
  EXPECT_NE(info.message.find("local://0"), std::string::npos) << info.message;
  EXPECT_EQ(device, nullptr);
  char list[256];
  kiln_instance_list_devices(instance_, list, sizeof(list));
  EXPECT_NE(std::string(list).find("local://0"), std::string::npos);
}

// A URI naming a driver the instance lacks loads the plugin installed for it
// next to libkiln_runtime.so (libkiln_hal_<driver>.so): in the build tree,
// samples/custom_driver's libkiln_hal_sample.so in <build>/lib.
TEST_F(RuntimeApiTest, InstalledPluginLoadsOnDemand) {
  Dl_info info;
  ASSERT_TRUE(dladdr(reinterpret_cast<void*>(&kiln_instance_create), &info));
  std::string library = info.dli_fname;
  std::string directory = library.substr(0, library.rfind('/'));
  char reported[4096];
  ASSERT_EQ(kiln_plugin_directory(reported, sizeof(reported)), directory.size());
  EXPECT_EQ(std::string(reported), directory);
  std::string plugin = directory + "/libkiln_hal_sample.so";
  if (access(plugin.c_str(), F_OK) != 0)
    GTEST_SKIP() << "no " << plugin << " (the sample driver is not built)";
  kiln_device_t* device = nullptr;
  // instance_ ignores $KILN_HAL_DRIVER_PLUGINS and was given no plugins.
  ASSERT_OK(kiln_device_create(instance_, "sample", &device));
  EXPECT_STREQ(kiln_device_uri(device), "sample");
  char list[512];
  kiln_instance_list_devices(instance_, list, sizeof(list));
  EXPECT_NE(std::string(list).find("sample://0"), std::string::npos) << list;
  kiln_device_release(device);
  // A second device of the driver reuses the loaded plugin.
  ASSERT_OK(kiln_device_create(instance_, "sample://0", &device));
  kiln_device_release(device);
  // Driver names that are not plain identifiers never name a file.
  StatusInfo bad = Take(kiln_device_create(instance_, "../sample", &device));
  EXPECT_EQ(bad.code, KILN_STATUS_NOT_FOUND);
}

TEST_F(RuntimeApiTest, CorruptAndMissingModulesFailToLoad) {
  kiln_module_t* module = nullptr;
  std::vector<uint8_t> bytes = testing::TestModuleBytes();
  bytes.resize(bytes.size() / 2);
  EXPECT_NE(Take(kiln_module_load_memory(device_, bytes.data(), bytes.size(),
                                         &module))
                .code,
            KILN_STATUS_OK);
  EXPECT_EQ(Take(kiln_module_load_file(device_, "/no/such/module.vmfb",
                                       &module))
                .code,
            KILN_STATUS_NOT_FOUND);
  EXPECT_EQ(module, nullptr);
}

// Only regular files are read, never more than fstat said: /dev/zero would
// be read until memory runs out, a FIFO would block the open.
TEST_F(RuntimeApiTest, ModuleFilesMustBeRegularFiles) {
  const std::string fifo = ::testing::TempDir() + "/runtime_api_test_fifo";
  unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::pair<std::string, std::string> cases[] = {
      {"/dev/zero", "a character device"},
      {::testing::TempDir(), "a directory"},
      {fifo, "a FIFO"},
  };
  for (const auto& [path, kind] : cases) {
    kiln_module_t* module = nullptr;
    StatusInfo info =
        Take(kiln_module_load_file(device_, path.c_str(), &module));
    EXPECT_EQ(info.code, KILN_STATUS_INVALID_ARGUMENT) << path;
    EXPECT_EQ(info.message, "cannot read module file '" + path + "': it is " +
                                kind + ", not a regular file");
    EXPECT_EQ(module, nullptr);
  }
  unlink(fifo.c_str());
}

TEST_F(RuntimeApiTest, ModuleLargerThanAFlatBufferIsRefusedBeforeCopying) {
  // Only the size is looked at: the bytes behind it are never read.
  uint8_t byte = 0;
  kiln_module_t* module = nullptr;
  StatusInfo info = Take(kiln_module_load_memory(
      device_, &byte, size_t{3} << 30, &module));
  EXPECT_EQ(info.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("is 3221225472 bytes; a module has at most "
                              "2147483647"),
            std::string::npos)
      << info.message;
}

TEST_F(RuntimeApiTest, ModuleWithoutRunnableVariantIsIncompatible) {
  auto tree = testing::BuildTestModule();
  tree->executables[0]->variants.pop_back();  // only rocm:gfx942 remains
  std::vector<uint8_t> bytes = testing::Serialize(*tree);
  kiln_module_t* module = nullptr;
  StatusInfo info = Take(
      kiln_module_load_memory(device_, bytes.data(), bytes.size(), &module));
  EXPECT_EQ(info.code, KILN_STATUS_INCOMPATIBLE);
  EXPECT_NE(info.message.find("rocm:gfx942 (hsaco)"), std::string::npos)
      << info.message;
}

TEST_F(RuntimeApiTest, ConcurrentCallsFromManyThreads) {
  kiln_function_t* add = Lookup("add");
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        float base = static_cast<float>(t * 100 + i);
        kiln_buffer_view_t* inputs[2] = {
            MakeF32({2, 3}, std::vector<float>(6, base)),
            MakeF32({2, 3}, std::vector<float>(6, 1.0f))};
        kiln_buffer_view_t* output = nullptr;
        kiln_status_t status = kiln_function_call(add, 2, inputs, 1, &output);
        if (!kiln_status_is_ok(status) ||
            ReadF32(output) != std::vector<float>(6, base + 1)) {
          ++failures;
        }
        kiln_status_free(status);
        kiln_buffer_view_release(output);
        kiln_buffer_view_release(inputs[0]);
        kiln_buffer_view_release(inputs[1]);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(RuntimeApiTest, ReleaseOrderDoesNotMatter) {
  kiln_buffer_view_t* input = MakeF32({2, 3}, {1, 2, 3, 4, 5, 6});
  kiln_buffer_view_t* output = nullptr;
  ASSERT_OK(kiln_function_call(Lookup("add_bias"), 1, &input, 1, &output));
  // Drop the module, device and instance first; the view keeps what it needs.
  kiln_module_release(module_);
  kiln_device_release(device_);
  kiln_instance_release(instance_);
  module_ = nullptr;
  device_ = nullptr;
  instance_ = nullptr;
  float values[6];
  ASSERT_OK(kiln_buffer_view_read(output, values, sizeof(values)));
  EXPECT_EQ(values[5], 66.0f);
  kiln_buffer_view_release(output);
  kiln_buffer_view_release(input);
}

}  // namespace
}  // namespace kiln
