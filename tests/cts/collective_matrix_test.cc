// The collective correctness matrix: every collective x every reduction
// (where the collective has one) x every element type, on 2, 3, 4 and 8
// ranks (devices <driver>://0 .. N-1), with counts that do not divide evenly where
// the collective allows them, large messages, and channel splits. References
// are computed here: exact for integers (sums and products wrap around),
// within a tolerance for floats (reduced in rank order in double).
//
// A combination the driver does not support must fail recording with
// UNIMPLEMENTED; the test then skips with the driver's message. Rank counts
// above the driver's device count are skipped with that reason.
//
// On the local driver every case also runs with
// KILN_LOCAL_COLLECTIVE_PARALLEL_THRESHOLD=0 so that small all-reduces take
// the large-message (parallel) path too; both paths must agree bitwise.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "cts_test_base.h"
#include "scoped_env.h"

namespace kiln::cts {
namespace {

using Bytes = std::vector<uint8_t>;

// The most ranks a test uses (8: one host of 8 GPUs; the local driver needs
// KILN_LOCAL_DEVICE_COUNT=8, which the CTS target sets).
constexpr uint32_t kMaxRanks = 8;

const char* kindName(kiln_hal_collective_kind_t kind) {
  switch (kind) {
    case KILN_HAL_COLLECTIVE_ALL_REDUCE: return "AllReduce";
    case KILN_HAL_COLLECTIVE_ALL_GATHER: return "AllGather";
    case KILN_HAL_COLLECTIVE_REDUCE_SCATTER: return "ReduceScatter";
    case KILN_HAL_COLLECTIVE_ALL_TO_ALL: return "AllToAll";
    case KILN_HAL_COLLECTIVE_BROADCAST: return "Broadcast";
  }
  return "Unknown";
}

const char* reductionName(kiln_hal_reduction_t reduction) {
  switch (reduction) {
    case KILN_HAL_REDUCTION_NONE: return "";
    case KILN_HAL_REDUCTION_SUM: return "Sum";
    case KILN_HAL_REDUCTION_PROD: return "Prod";
    case KILN_HAL_REDUCTION_MIN: return "Min";
    case KILN_HAL_REDUCTION_MAX: return "Max";
    case KILN_HAL_REDUCTION_AVG: return "Avg";
  }
  return "Unknown";
}

const char* typeName(kiln_hal_element_type_t type) {
  switch (type) {
    case KILN_HAL_ELEMENT_TYPE_I1: return "I1";
    case KILN_HAL_ELEMENT_TYPE_I8: return "I8";
    case KILN_HAL_ELEMENT_TYPE_I16: return "I16";
    case KILN_HAL_ELEMENT_TYPE_I32: return "I32";
    case KILN_HAL_ELEMENT_TYPE_I64: return "I64";
    case KILN_HAL_ELEMENT_TYPE_U8: return "U8";
    case KILN_HAL_ELEMENT_TYPE_U16: return "U16";
    case KILN_HAL_ELEMENT_TYPE_U32: return "U32";
    case KILN_HAL_ELEMENT_TYPE_U64: return "U64";
    case KILN_HAL_ELEMENT_TYPE_F16: return "F16";
    case KILN_HAL_ELEMENT_TYPE_BF16: return "BF16";
    case KILN_HAL_ELEMENT_TYPE_F32: return "F32";
    case KILN_HAL_ELEMENT_TYPE_F64: return "F64";
    case KILN_HAL_ELEMENT_TYPE_INVALID: break;
  }
  return "Invalid";
}

constexpr kiln_hal_element_type_t kTypes[] = {
    KILN_HAL_ELEMENT_TYPE_I1,  KILN_HAL_ELEMENT_TYPE_I8,
    KILN_HAL_ELEMENT_TYPE_I16, KILN_HAL_ELEMENT_TYPE_I32,
    KILN_HAL_ELEMENT_TYPE_I64, KILN_HAL_ELEMENT_TYPE_U8,
    KILN_HAL_ELEMENT_TYPE_U16, KILN_HAL_ELEMENT_TYPE_U32,
    KILN_HAL_ELEMENT_TYPE_U64, KILN_HAL_ELEMENT_TYPE_F16,
    KILN_HAL_ELEMENT_TYPE_BF16, KILN_HAL_ELEMENT_TYPE_F32,
    KILN_HAL_ELEMENT_TYPE_F64};

bool isFloat(kiln_hal_element_type_t type) {
  return type == KILN_HAL_ELEMENT_TYPE_F16 ||
         type == KILN_HAL_ELEMENT_TYPE_BF16 ||
         type == KILN_HAL_ELEMENT_TYPE_F32 || type == KILN_HAL_ELEMENT_TYPE_F64;
}

bool isSigned(kiln_hal_element_type_t type) {
  return type == KILN_HAL_ELEMENT_TYPE_I8 ||
         type == KILN_HAL_ELEMENT_TYPE_I16 ||
         type == KILN_HAL_ELEMENT_TYPE_I32 || type == KILN_HAL_ELEMENT_TYPE_I64;
}

//===----------------------------------------------------------------------===//
// Element encoding
//===----------------------------------------------------------------------===//

float bitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint32_t floatToBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

double halfToDouble(uint16_t h) {
  int exponent = (h >> 10) & 0x1F;
  double mantissa = h & 0x3FF;
  double magnitude =
      exponent == 0    ? std::ldexp(mantissa, -24)
      : exponent == 31 ? (mantissa ? NAN : INFINITY)
                       : std::ldexp(1024 + mantissa, exponent - 25);
  return (h & 0x8000) ? -magnitude : magnitude;
}

// The f16 encoding of (index - 6) * 0.5, index < 13: the test's float
// inputs.
uint16_t inputHalf(uint64_t index) {
  static const std::vector<uint16_t> table = [] {
    std::vector<uint16_t> values(13, 0);
    for (uint32_t h = 0; h < 0x10000; ++h) {
      double v = halfToDouble(uint16_t(h));
      for (int i = 0; i < 13; ++i)
        if (v == (i - 6) * 0.5 && !(h & 0x8000 && v == 0)) values[size_t(i)] = uint16_t(h);
    }
    return values;
  }();
  return table[index];
}

uint64_t loadRaw(const uint8_t* p, size_t size) {
  uint64_t raw = 0;
  std::memcpy(&raw, p, size);  // little-endian host
  return raw;
}

void storeRaw(uint8_t* p, size_t size, uint64_t raw) {
  std::memcpy(p, &raw, size);
}

double decodeFloat(kiln_hal_element_type_t type, const uint8_t* p) {
  switch (type) {
    case KILN_HAL_ELEMENT_TYPE_F16:
      return halfToDouble(uint16_t(loadRaw(p, 2)));
    case KILN_HAL_ELEMENT_TYPE_BF16:
      return bitsToFloat(uint32_t(loadRaw(p, 2)) << 16);
    case KILN_HAL_ELEMENT_TYPE_F32:
      return bitsToFloat(uint32_t(loadRaw(p, 4)));
    default: {
      double d;
      std::memcpy(&d, p, 8);
      return d;
    }
  }
}

// bf16, f32 or f64 (f16 inputs come from inputHalf).
void encodeFloat(kiln_hal_element_type_t type, double value, uint8_t* p) {
  switch (type) {
    case KILN_HAL_ELEMENT_TYPE_BF16:  // exact: the low bits are zero
      return storeRaw(p, 2, floatToBits(float(value)) >> 16);
    case KILN_HAL_ELEMENT_TYPE_F32:
      return storeRaw(p, 4, floatToBits(float(value)));
    default:
      std::memcpy(p, &value, 8);
  }
}

// Integers as int64 (signed types sign-extended) for comparisons.
int64_t asSigned(uint64_t raw, size_t size) {
  if (size == 8) return int64_t(raw);
  uint64_t sign = uint64_t(1) << (size * 8 - 1);
  return int64_t((raw ^ sign) - sign);
}

uint64_t mask(size_t size) {
  return size == 8 ? ~uint64_t(0) : (uint64_t(1) << (size * 8)) - 1;
}

uint64_t hash(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

// Send bytes of |rank|: random bit patterns for integers (so sums and
// products wrap), 0/1 for i1, multiples of 0.5 in [-3, 3] for floats.
Bytes makeSend(kiln_hal_element_type_t type, uint64_t count, int32_t rank,
               uint64_t seed) {
  size_t size = kiln_hal_element_type_size(type);
  Bytes bytes(count * size);
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t h = hash(seed * 0x9E3779B97F4A7C15ULL + uint64_t(rank) * 1000003 + i);
    uint8_t* p = bytes.data() + i * size;
    if (type == KILN_HAL_ELEMENT_TYPE_I1) {
      *p = uint8_t(h & 1);
    } else if (type == KILN_HAL_ELEMENT_TYPE_F16) {
      storeRaw(p, 2, inputHalf(h % 13));
    } else if (isFloat(type)) {
      encodeFloat(type, (int(h % 13) - 6) * 0.5, p);
    } else {
      storeRaw(p, size, h & mask(size));
    }
  }
  return bytes;
}

// Element |i| of the reduction of |sends| (bytes at |out|); for floats also
// the expected value in double.
void reduceReference(kiln_hal_element_type_t type,
                     kiln_hal_reduction_t reduction,
                     const std::vector<Bytes>& sends, uint64_t i,
                     uint8_t* out, double* expectedFloat) {
  size_t size = kiln_hal_element_type_size(type);
  size_t ranks = sends.size();
  if (isFloat(type)) {
    double acc = decodeFloat(type, sends[0].data() + i * size);
    for (size_t r = 1; r < ranks; ++r) {
      double v = decodeFloat(type, sends[r].data() + i * size);
      switch (reduction) {
        case KILN_HAL_REDUCTION_SUM:
        case KILN_HAL_REDUCTION_AVG: acc += v; break;
        case KILN_HAL_REDUCTION_PROD: acc *= v; break;
        case KILN_HAL_REDUCTION_MIN: acc = std::min(acc, v); break;
        case KILN_HAL_REDUCTION_MAX: acc = std::max(acc, v); break;
        case KILN_HAL_REDUCTION_NONE: break;
      }
    }
    if (reduction == KILN_HAL_REDUCTION_AVG) acc /= double(ranks);
    *expectedFloat = acc;
    return;
  }
  bool logical = type == KILN_HAL_ELEMENT_TYPE_I1;
  bool sign = isSigned(type);
  uint64_t acc = loadRaw(sends[0].data() + i * size, size);
  for (size_t r = 1; r < ranks; ++r) {
    uint64_t v = loadRaw(sends[r].data() + i * size, size);
    bool less = sign ? asSigned(v, size) < asSigned(acc, size) : v < acc;
    switch (reduction) {
      case KILN_HAL_REDUCTION_SUM:
      case KILN_HAL_REDUCTION_AVG: acc = logical ? (acc | v) : acc + v; break;
      case KILN_HAL_REDUCTION_PROD: acc = logical ? (acc & v) : acc * v; break;
      case KILN_HAL_REDUCTION_MIN: acc = less ? v : acc; break;
      case KILN_HAL_REDUCTION_MAX: acc = (!less && v != acc) ? v : acc; break;
      case KILN_HAL_REDUCTION_NONE: break;
    }
    acc &= mask(size);
  }
  if (reduction == KILN_HAL_REDUCTION_AVG) {
    // Sum then divide (truncating), as NCCL's ncclAvg on integers.
    acc = sign ? uint64_t(asSigned(acc, size) / int64_t(ranks))
               : acc / uint64_t(ranks);
    acc &= mask(size);
  }
  storeRaw(out, size, acc);
}

// Checks element |i| of |got| against the reference; returns false (with a
// failure naming |what|) on a mismatch.
bool checkReduced(kiln_hal_element_type_t type, kiln_hal_reduction_t reduction,
                  const std::vector<Bytes>& sends, uint64_t sendIndex,
                  const uint8_t* got, const std::string& what) {
  size_t size = kiln_hal_element_type_size(type);
  uint8_t expected[8] = {};
  double expectedFloat = 0;
  reduceReference(type, reduction, sends, sendIndex, expected, &expectedFloat);
  if (isFloat(type)) {
    double value = decodeFloat(type, got);
    double rtol = type == KILN_HAL_ELEMENT_TYPE_F16    ? 2e-3
                  : type == KILN_HAL_ELEMENT_TYPE_BF16 ? 1e-2
                  : type == KILN_HAL_ELEMENT_TYPE_F32  ? 1e-6
                                                       : 1e-12;
    double tolerance = 1e-6 + rtol * std::fabs(expectedFloat);
    if (reduction == KILN_HAL_REDUCTION_SUM ||
        reduction == KILN_HAL_REDUCTION_AVG) {
      // Drivers may reduce in the element type, one rounding per step, and
      // NCCL's average of floats multiplies each rank's value by 1/n rounded
      // to the type before summing (1/3 is inexact in f16). The error of such
      // a sum is bounded by the summands' magnitude, not the result's: with
      // cancellation the result can be 0 and the error not.
      double unitRoundoff = type == KILN_HAL_ELEMENT_TYPE_F16    ? 0x1p-11
                            : type == KILN_HAL_ELEMENT_TYPE_BF16 ? 0x1p-8
                            : type == KILN_HAL_ELEMENT_TYPE_F32  ? 0x1p-24
                                                                 : 0x1p-53;
      double magnitude = 0;
      for (const Bytes& send : sends)
        magnitude += std::fabs(decodeFloat(type, send.data() + sendIndex * size));
      if (reduction == KILN_HAL_REDUCTION_AVG) magnitude /= double(sends.size());
      tolerance += 2.0 * double(sends.size() + 1) * unitRoundoff * magnitude;
    }
    if (std::fabs(value - expectedFloat) <= tolerance) return true;
    ADD_FAILURE() << what << ": expected " << expectedFloat << ", got "
                  << value;
    return false;
  }
  if (std::memcmp(expected, got, size) == 0) return true;
  ADD_FAILURE() << what << ": expected 0x" << std::hex
                << loadRaw(expected, size) << ", got 0x"
                << loadRaw(got, size);
  return false;
}

//===----------------------------------------------------------------------===//
// Running collectives on groups of ranks
//===----------------------------------------------------------------------===//

// Channels of one group; released on destruction.
struct RankGroup {
  std::vector<kiln_hal_channel_t*> channels;
  RankGroup() = default;
  RankGroup(const RankGroup&) = delete;
  RankGroup& operator=(const RankGroup&) = delete;
  ~RankGroup() {
    for (kiln_hal_channel_t* channel : channels)
      kiln_hal_channel_release(channel);
  }
};

// Calls |body(rank)| on one thread per rank and joins them (channel
// creation and split may block until every rank arrived).
template <typename Body>
void onRankThreads(int32_t ranks, Body body) {
  std::vector<std::thread> threads;
  for (int32_t r = 0; r < ranks; ++r) threads.emplace_back(body, r);
  for (std::thread& thread : threads) thread.join();
}

// Joins devices[0 .. ranks-1] into a fresh group.
kiln_status_t makeGroup(const std::vector<kiln_hal_device_t*>& devices,
                        int32_t ranks, RankGroup* group) {
  uint8_t id[KILN_HAL_CHANNEL_ID_MAX_LENGTH];
  size_t idLength = 0;
  KILN_RETURN_IF_ERROR(
      kiln_hal_channel_id_create(devices[0], id, sizeof(id), &idLength));
  std::vector<kiln_status_t> statuses(size_t(ranks), nullptr);
  group->channels.assign(size_t(ranks), nullptr);
  onRankThreads(ranks, [&](int32_t r) {
    kiln_hal_channel_params_t params = {r, ranks, id, idLength};
    statuses[size_t(r)] = kiln_hal_channel_create(
        devices[size_t(r)], &params, &group->channels[size_t(r)]);
  });
  kiln_status_t first = nullptr;
  for (kiln_status_t status : statuses) {
    if (!first) first = status; else kiln_status_free(status);
  }
  return first;
}

// Runs |op| on every rank of |channels| (rank r on devices[r]) with send
// bytes |sends[r]| into recv buffers of |recvSize| bytes (the send buffer
// when |inPlace|). Every rank records first: if recording fails with
// UNIMPLEMENTED nothing is submitted and *unimplemented gets the message.
// Returns each rank's recv bytes.
std::vector<Bytes> runCollective(const std::vector<kiln_hal_device_t*>& devices,
                                 const std::vector<kiln_hal_channel_t*>& channels,
                                 const kiln_hal_collective_op_t& op,
                                 const std::vector<Bytes>& sends,
                                 size_t recvSize, bool inPlace,
                                 std::string* unimplemented) {
  size_t ranks = channels.size();
  std::vector<kiln_hal_buffer_t*> sendBuffers(ranks), recvBuffers(ranks);
  std::vector<kiln_hal_command_buffer_t*> commandBuffers(ranks, nullptr);
  std::vector<Bytes> results(ranks);
  bool recorded = true;
  for (size_t r = 0; r < ranks; ++r) {
    kiln_hal_device_t* on = devices[r];
    size_t sendSize = inPlace ? std::max(sends[r].size(), recvSize)
                              : sends[r].size();
    sendBuffers[r] = allocateOn(on, sendSize);
    recvBuffers[r] = inPlace ? sendBuffers[r] : allocateOn(on, recvSize);
    if (!sendBuffers[r] || !recvBuffers[r]) return results;
    if (!sends[r].empty())
      KILN_EXPECT_OK(kiln_hal_buffer_write(sendBuffers[r], 0, sends[r].data(),
                                           sends[r].size()));
    KILN_EXPECT_OK(kiln_hal_command_buffer_create(
        on, KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0, &commandBuffers[r]));
    KILN_EXPECT_OK(kiln_hal_command_buffer_begin(commandBuffers[r]));
    kiln_status_t status = kiln_hal_command_buffer_collective(
        commandBuffers[r], channels[r], &op,
        ref(sendBuffers[r], 0, sends[r].size()),
        ref(recvBuffers[r], 0, recvSize));
    if (kiln_status_code(status) == KILN_STATUS_UNIMPLEMENTED) {
      *unimplemented = consumeStatus(status);
      recorded = false;
    } else if (status) {
      ADD_FAILURE() << "recording the collective: " << consumeStatus(status);
      recorded = false;
    }
    if (recorded) KILN_EXPECT_OK(kiln_hal_command_buffer_end(commandBuffers[r]));
  }
  std::vector<kiln_hal_semaphore_t*> done(ranks, nullptr);
  if (recorded) {
    for (size_t r = 0; r < ranks; ++r) {
      KILN_EXPECT_OK(kiln_hal_semaphore_create(devices[r], 0, &done[r]));
      uint64_t one = 1;
      kiln_hal_semaphore_list_t signal = semaphoreList(&done[r], &one, 1);
      KILN_EXPECT_OK(kiln_hal_device_queue_execute(
          devices[r], KILN_HAL_QUEUE_AFFINITY_ANY, nullptr, &signal, 1,
          &commandBuffers[r], nullptr));
    }
    for (size_t r = 0; r < ranks; ++r) {
      KILN_EXPECT_OK(kiln_hal_semaphore_wait(done[r], 1, kLongTimeout));
      results[r].resize(recvSize);
      if (recvSize)
        KILN_EXPECT_OK(kiln_hal_buffer_read(recvBuffers[r], 0,
                                            results[r].data(), recvSize));
    }
  }
  for (size_t r = 0; r < ranks; ++r) {
    kiln_hal_semaphore_release(done[r]);
    kiln_hal_command_buffer_release(commandBuffers[r]);
    kiln_hal_buffer_release(sendBuffers[r]);
    if (!inPlace) kiln_hal_buffer_release(recvBuffers[r]);
  }
  return results;
}

size_t recvBytes(const kiln_hal_collective_op_t& op, size_t ranks) {
  size_t size = kiln_hal_element_type_size(op.element_type);
  switch (op.kind) {
    case KILN_HAL_COLLECTIVE_ALL_GATHER: return op.element_count * ranks * size;
    case KILN_HAL_COLLECTIVE_REDUCE_SCATTER:
      return op.element_count / ranks * size;
    default: return op.element_count * size;
  }
}

// Checks every rank's result of |op| against references from |sends|;
// stops at the first mismatching element of a rank.
void checkResults(const kiln_hal_collective_op_t& op,
                  const std::vector<Bytes>& sends,
                  const std::vector<Bytes>& results, const std::string& what) {
  size_t ranks = sends.size();
  size_t size = kiln_hal_element_type_size(op.element_type);
  uint64_t count = op.element_count;
  for (size_t r = 0; r < ranks; ++r) {
    ASSERT_EQ(results[r].size(), recvBytes(op, ranks)) << what;
    std::string at = what + " rank " + std::to_string(r);
    const uint8_t* got = results[r].data();
    switch (op.kind) {
      case KILN_HAL_COLLECTIVE_ALL_REDUCE:
        // Every rank holds the same bits (deterministic reduction).
        if (r > 0) {
          EXPECT_EQ(results[r], results[0]) << at << " differs from rank 0";
          break;
        }
        for (uint64_t i = 0; i < count; ++i)
          if (!checkReduced(op.element_type, op.reduction, sends, i,
                            got + i * size, at + " element " + std::to_string(i)))
            break;
        break;
      case KILN_HAL_COLLECTIVE_REDUCE_SCATTER: {
        uint64_t chunk = count / ranks;
        for (uint64_t i = 0; i < chunk; ++i)
          if (!checkReduced(op.element_type, op.reduction, sends, r * chunk + i,
                            got + i * size, at + " element " + std::to_string(i)))
            break;
        break;
      }
      case KILN_HAL_COLLECTIVE_ALL_GATHER:
        for (size_t s = 0; s < ranks; ++s)
          EXPECT_EQ(0, std::memcmp(got + s * count * size, sends[s].data(),
                                   count * size))
              << at << " block from rank " << s;
        break;
      case KILN_HAL_COLLECTIVE_ALL_TO_ALL: {
        size_t chunkBytes = count / ranks * size;
        for (size_t s = 0; s < ranks; ++s)
          EXPECT_EQ(0, std::memcmp(got + s * chunkBytes,
                                   sends[s].data() + r * chunkBytes, chunkBytes))
              << at << " chunk from rank " << s;
        break;
      }
      case KILN_HAL_COLLECTIVE_BROADCAST:
        EXPECT_EQ(results[r], sends[size_t(op.root)]) << at;
        break;
    }
  }
}

using kiln::testing::ScopedEnv;

constexpr char kParallelThresholdEnv[] =
    "KILN_LOCAL_COLLECTIVE_PARALLEL_THRESHOLD";

// A fixture holding up to kMaxRanks devices of the driver under test.
class CollectiveFixture : public CtsFixture {
 protected:
  void openDevices(const std::string& uri) {
    openDevice(uri);
    if (IsSkipped() || HasFatalFailure()) return;
    kiln_hal_driver_t* driver = nullptr;
    KILN_ASSERT_OK(kiln_hal_driver_registry_get_driver(
        registry, kiln_hal_device_driver_name(device), &driver));
    uint32_t count = 0;
    kiln_status_t status =
        kiln_hal_driver_enumerate_devices(driver, 0, nullptr, &count);
    for (uint32_t r = 0; r < count && r < kMaxRanks && !status; ++r) {
      kiln_hal_device_t* rankDevice = nullptr;
      status = kiln_hal_driver_create_device(driver, r, &rankDevice);
      if (!status) devices.push_back(rankDevice);
    }
    kiln_hal_driver_release(driver);
    KILN_ASSERT_OK(status);
    isLocal = std::string(kiln_hal_device_driver_name(device)) == "local";
  }

