// SPMD programs through the embedding API: a collective group over local
// devices, modules with channels loaded on every rank, and collective
// commands run by the module executor with real numbers checked per rank.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "kiln/runtime.h"
#include "status_test_util.h"
#include "test_modules.h"

namespace kiln {
namespace {

using testing::StatusInfo;
using testing::Take;

// Runs body(rank) for every rank at once, one thread each (collectives and
// channel splits need all ranks).
void ForEachRank(int ranks, const std::function<void(int)>& body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) threads.emplace_back(body, r);
  for (std::thread& thread : threads) thread.join();
}

class CollectiveGroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kiln_instance_options_t options = {};
    options.ignore_plugin_environment = true;
    ASSERT_OK(kiln_instance_create(&options, &instance_));
    for (int r = 0; r < 4; ++r) {
      kiln_device_t* device = nullptr;
      std::string uri = "local://" + std::to_string(r);
      ASSERT_OK(kiln_device_create(instance_, uri.c_str(), &device));
      devices_.push_back(device);
    }
  }
  void TearDown() override {
    for (kiln_module_t* module : modules_) kiln_module_release(module);
    kiln_collective_group_release(group_);
    for (kiln_device_t* device : devices_) kiln_device_release(device);
    kiln_instance_release(instance_);
  }

  // Forms a group of the first |ranks| devices and loads the SPMD module for
  // |grid| on each of them.
  void Start(int ranks, const std::vector<int64_t>& grid) {
    kiln_collective_group_params_t params = {};
    params.world_size = ranks;
    ASSERT_OK(kiln_collective_group_create(devices_.data(), size_t(ranks),
                                           &params, &group_));
    bytes_ = testing::Serialize(*testing::BuildSpmdModule(grid));
    modules_.assign(size_t(ranks), nullptr);
    std::vector<StatusInfo> results(static_cast<size_t>(ranks));
    ForEachRank(ranks, [&](int r) {
      results[r] = Take(kiln_module_load_memory(
          devices_[r], bytes_.data(), bytes_.size(), &modules_[r]));
    });
    for (int r = 0; r < ranks; ++r) {
      ASSERT_EQ(results[r].code, KILN_STATUS_OK) << "rank " << r << ": "
                                                 << results[r].message;
    }
  }

  // Calls |name| on every rank with input inputs[r] (one f32 tensor of
  // rank 1) and returns each rank's output 0.
  std::vector<std::vector<float>> CallAll(
      const char* name, const std::vector<std::vector<float>>& inputs) {
    const size_t ranks = modules_.size();
    std::vector<std::vector<float>> outputs(ranks);
    std::vector<StatusInfo> results(ranks);
    ForEachRank(int(ranks), [&](int r) {
      results[r] = Take(Call(r, name, inputs[r], &outputs[r]));
    });
    for (size_t r = 0; r < ranks; ++r) {
      EXPECT_EQ(results[r].code, KILN_STATUS_OK) << "rank " << r << ": "
                                                 << results[r].message;
    }
    return outputs;
  }

  kiln_status_t Call(int rank, const char* name, const std::vector<float>& in,
                     std::vector<float>* out) {
    kiln_function_t* function = nullptr;
    KILN_RETURN_IF_ERROR(
        kiln_module_lookup_function(modules_[rank], name, &function));
    int64_t shape[1] = {int64_t(in.size())};
    kiln_buffer_view_t* input = nullptr;
    KILN_RETURN_IF_ERROR(kiln_buffer_view_create_from_host(
        devices_[rank], KILN_ELEMENT_TYPE_F32, 1, shape, in.data(),
        in.size() * sizeof(float), &input));
    kiln_buffer_view_t* output = nullptr;
    kiln_status_t status = kiln_function_call(function, 1, &input, 1, &output);
    kiln_buffer_view_release(input);
    KILN_RETURN_IF_ERROR(status);
    out->resize(kiln_buffer_view_element_count(output));
    status = kiln_buffer_view_read(output, out->data(),
                                   out->size() * sizeof(float));
    kiln_buffer_view_release(output);
    return status;
  }

  kiln_instance_t* instance_ = nullptr;
  std::vector<kiln_device_t*> devices_;
  kiln_collective_group_t* group_ = nullptr;
  std::vector<uint8_t> bytes_;
  std::vector<kiln_module_t*> modules_;
};

TEST_F(CollectiveGroupTest, QueriesRankAndWorldSize) {
  kiln_collective_group_params_t params = {};
  params.world_size = 4;
  params.first_rank = 0;
  ASSERT_OK(kiln_collective_group_create(devices_.data(), 4, &params, &group_));
  EXPECT_EQ(kiln_collective_group_world_size(group_), 4);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(kiln_device_collective_rank(devices_[r]), r);
    EXPECT_EQ(kiln_device_collective_world_size(devices_[r]), 4);
  }
  kiln_collective_group_release(group_);
  group_ = nullptr;
  EXPECT_EQ(kiln_device_collective_rank(devices_[0]), -1);
  EXPECT_EQ(kiln_device_collective_world_size(devices_[0]), 0);
}

