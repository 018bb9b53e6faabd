// Command buffers: fill, update, copy, barrier; one-shot and reusable
// (replayed with different binding tables); recording states; bad arguments.

#include <cstring>
#include <vector>

#include "cts_test_base.h"

namespace kiln::cts {
namespace {

using CommandBufferTest = CtsTest;

kiln_hal_command_buffer_t* create(kiln_hal_device_t* device,
                                  kiln_hal_command_buffer_mode_t mode,
                                  uint32_t capacity = 0) {
  kiln_hal_command_buffer_t* commandBuffer = nullptr;
  kiln_status_t status =
      kiln_hal_command_buffer_create(device, mode, capacity, &commandBuffer);
  if (status) ADD_FAILURE() << consumeStatus(status);
  return commandBuffer;
}

TEST_P(CommandBufferTest, FillWithEveryPatternWidth) {
  kiln_hal_buffer_t* buffer = allocateBuffer(64);
  kiln_hal_command_buffer_t* cb =
      create(device, KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  KILN_ASSERT_OK(kiln_hal_command_buffer_begin(cb));
  uint8_t p1 = 0xAB;
  uint16_t p2 = 0x1234;
  uint32_t p4 = 0xDEADBEEF;
  uint64_t p8 = 0x0102030405060708ull;
  KILN_ASSERT_OK(kiln_hal_command_buffer_fill_buffer(cb, ref(buffer, 0, 16), &p1, 1));
  KILN_ASSERT_OK(kiln_hal_command_buffer_fill_buffer(cb, ref(buffer, 16, 16), &p2, 2));
  KILN_ASSERT_OK(kiln_hal_command_buffer_fill_buffer(cb, ref(buffer, 32, 16), &p4, 4));
  KILN_ASSERT_OK(kiln_hal_command_buffer_fill_buffer(cb, ref(buffer, 48), &p8, 8));
  KILN_ASSERT_OK(kiln_hal_command_buffer_end(cb));
  KILN_ASSERT_OK(submitAndWait(cb));
  std::vector<uint8_t> bytes = readBuffer(buffer);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(bytes[i], 0xAB);
  for (int i = 0; i < 8; ++i) {
    uint16_t v;
    std::memcpy(&v, &bytes[16 + 2 * i], 2);
    EXPECT_EQ(v, p2);
  }
  for (int i = 0; i < 4; ++i) {
    uint32_t v;
    std::memcpy(&v, &bytes[32 + 4 * i], 4);
    EXPECT_EQ(v, p4);
  }
  for (int i = 0; i < 2; ++i) {
    uint64_t v;
    std::memcpy(&v, &bytes[48 + 8 * i], 8);
    EXPECT_EQ(v, p8);
  }
  kiln_hal_command_buffer_release(cb);
  kiln_hal_buffer_release(buffer);
}

TEST_P(CommandBufferTest, UpdateCapturesHostDataAtRecordTime) {
  kiln_hal_buffer_t* buffer = allocateBuffer(16);
  kiln_hal_command_buffer_t* cb =
      create(device, KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  KILN_ASSERT_OK(kiln_hal_command_buffer_begin(cb));
  uint32_t data[2] = {11, 22};
  KILN_ASSERT_OK(kiln_hal_command_buffer_update_buffer(cb, data, sizeof(data),
                                                       ref(buffer, 4, 8)));
  KILN_ASSERT_OK(kiln_hal_command_buffer_end(cb));
  data[0] = data[1] = 0;  // must not matter any more
  KILN_ASSERT_OK(submitAndWait(cb));
  uint32_t result[2];
  KILN_ASSERT_OK(kiln_hal_buffer_read(buffer, 4, result, 8));
  EXPECT_EQ(result[0], 11u);
  EXPECT_EQ(result[1], 22u);
  kiln_hal_command_buffer_release(cb);
  kiln_hal_buffer_release(buffer);
}

TEST_P(CommandBufferTest, FillBarrierCopyRunInOrder) {
  kiln_hal_buffer_t* a = allocateBuffer(32);
  kiln_hal_buffer_t* b = allocateBuffer(32);
  kiln_hal_command_buffer_t* cb =
      create(device, KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  KILN_ASSERT_OK(kiln_hal_command_buffer_begin(cb));
  uint32_t pattern = 0x55667788;
  KILN_ASSERT_OK(kiln_hal_command_buffer_fill_buffer(cb, ref(a), &pattern, 4));
  KILN_ASSERT_OK(kiln_hal_command_buffer_execution_barrier(cb));
  KILN_ASSERT_OK(kiln_hal_command_buffer_copy_buffer(cb, ref(a, 8, 16),
                                                     ref(b, 0, 16)));
  uint8_t zero = 0;
  KILN_ASSERT_OK(kiln_hal_command_buffer_fill_buffer(cb, ref(b, 16), &zero, 1));
  KILN_ASSERT_OK(kiln_hal_command_buffer_end(cb));
  KILN_ASSERT_OK(submitAndWait(cb));
  std::vector<uint8_t> bytes = readBuffer(b);
  for (int i = 0; i < 4; ++i) {
    uint32_t v;
    std::memcpy(&v, &bytes[4 * i], 4);
    EXPECT_EQ(v, pattern);
  }
  for (int i = 16; i < 32; ++i) EXPECT_EQ(bytes[i], 0);
  kiln_hal_command_buffer_release(cb);
  kiln_hal_buffer_release(a);
  kiln_hal_buffer_release(b);
}

TEST_P(CommandBufferTest, OneShotCannotBeSubmittedTwice) {
  kiln_hal_command_buffer_t* cb =
      create(device, KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  KILN_ASSERT_OK(kiln_hal_command_buffer_begin(cb));
  KILN_ASSERT_OK(kiln_hal_command_buffer_execution_barrier(cb));
  KILN_ASSERT_OK(kiln_hal_command_buffer_end(cb));
  // A submission rejected because another one-shot command buffer in it was
  // already used does not consume this one.
  kiln_hal_command_buffer_t* used =
      create(device, KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  KILN_ASSERT_OK(kiln_hal_command_buffer_begin(used));
  KILN_ASSERT_OK(kiln_hal_command_buffer_end(used));
  KILN_ASSERT_OK(submitAndWait(used));
  kiln_hal_command_buffer_t* both[2] = {cb, used};
  KILN_EXPECT_STATUS(KILN_STATUS_FAILED_PRECONDITION,
                     kiln_hal_device_queue_execute(
                         device, KILN_HAL_QUEUE_AFFINITY_ANY, nullptr, nullptr,
                         2, both, nullptr));
  KILN_ASSERT_OK(submitAndWait(cb));
  KILN_EXPECT_STATUS(KILN_STATUS_FAILED_PRECONDITION, submitAndWait(cb));
  kiln_hal_command_buffer_release(used);
  kiln_hal_command_buffer_release(cb);
}

// The module executor's pattern: record once with slots, replay per call
// with different buffers.
TEST_P(CommandBufferTest, ReusableReplaysWithDifferentBindingTables) {
  kiln_hal_command_buffer_t* cb =
      create(device, KILN_HAL_COMMAND_BUFFER_MODE_REUSABLE, 3);
  EXPECT_EQ(kiln_hal_command_buffer_binding_capacity(cb), 3u);
  KILN_ASSERT_OK(kiln_hal_command_buffer_begin(cb));
  // out[0..16) = in[0..16); out[16..32) = 0x7F; out[28..32) = marker;
  // scratch (slot 2) is filled and copied to out[32..40).
  KILN_ASSERT_OK(kiln_hal_command_buffer_copy_buffer(cb, slotRef(0, 0, 16),
                                                     slotRef(1, 0, 16)));
  uint8_t fill = 0x7F;
  KILN_ASSERT_OK(kiln_hal_command_buffer_fill_buffer(cb, slotRef(1, 16, 16),
                                                     &fill, 1));
  uint32_t marker = 0xCAFEF00D;
  KILN_ASSERT_OK(kiln_hal_command_buffer_update_buffer(cb, &marker, 4,
                                                       slotRef(1, 28, 4)));
  uint16_t scratchPattern = 0xBEEF;
  KILN_ASSERT_OK(kiln_hal_command_buffer_fill_buffer(cb, slotRef(2), &scratchPattern, 2));
  KILN_ASSERT_OK(kiln_hal_command_buffer_execution_barrier(cb));
  KILN_ASSERT_OK(kiln_hal_command_buffer_copy_buffer(cb, slotRef(2, 0, 8),
                                                     slotRef(1, 32, 8)));
  KILN_ASSERT_OK(kiln_hal_command_buffer_end(cb));

  kiln_hal_buffer_t* scratch = allocateBuffer(64);
  for (int call = 0; call < 3; ++call) {
    kiln_hal_buffer_t* in = allocateBuffer(16);
    // Outputs bound at a different offset in a bigger buffer each call.
    kiln_device_size_t outOffset = 64 * call;
    kiln_hal_buffer_t* out = allocateBuffer(outOffset + 40);
    std::vector<uint8_t> input(16);
    for (int i = 0; i < 16; ++i) input[i] = uint8_t(call * 16 + i);
    KILN_ASSERT_OK(kiln_hal_buffer_write(in, 0, input.data(), 16));
    kiln_hal_binding_t bindings[3] = {
        {in, 0, KILN_HAL_WHOLE_BUFFER},
        {out, outOffset, 40},
        {scratch, 0, 16},
    };
    kiln_hal_binding_table_t table = {3, bindings};
    KILN_ASSERT_OK(submitAndWait(cb, &table));
    std::vector<uint8_t> result(40);
    KILN_ASSERT_OK(kiln_hal_buffer_read(out, outOffset, result.data(), 40));
    for (int i = 0; i < 16; ++i) EXPECT_EQ(result[i], input[i]) << "call " << call;
    for (int i = 16; i < 28; ++i) EXPECT_EQ(result[i], 0x7F);
    uint32_t gotMarker;
    std::memcpy(&gotMarker, &result[28], 4);
    EXPECT_EQ(gotMarker, marker);
    for (int i = 0; i < 4; ++i) {
      uint16_t v;
      std::memcpy(&v, &result[32 + 2 * i], 2);
      EXPECT_EQ(v, scratchPattern);
    }
    kiln_hal_buffer_release(in);
    kiln_hal_buffer_release(out);
  }
  kiln_hal_buffer_release(scratch);
  kiln_hal_command_buffer_release(cb);
}

TEST_P(CommandBufferTest, ReusableSubmittedConcurrentlyManyTimes) {
  kiln_hal_command_buffer_t* cb =
      create(device, KILN_HAL_COMMAND_BUFFER_MODE_REUSABLE, 1);
  KILN_ASSERT_OK(kiln_hal_command_buffer_begin(cb));
  uint32_t value = 0x01020304;
  KILN_ASSERT_OK(kiln_hal_command_buffer_fill_buffer(cb, slotRef(0), &value, 4));
  KILN_ASSERT_OK(kiln_hal_command_buffer_end(cb));
  constexpr int kCalls = 8;
  std::vector<kiln_hal_buffer_t*> buffers;
  kiln_hal_semaphore_t* done = createSemaphore(0);
  for (int i = 0; i < kCalls; ++i) {
    buffers.push_back(allocateBuffer(64));
    kiln_hal_binding_t binding = {buffers.back(), 0, KILN_HAL_WHOLE_BUFFER};
    kiln_hal_binding_table_t table = {1, &binding};
    uint64_t signalValue = uint64_t(i + 1);
    kiln_hal_semaphore_list_t signal = semaphoreList(&done, &signalValue, 1);
    KILN_ASSERT_OK(kiln_hal_device_queue_execute(
        device, KILN_HAL_QUEUE_AFFINITY_ANY, nullptr, &signal, 1, &cb, &table));
  }
  KILN_ASSERT_OK(kiln_hal_semaphore_wait(done, kCalls, kLongTimeout));
  for (kiln_hal_buffer_t* buffer : buffers) {
    std::vector<uint8_t> bytes = readBuffer(buffer);
    uint32_t v;
    std::memcpy(&v, &bytes[60], 4);
    EXPECT_EQ(v, value);
    kiln_hal_buffer_release(buffer);
  }
  kiln_hal_semaphore_release(done);
  kiln_hal_command_buffer_release(cb);
}

TEST_P(CommandBufferTest, RecordingStatesAreEnforced) {
  kiln_hal_command_buffer_t* cb =
      create(device, KILN_HAL_COMMAND_BUFFER_MODE_REUSABLE);
  KILN_EXPECT_STATUS(KILN_STATUS_FAILED_PRECONDITION,
                     kiln_hal_command_buffer_execution_barrier(cb));
  KILN_EXPECT_STATUS(KILN_STATUS_FAILED_PRECONDITION,
                     kiln_hal_command_buffer_end(cb));
  KILN_EXPECT_STATUS(KILN_STATUS_FAILED_PRECONDITION, submitAndWait(cb));
  KILN_ASSERT_OK(kiln_hal_command_buffer_begin(cb));
  KILN_EXPECT_STATUS(KILN_STATUS_FAILED_PRECONDITION,
                     kiln_hal_command_buffer_begin(cb));
  KILN_EXPECT_STATUS(KILN_STATUS_FAILED_PRECONDITION, submitAndWait(cb));
  KILN_ASSERT_OK(kiln_hal_command_buffer_end(cb));
  KILN_EXPECT_STATUS(KILN_STATUS_FAILED_PRECONDITION,
                     kiln_hal_command_buffer_execution_barrier(cb));
  KILN_EXPECT_OK(submitAndWait(cb));
  KILN_EXPECT_OK(submitAndWait(cb));
  kiln_hal_command_buffer_release(cb);
}

TEST_P(CommandBufferTest, InvalidCommandsAreRejectedAtRecordTime) {
  kiln_hal_buffer_t* buffer = allocateBuffer(64);
  kiln_hal_buffer_t* other = allocateBuffer(32);
  kiln_hal_command_buffer_t* cb =
      create(device, KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 2);
  KILN_ASSERT_OK(kiln_hal_command_buffer_begin(cb));
  uint32_t pattern = 1;
  KILN_EXPECT_STATUS(KILN_STATUS_OUT_OF_RANGE,
                     kiln_hal_command_buffer_fill_buffer(cb, ref(buffer, 60, 8),
                                                         &pattern, 4));
  KILN_EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                     kiln_hal_command_buffer_fill_buffer(cb, ref(buffer), &pattern,
                                                         3));
  KILN_EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                     kiln_hal_command_buffer_fill_buffer(cb, ref(buffer, 2, 8),
                                                         &pattern, 4));
  KILN_EXPECT_STATUS(KILN_STATUS_OUT_OF_RANGE,
                     kiln_hal_command_buffer_fill_buffer(cb, slotRef(2), &pattern,
                                                         4));
  KILN_EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                     kiln_hal_command_buffer_copy_buffer(cb, ref(buffer, 0, 16),
                                                         ref(other, 0, 8)));
  KILN_EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                     kiln_hal_command_buffer_copy_buffer(cb, ref(buffer, 0, 16),
                                                         ref(buffer, 8, 16)));
  KILN_EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                     kiln_hal_command_buffer_update_buffer(cb, &pattern, 4,
                                                           ref(buffer, 0, 8)));
  KILN_EXPECT_STATUS(KILN_STATUS_OUT_OF_RANGE,
                     kiln_hal_command_buffer_copy_buffer(cb, ref(buffer, 65, 0),
                                                         ref(other, 0, 0)));
  // The command buffer is still usable after rejected commands.
  KILN_ASSERT_OK(kiln_hal_command_buffer_fill_buffer(cb, ref(buffer), &pattern, 4));
  KILN_ASSERT_OK(kiln_hal_command_buffer_end(cb));
  kiln_hal_command_buffer_release(cb);
  kiln_hal_buffer_release(buffer);
  kiln_hal_buffer_release(other);
}

TEST_P(CommandBufferTest, BadBindingTablesAreRejectedAtSubmit) {
  kiln_hal_command_buffer_t* cb =
      create(device, KILN_HAL_COMMAND_BUFFER_MODE_REUSABLE, 2);
  KILN_ASSERT_OK(kiln_hal_command_buffer_begin(cb));
  uint32_t pattern = 7;
  KILN_ASSERT_OK(kiln_hal_command_buffer_fill_buffer(cb, slotRef(0, 0, 32),
                                                     &pattern, 4));
  KILN_ASSERT_OK(kiln_hal_command_buffer_end(cb));
  kiln_hal_buffer_t* small = allocateBuffer(16);
  kiln_hal_buffer_t* big = allocateBuffer(64);
  // No table at all / a table shorter than the capacity.
  KILN_EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT, submitAndWait(cb));
  kiln_hal_binding_t one[1] = {{big, 0, KILN_HAL_WHOLE_BUFFER}};
  kiln_hal_binding_table_t shortTable = {1, one};
  KILN_EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                     submitAndWait(cb, &shortTable));
  // Used slot unbound.
  kiln_hal_binding_t unbound[2] = {{nullptr, 0, 0}, {big, 0, 64}};
  kiln_hal_binding_table_t unboundTable = {2, unbound};
  KILN_EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                     submitAndWait(cb, &unboundTable));
  // Bound range smaller than what the command buffer uses.
  kiln_hal_binding_t tooSmall[2] = {{small, 0, KILN_HAL_WHOLE_BUFFER},
                                    {nullptr, 0, 0}};
  kiln_hal_binding_table_t tooSmallTable = {2, tooSmall};
  KILN_EXPECT_STATUS(KILN_STATUS_OUT_OF_RANGE,
                     submitAndWait(cb, &tooSmallTable));
  // A binding outside its buffer.
  kiln_hal_binding_t outside[2] = {{big, 48, 32}, {nullptr, 0, 0}};
  kiln_hal_binding_table_t outsideTable = {2, outside};
  KILN_EXPECT_STATUS(KILN_STATUS_OUT_OF_RANGE,
                     submitAndWait(cb, &outsideTable));
  // And a good one still works.
  kiln_hal_binding_t good[2] = {{big, 32, 32}, {nullptr, 0, 0}};
  kiln_hal_binding_table_t goodTable = {2, good};
  KILN_EXPECT_OK(submitAndWait(cb, &goodTable));
  uint32_t v = 0;
  KILN_EXPECT_OK(kiln_hal_buffer_read(big, 60, &v, 4));
  EXPECT_EQ(v, pattern);
  kiln_hal_buffer_release(small);
  kiln_hal_buffer_release(big);
  kiln_hal_command_buffer_release(cb);
}

TEST_P(CommandBufferTest, ChannelParamsAreValidated) {
  kiln_hal_channel_params_t params = {3, 2, nullptr, 0};
  kiln_hal_channel_t* channel = nullptr;
  KILN_EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT,
                     kiln_hal_channel_create(device, &params, &channel));
}

KILN_CTS_INSTANTIATE(CommandBufferTest);

}  // namespace
}  // namespace kiln::cts