  void TearDown() override {
    groupsByRanks.clear();  // channels before their devices
    for (kiln_hal_device_t* rankDevice : devices)
      kiln_hal_device_release(rankDevice);
    CtsFixture::TearDown();
  }

  // Runs |op| with |ranks| ranks on a fresh group (twice on the local
  // driver: direct and parallel algorithms) and checks the results. Returns
  // false when the driver reported the op UNIMPLEMENTED (*unimplemented).
  bool runAndCheck(kiln_hal_collective_op_t op, int32_t ranks, bool inPlace,
                   std::string* unimplemented) {
    std::vector<Bytes> sends;
    for (int32_t r = 0; r < ranks; ++r)
      sends.push_back(makeSend(op.element_type, op.element_count, r,
                               op.element_count + uint64_t(op.kind)));
    std::string what = std::string(kindName(op.kind)) +
                       reductionName(op.reduction) + " " +
                       typeName(op.element_type) + " count " +
                       std::to_string(op.element_count) + " ranks " +
                       std::to_string(ranks) + (inPlace ? " in place" : "");
    std::vector<Bytes> first;
    for (int pass = 0; pass < (isLocal ? 2 : 1); ++pass) {
      ScopedEnv threshold(kParallelThresholdEnv, pass == 1 ? "0" : nullptr);
      // The local driver reads the threshold when a group is made, so it
      // gets a fresh group per pass. Other drivers reuse one group per rank
      // count within a test: creating an NCCL communicator costs about as
      // much as all the collectives of a case.
      std::unique_ptr<RankGroup> fresh;
      RankGroup* group = nullptr;
      if (isLocal) {
        fresh = std::make_unique<RankGroup>();
        group = fresh.get();
      } else {
        std::unique_ptr<RankGroup>& cached = groupsByRanks[ranks];
        if (!cached) fresh = std::make_unique<RankGroup>();
        group = cached ? cached.get() : fresh.get();
      }
      if (group->channels.empty()) {
        kiln_status_t status = makeGroup(devices, ranks, group);
        if (status) {
          ADD_FAILURE() << what << ": " << consumeStatus(status);
          return true;
        }
        if (!isLocal) groupsByRanks[ranks] = std::move(fresh);
      }
      std::vector<Bytes> results =
          runCollective(devices, group->channels, op, sends,
                        recvBytes(op, size_t(ranks)), inPlace, unimplemented);
      if (!unimplemented->empty()) return false;
      std::string passName = what + (pass ? " (parallel)" : "");
      checkResults(op, sends, results, passName);
      if (pass == 0) first = results;
      else EXPECT_EQ(first, results) << what << ": algorithms disagree";
    }
    return true;
  }