TEST_F(CollectiveGroupTest, AllCollectivesOnFourRanks) {
  Start(4, {4});
  auto reduced = CallAll("all_reduce", {{1, 2, 3, 4}, {10, 20, 30, 40},
                                        {100, 200, 300, 400},
                                        {1000, 2000, 3000, 4000}});
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(reduced[r], (std::vector<float>{1111, 2222, 3333, 4444}));
  }
  auto gathered = CallAll("all_gather", {{0, 1}, {10, 11}, {20, 21}, {30, 31}});
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(gathered[r],
              (std::vector<float>{0, 1, 10, 11, 20, 21, 30, 31}));
  }
  std::vector<float> ones(8, 1);
  std::vector<float> ramp = {0, 1, 2, 3, 4, 5, 6, 7};
  auto scattered = CallAll("reduce_scatter", {ones, ramp, ramp, ramp});
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(scattered[r],
              (std::vector<float>{1 + 3 * 2.f * r, 1 + 3 * (2.f * r + 1)}));
  }
  std::vector<std::vector<float>> blocks(4);
  for (int r = 0; r < 4; ++r) {
    for (int i = 0; i < 8; ++i) blocks[r].push_back(float(10 * r + i));
  }
  auto exchanged = CallAll("all_to_all", blocks);
  // Rank r receives chunk r (2 elements) of every rank, in rank order.
  for (int r = 0; r < 4; ++r) {
    std::vector<float> expected;
    for (int s = 0; s < 4; ++s) {
      expected.push_back(float(10 * s + 2 * r));
      expected.push_back(float(10 * s + 2 * r + 1));
    }
    EXPECT_EQ(exchanged[r], expected) << "rank " << r;
  }
  auto broadcast = CallAll("broadcast", {{0, 0, 0, 0}, {1, 1, 1, 1},
                                         {2, 2, 2, 2}, {9, 8, 7, 6}});
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(broadcast[r], (std::vector<float>{9, 8, 7, 6}));
  }
}

TEST_F(CollectiveGroupTest, DispatchThenAllReduceThroughTransientArena) {
  Start(2, {2});
  std::vector<std::vector<float>> sums(2);
  std::vector<StatusInfo> results(2);
  ForEachRank(2, [&](int r) {
    kiln_function_t* function = nullptr;
    results[r] = Take(
        kiln_module_lookup_function(modules_[r], "add_all_reduce", &function));
    if (results[r].code != KILN_STATUS_OK) return;
    int64_t shape[2] = {2, 3};
    std::vector<float> a = {1, 2, 3, 4, 5, 6};
    std::vector<float> b(6, float(r + 1) * 100);
    kiln_buffer_view_t* inputs[2] = {nullptr, nullptr};
    kiln_status_free(kiln_buffer_view_create_from_host(
        devices_[r], KILN_ELEMENT_TYPE_F32, 2, shape, a.data(), 24, &inputs[0]));
    kiln_status_free(kiln_buffer_view_create_from_host(
        devices_[r], KILN_ELEMENT_TYPE_F32, 2, shape, b.data(), 24, &inputs[1]));
    kiln_buffer_view_t* output = nullptr;
    results[r] = Take(kiln_function_call(function, 2, inputs, 1, &output));
    if (results[r].code == KILN_STATUS_OK) {
      sums[r].resize(6);
      results[r] = Take(kiln_buffer_view_read(output, sums[r].data(), 24));
    }
    kiln_buffer_view_release(output);
    kiln_buffer_view_release(inputs[0]);
    kiln_buffer_view_release(inputs[1]);
  });
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(results[r].code, KILN_STATUS_OK) << results[r].message;
    // (a + 100) + (a + 200) on both ranks.
    EXPECT_EQ(sums[r], (std::vector<float>{302, 304, 306, 308, 310, 312}));
  }
}

TEST_F(CollectiveGroupTest, SubGridChannelsOnTwoByTwoGrid) {
  Start(4, {2, 2});
  // Rows are ranks {0, 1} and {2, 3} (axis 1 varies within a row).
  auto rows = CallAll("row_sum", {{1, 1, 1, 1}, {2, 2, 2, 2},
                                  {10, 10, 10, 10}, {20, 20, 20, 20}});
  EXPECT_EQ(rows[0], (std::vector<float>(4, 3)));
  EXPECT_EQ(rows[1], (std::vector<float>(4, 3)));
  EXPECT_EQ(rows[2], (std::vector<float>(4, 30)));
  EXPECT_EQ(rows[3], (std::vector<float>(4, 30)));
  // Columns are ranks {0, 2} and {1, 3}.
  auto columns = CallAll("column_gather", {{0}, {1}, {2}, {3}});
  EXPECT_EQ(columns[0], (std::vector<float>{0, 2}));
  EXPECT_EQ(columns[1], (std::vector<float>{1, 3}));
  EXPECT_EQ(columns[2], (std::vector<float>{0, 2}));
  EXPECT_EQ(columns[3], (std::vector<float>{1, 3}));
}