  std::vector<kiln_hal_device_t*> devices;
  std::map<int32_t, std::unique_ptr<RankGroup>> groupsByRanks;
  bool isLocal = false;
};

//===----------------------------------------------------------------------===//
// The matrix
//===----------------------------------------------------------------------===//

struct MatrixCase {
  kiln_hal_collective_kind_t kind;
  kiln_hal_reduction_t reduction;
  kiln_hal_element_type_t type;
};

void PrintTo(const MatrixCase& c, std::ostream* os) {
  *os << kindName(c.kind) << reductionName(c.reduction) << " "
      << typeName(c.type);
}

std::vector<MatrixCase> matrixCases() {
  std::vector<MatrixCase> cases;
  for (kiln_hal_element_type_t type : kTypes) {
    for (kiln_hal_collective_kind_t kind :
         {KILN_HAL_COLLECTIVE_ALL_REDUCE, KILN_HAL_COLLECTIVE_REDUCE_SCATTER})
      for (kiln_hal_reduction_t reduction :
           {KILN_HAL_REDUCTION_SUM, KILN_HAL_REDUCTION_PROD,
            KILN_HAL_REDUCTION_MIN, KILN_HAL_REDUCTION_MAX,
            KILN_HAL_REDUCTION_AVG})
        cases.push_back({kind, reduction, type});
    for (kiln_hal_collective_kind_t kind :
         {KILN_HAL_COLLECTIVE_ALL_GATHER, KILN_HAL_COLLECTIVE_ALL_TO_ALL,
          KILN_HAL_COLLECTIVE_BROADCAST})
      cases.push_back({kind, KILN_HAL_REDUCTION_NONE, type});
  }
  return cases;
}

// Rank counts above the driver's device count are not run. With none run
// the test is skipped; otherwise it passes on the counts that ran, and the
// ones left out are printed and recorded as a test property.
void reportRankCountsNotRun(const std::string& skipped) {
  if (skipped.empty()) return;
  ::testing::Test::RecordProperty("rank_counts_not_run", skipped);
  std::printf("note: not run for lack of devices: %s\n", skipped.c_str());
}

using MatrixParam = std::tuple<std::string, MatrixCase>;

class CollectiveMatrixTest
    : public CollectiveFixture,
      public ::testing::WithParamInterface<MatrixParam> {
 protected:
  void SetUp() override { openDevices(std::get<0>(GetParam())); }
};

TEST_P(CollectiveMatrixTest, MatchesReference) {
  if (devices.size() < 2) GTEST_SKIP() << "driver has fewer than two devices";
  const MatrixCase& c = std::get<1>(GetParam());
  bool splits = c.kind == KILN_HAL_COLLECTIVE_REDUCE_SCATTER ||
                c.kind == KILN_HAL_COLLECTIVE_ALL_TO_ALL;
  std::string skipped;
  for (int32_t ranks : {2, 3, 4, 8}) {
    if (size_t(ranks) > devices.size()) {
      skipped += std::to_string(ranks) + " ranks ";
      continue;
    }
    // Uneven counts where the collective allows them; else multiples of N.
    for (uint64_t base : {uint64_t(1), uint64_t(7), uint64_t(1000)}) {
      kiln_hal_collective_op_t op = {c.kind, c.reduction, c.type,
                                     splits ? base * uint64_t(ranks) : base,
                                     ranks - 1};
      std::string unimplemented;
      if (!runAndCheck(op, ranks, /*inPlace=*/false, &unimplemented))
        GTEST_SKIP() << "driver does not support this combination: "
                     << unimplemented;
      if (HasFailure()) return;
    }
  }
  reportRankCountsNotRun(skipped);
}

std::string matrixName(const ::testing::TestParamInfo<MatrixParam>& info) {
  const MatrixCase& c = std::get<1>(info.param);
  ::testing::TestParamInfo<std::string> uri(std::get<0>(info.param),
                                            info.index);
  return uriTestName(uri) + "_" + kindName(c.kind) +
         reductionName(c.reduction) + "_" + typeName(c.type);
}

INSTANTIATE_TEST_SUITE_P(Devices, CollectiveMatrixTest,
                         ::testing::Combine(::testing::ValuesIn(deviceUris()),
                                            ::testing::ValuesIn(matrixCases())),
                         matrixName);

//===----------------------------------------------------------------------===//
// Large messages and splits
//===----------------------------------------------------------------------===//

class CollectiveLargeTest : public CollectiveFixture,
                            public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override { openDevices(GetParam()); }

  // Sizes past the local driver's 256 KiB parallel threshold, uneven where
  // the collective allows it, in and out of place, on |ranks| ranks. One
  // test per rank count, so that each has the whole test timeout (8 ranks
  // of megabyte messages take most of a minute under ASan on 2 cores).
  void runLargeMessages(int32_t ranks);
};

void CollectiveLargeTest::runLargeMessages(int32_t ranks) {
  if (devices.size() < size_t(ranks))
    GTEST_SKIP() << ranks << " ranks need " << ranks
                 << " devices; the driver has " << devices.size();
  const MatrixCase cases[] = {
      {KILN_HAL_COLLECTIVE_ALL_REDUCE, KILN_HAL_REDUCTION_SUM,
       KILN_HAL_ELEMENT_TYPE_F32},
      {KILN_HAL_COLLECTIVE_ALL_REDUCE, KILN_HAL_REDUCTION_MAX,
       KILN_HAL_ELEMENT_TYPE_I32},
      {KILN_HAL_COLLECTIVE_ALL_REDUCE, KILN_HAL_REDUCTION_AVG,
       KILN_HAL_ELEMENT_TYPE_BF16},
      {KILN_HAL_COLLECTIVE_REDUCE_SCATTER, KILN_HAL_REDUCTION_SUM,
       KILN_HAL_ELEMENT_TYPE_F64},
      {KILN_HAL_COLLECTIVE_ALL_GATHER, KILN_HAL_REDUCTION_NONE,
       KILN_HAL_ELEMENT_TYPE_U8},
      {KILN_HAL_COLLECTIVE_ALL_TO_ALL, KILN_HAL_REDUCTION_NONE,
       KILN_HAL_ELEMENT_TYPE_I16},
      {KILN_HAL_COLLECTIVE_BROADCAST, KILN_HAL_REDUCTION_NONE,
       KILN_HAL_ELEMENT_TYPE_F64},
  };
  for (const MatrixCase& c : cases) {
    bool splits = c.kind == KILN_HAL_COLLECTIVE_REDUCE_SCATTER ||
                  c.kind == KILN_HAL_COLLECTIVE_ALL_TO_ALL;
    uint64_t count = splits ? 262144 * uint64_t(ranks) : 1000003;
    kiln_hal_collective_op_t op = {c.kind, c.reduction, c.type, count, 0};
    // In place only where recv and send have the same size.
    bool inPlaceOk = c.kind == KILN_HAL_COLLECTIVE_ALL_REDUCE ||
                     c.kind == KILN_HAL_COLLECTIVE_BROADCAST;
    for (bool inPlace : {false, true}) {
      if (inPlace && !inPlaceOk) continue;
      std::string unimplemented;
      if (!runAndCheck(op, ranks, inPlace, &unimplemented))
        ADD_FAILURE() << "common large collective unsupported: "
                      << unimplemented;
      if (HasFailure()) return;
    }
  }
}

TEST_P(CollectiveLargeTest, LargeMessagesOn2Ranks) { runLargeMessages(2); }
TEST_P(CollectiveLargeTest, LargeMessagesOn4Ranks) { runLargeMessages(4); }
TEST_P(CollectiveLargeTest, LargeMessagesOn8Ranks) { runLargeMessages(8); }

// Splits four ranks as a 2x2 grid (rank = 2 * row + column) into row and
// column channels and runs collectives on each.
TEST_P(CollectiveLargeTest, SplitIntoRowsAndColumns) {
  if (devices.size() < 4)
    GTEST_SKIP() << "a 2x2 grid needs four devices; the driver has "
                 << devices.size();
  RankGroup world;
  KILN_ASSERT_OK(makeGroup(devices, 4, &world));
  RankGroup rows, columns;
  rows.channels.assign(4, nullptr);
  columns.channels.assign(4, nullptr);
  std::vector<kiln_status_t> statuses(8, nullptr);
  onRankThreads(4, [&](int32_t r) {
    statuses[size_t(r)] = kiln_hal_channel_split(
        world.channels[size_t(r)], r / 2, r % 2, &rows.channels[size_t(r)]);
    // Columns ordered by descending key: sub-rank 0 is the bottom row.
    statuses[size_t(4 + r)] =
        kiln_hal_channel_split(world.channels[size_t(r)], r % 2, -(r / 2),
                               &columns.channels[size_t(r)]);
  });
  for (kiln_status_t status : statuses) KILN_EXPECT_OK(status);
  if (HasFailure()) return;
  for (int32_t r = 0; r < 4; ++r) {
    EXPECT_EQ(kiln_hal_channel_count(rows.channels[size_t(r)]), 2);
    EXPECT_EQ(kiln_hal_channel_rank(rows.channels[size_t(r)]), r % 2);
    EXPECT_EQ(kiln_hal_channel_count(columns.channels[size_t(r)]), 2);
    EXPECT_EQ(kiln_hal_channel_rank(columns.channels[size_t(r)]), 1 - r / 2);
  }
  // Each sub-group runs on the devices of its members, in sub-rank order.
  auto subDevices = [&](std::vector<int32_t> members) {
    std::vector<kiln_hal_device_t*> out;
    for (int32_t m : members) out.push_back(devices[size_t(m)]);
    return out;
  };
  auto subChannels = [&](RankGroup& group, std::vector<int32_t> members) {
    std::vector<kiln_hal_channel_t*> out;
    for (int32_t m : members) out.push_back(group.channels[size_t(m)]);
    return out;
  };
  const std::vector<std::vector<int32_t>> rowMembers = {{0, 1}, {2, 3}};
  const std::vector<std::vector<int32_t>> columnMembers = {{2, 0}, {3, 1}};
  for (bool byRow : {true, false}) {
    RankGroup& group = byRow ? rows : columns;
    for (const std::vector<int32_t>& members :
         byRow ? rowMembers : columnMembers) {
      std::string what = std::string(byRow ? "row" : "column") + " of rank " +
                         std::to_string(members[0]);
      for (kiln_hal_collective_op_t op :
           {kiln_hal_collective_op_t{KILN_HAL_COLLECTIVE_ALL_REDUCE,
                                     KILN_HAL_REDUCTION_SUM,
                                     KILN_HAL_ELEMENT_TYPE_I32, 1001, 0},
            kiln_hal_collective_op_t{KILN_HAL_COLLECTIVE_ALL_GATHER,
                                     KILN_HAL_REDUCTION_NONE,
                                     KILN_HAL_ELEMENT_TYPE_F32, 33, 0}}) {
        std::vector<Bytes> sends;
        for (int32_t m : members)
          sends.push_back(makeSend(op.element_type, op.element_count, m, 5));
        std::string unimplemented;
        auto results = runCollective(subDevices(members),
                                     subChannels(group, members), op, sends,
                                     recvBytes(op, 2), false, &unimplemented);
        ASSERT_TRUE(unimplemented.empty()) << unimplemented;
        checkResults(op, sends, results, what);
      }
    }
  }
  // The parent channel still works after the split.
  std::vector<Bytes> sends;
  for (int32_t r = 0; r < 4; ++r)
    sends.push_back(makeSend(KILN_HAL_ELEMENT_TYPE_U64, 5, r, 9));
  kiln_hal_collective_op_t op = {KILN_HAL_COLLECTIVE_ALL_REDUCE,
                                 KILN_HAL_REDUCTION_SUM,
                                 KILN_HAL_ELEMENT_TYPE_U64, 5, 0};
  std::string unimplemented;
  auto results = runCollective(devices, world.channels, op, sends, 5 * 8,
                               false, &unimplemented);
  checkResults(op, sends, results, "parent after split");
}

TEST_P(CollectiveLargeTest, SplitWithOneColorAndNegativeColors) {
  if (devices.size() < 2) GTEST_SKIP() << "driver has fewer than two devices";
  int32_t ranks = int32_t(devices.size());
  RankGroup world;
  KILN_ASSERT_OK(makeGroup(devices, ranks, &world));
  // One color, keys reversing the order.
  RankGroup reversed;
  reversed.channels.assign(size_t(ranks), nullptr);
  std::vector<kiln_status_t> statuses(size_t(ranks), nullptr);
  onRankThreads(ranks, [&](int32_t r) {
    statuses[size_t(r)] = kiln_hal_channel_split(
        world.channels[size_t(r)], 7, ranks - r, &reversed.channels[size_t(r)]);
  });
  for (kiln_status_t status : statuses) KILN_EXPECT_OK(status);
  if (HasFailure()) return;
  for (int32_t r = 0; r < ranks; ++r)
    EXPECT_EQ(kiln_hal_channel_rank(reversed.channels[size_t(r)]),
              ranks - 1 - r);
  // Negative colors on every rank: INVALID_ARGUMENT, no channel.
  std::vector<kiln_hal_channel_t*> none(size_t(ranks), nullptr);
  onRankThreads(ranks, [&](int32_t r) {
    statuses[size_t(r)] = kiln_hal_channel_split(world.channels[size_t(r)], -1,
                                                 0, &none[size_t(r)]);
  });
  for (int32_t r = 0; r < ranks; ++r) {
    KILN_EXPECT_STATUS(KILN_STATUS_INVALID_ARGUMENT, statuses[size_t(r)]);
    EXPECT_EQ(none[size_t(r)], nullptr);
  }
}

KILN_CTS_INSTANTIATE(CollectiveLargeTest);

}  // namespace
}  // namespace kiln::cts