TEST_F(CollectiveGroupTest, SpmdFunctionWithoutGroupIsAClearError) {
  bytes_ = testing::Serialize(*testing::BuildSpmdModule({2}));
  kiln_module_t* module = nullptr;
  ASSERT_OK(kiln_module_load_memory(devices_[0], bytes_.data(), bytes_.size(),
                                    &module));
  modules_.push_back(module);
  // The non-SPMD function of the module still runs.
  kiln_function_t* function = nullptr;
  ASSERT_OK(kiln_module_lookup_function(module, "all_reduce", &function));
  std::vector<float> values(4, 1);
  int64_t shape[1] = {4};
  kiln_buffer_view_t* input = nullptr;
  ASSERT_OK(kiln_buffer_view_create_from_host(devices_[0], KILN_ELEMENT_TYPE_F32,
                                              1, shape, values.data(), 16,
                                              &input));
  kiln_buffer_view_t* output = nullptr;
  StatusInfo info = Take(kiln_function_call(function, 1, &input, 1, &output));
  kiln_buffer_view_release(input);
  EXPECT_EQ(info.code, KILN_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(info.message.find("'all_reduce'"), std::string::npos) << info.message;
  EXPECT_NE(info.message.find("2 grid (2 ranks)"), std::string::npos)
      << info.message;
  EXPECT_NE(info.message.find("no collective group"), std::string::npos)
      << info.message;
  EXPECT_EQ(output, nullptr);
}

TEST_F(CollectiveGroupTest, GridSizeMustMatchWorldSize) {
  kiln_collective_group_params_t params = {};
  params.world_size = 2;
  ASSERT_OK(kiln_collective_group_create(devices_.data(), 2, &params, &group_));
  bytes_ = testing::Serialize(*testing::BuildSpmdModule({4}));
  kiln_module_t* module = nullptr;
  StatusInfo info = Take(kiln_module_load_memory(devices_[0], bytes_.data(),
                                                 bytes_.size(), &module));
  EXPECT_EQ(info.code, KILN_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(info.message.find("runs on a 4 grid (4 ranks), but device "
                              "'local://0' is rank 0 of a 2-rank collective "
                              "group"),
            std::string::npos)
      << info.message;
  EXPECT_EQ(module, nullptr);
}

TEST_F(CollectiveGroupTest, BadGroupArgumentsAreErrors) {
  kiln_collective_group_params_t params = {};
  kiln_collective_group_t* group = nullptr;
  params.world_size = 0;
  StatusInfo info = Take(
      kiln_collective_group_create(devices_.data(), 2, &params, &group));
  EXPECT_EQ(info.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("world size 0"), std::string::npos);

  params.world_size = 2;
  params.first_rank = 1;
  info = Take(kiln_collective_group_create(devices_.data(), 2, &params, &group));
  EXPECT_EQ(info.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("not within the 2 ranks"), std::string::npos)
      << info.message;

  kiln_device_t* twice[2] = {devices_[0], devices_[0]};
  params.first_rank = 0;
  info = Take(kiln_collective_group_create(twice, 2, &params, &group));
  EXPECT_EQ(info.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("given twice"), std::string::npos);

  // Part of a larger world without a rendezvous.
  params.world_size = 4;
  info = Take(kiln_collective_group_create(devices_.data(), 2, &params, &group));
  EXPECT_EQ(info.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(info.message.find("needs a rendezvous"), std::string::npos)
      << info.message;

  // The local driver cannot reach ranks of other processes.
  params.rendezvous = "tcp://127.0.0.1:1";
  info = Take(kiln_collective_group_create(devices_.data(), 2, &params, &group));
  EXPECT_EQ(info.code, KILN_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(info.message.find("only connect devices of one process"),
            std::string::npos)
      << info.message;
  EXPECT_EQ(group, nullptr);
  // Failed attempts leave the devices free.
  EXPECT_EQ(kiln_device_collective_rank(devices_[0]), -1);
}

TEST_F(CollectiveGroupTest, DeviceBelongsToOneGroup) {
  kiln_collective_group_params_t params = {};
  params.world_size = 2;
  ASSERT_OK(kiln_collective_group_create(devices_.data(), 2, &params, &group_));
  kiln_device_t* overlap[2] = {devices_[1], devices_[2]};
  kiln_collective_group_t* second = nullptr;
  StatusInfo info = Take(kiln_collective_group_create(overlap, 2, &params,
                                                      &second));
  EXPECT_EQ(info.code, KILN_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(info.message.find("'local://1' already belongs"), std::string::npos)
      << info.message;
  // devices_[2] was not left claimed by the failed attempt.
  kiln_device_t* free_pair[2] = {devices_[2], devices_[3]};
  ASSERT_OK(kiln_collective_group_create(free_pair, 2, &params, &second));
  EXPECT_EQ(kiln_device_collective_rank(devices_[3]), 1);
  kiln_collective_group_release(second);
}

}  // namespace
}  // namespace kiln
