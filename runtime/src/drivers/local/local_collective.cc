#include "drivers/local/local_collective.h"

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <new>
#include <vector>

namespace kiln::local {

struct CollectiveGroup {
  explicit CollectiveGroup(int32_t count)
      : count(count), joined(size_t(count), false), sends(size_t(count)),
        sendLengths(size_t(count)), ops(size_t(count)) {}

  const int32_t count;
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<bool> joined;
  uint64_t generation = 0;
  int32_t arrived = 0;
  bool broken = false;
  // Published by each rank for the current round.
  std::vector<const uint8_t*> sends;
  std::vector<uint64_t> sendLengths;
  std::vector<kiln_hal_collective_op_t> ops;

  // All ranks meet here; ABORTED if |cancelled| turns true or the group
  // broke earlier.
  kiln_status_t barrier(const std::function<bool()>& cancelled);
};

namespace {

struct LocalChannel {
  kiln_hal_channel_t base;
  std::shared_ptr<CollectiveGroup> group;
};

void destroyChannel(kiln_hal_channel_t* base) {
  auto* channel = reinterpret_cast<LocalChannel*>(base);
  {
    std::lock_guard<std::mutex> lock(channel->group->mutex);
    channel->group->joined[size_t(base->rank)] = false;
  }
  delete channel;
}

kiln_status_t splitChannel(kiln_hal_channel_t*, int32_t, int32_t,
                           kiln_hal_channel_t**) {
  return kiln_make_status(KILN_STATUS_UNIMPLEMENTED,
                          "the local driver cannot split channels yet; create "
                          "a channel per sub-group with its own id");
}

const kiln_hal_channel_vtable_t kChannelVTable = {destroyChannel, splitChannel};

constexpr auto kCancelPoll = std::chrono::milliseconds(20);

// Element access: f16 and bf16 are reduced in float.
float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1F;
  uint32_t mantissa = h & 0x3FF;
  uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      exponent = 127 - 15 + 1;
      while (!(mantissa & 0x400)) {
        mantissa <<= 1;
        --exponent;
      }
      bits = sign | (exponent << 23) | ((mantissa & 0x3FF) << 13);
    }
  } else if (exponent == 31) {
    bits = sign | 0x7F800000 | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToHalf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint32_t sign = (bits >> 16) & 0x8000;
  int32_t exponent = int32_t((bits >> 23) & 0xFF) - 127 + 15;
  uint32_t mantissa = bits & 0x7FFFFF;
  if (((bits >> 23) & 0xFF) == 0xFF)  // inf / nan
    return uint16_t(sign | 0x7C00 | (mantissa ? 0x200 : 0));
  if (exponent >= 31) return uint16_t(sign | 0x7C00);
  if (exponent <= 0) {
    if (exponent < -10) return uint16_t(sign);
    mantissa |= 0x800000;
    uint32_t shift = uint32_t(14 - exponent);
    uint32_t half = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1))) ++half;
    return uint16_t(sign | half);
  }
  uint32_t half = sign | (uint32_t(exponent) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;
  return uint16_t(half);
}

float bf16ToFloat(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7F800000) == 0x7F800000 && (bits & 0x7FFFFF))
    return uint16_t((bits >> 16) | 0x40);  // keep NaN a NaN
  bits += 0x7FFF + ((bits >> 16) & 1);    // round to nearest even
  return uint16_t(bits >> 16);
}

template <typename T>
struct Plain {
  using Acc = T;
  static Acc load(const uint8_t* p, uint64_t i) {
    T v;
    std::memcpy(&v, p + i * sizeof(T), sizeof(T));
    return v;
  }
  static void store(uint8_t* p, uint64_t i, Acc v) {
    T t = T(v);
    std::memcpy(p + i * sizeof(T), &t, sizeof(T));
  }
};

template <float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float)>
struct Packed16 {
  using Acc = float;
  static Acc load(const uint8_t* p, uint64_t i) {
    uint16_t v;
    std::memcpy(&v, p + i * 2, 2);
    return ToFloat(v);
  }
  static void store(uint8_t* p, uint64_t i, Acc v) {
    uint16_t t = FromFloat(v);
    std::memcpy(p + i * 2, &t, 2);
  }
};

// out[i] = reduce over ranks of sends[r][first + i], i < n.
template <typename E>
void reduce(kiln_hal_reduction_t reduction,
            const std::vector<const uint8_t*>& sends, uint64_t first,
            uint64_t n, uint8_t* out) {
  using Acc = typename E::Acc;
  size_t ranks = sends.size();
  for (uint64_t i = 0; i < n; ++i) {
    Acc acc = E::load(sends[0], first + i);
    for (size_t r = 1; r < ranks; ++r) {
      Acc v = E::load(sends[r], first + i);
      switch (reduction) {
        case KILN_HAL_REDUCTION_SUM:
        case KILN_HAL_REDUCTION_AVG:
          acc = Acc(acc + v);
          break;
        case KILN_HAL_REDUCTION_PROD:
          acc = Acc(acc * v);
          break;
        case KILN_HAL_REDUCTION_MIN:
          acc = v < acc ? v : acc;
          break;
        case KILN_HAL_REDUCTION_MAX:
          acc = v > acc ? v : acc;
          break;
        case KILN_HAL_REDUCTION_NONE:
          break;
      }
    }
    if (reduction == KILN_HAL_REDUCTION_AVG) acc = Acc(acc / Acc(ranks));
    E::store(out, i, acc);
  }
}

bool reduceTyped(kiln_hal_element_type_t type, kiln_hal_reduction_t reduction,
                 const std::vector<const uint8_t*>& sends, uint64_t first,
                 uint64_t n, uint8_t* out) {
  switch (type) {
    case KILN_HAL_ELEMENT_TYPE_I1:
    case KILN_HAL_ELEMENT_TYPE_U8:
      reduce<Plain<uint8_t>>(reduction, sends, first, n, out);
      return true;
    case KILN_HAL_ELEMENT_TYPE_I8:
      reduce<Plain<int8_t>>(reduction, sends, first, n, out);
      return true;
    case KILN_HAL_ELEMENT_TYPE_I16:
      reduce<Plain<int16_t>>(reduction, sends, first, n, out);
      return true;
    case KILN_HAL_ELEMENT_TYPE_U16:
      reduce<Plain<uint16_t>>(reduction, sends, first, n, out);
      return true;
    case KILN_HAL_ELEMENT_TYPE_I32:
      reduce<Plain<int32_t>>(reduction, sends, first, n, out);
      return true;
    case KILN_HAL_ELEMENT_TYPE_U32:
      reduce<Plain<uint32_t>>(reduction, sends, first, n, out);
      return true;
    case KILN_HAL_ELEMENT_TYPE_I64:
      reduce<Plain<int64_t>>(reduction, sends, first, n, out);
      return true;
    case KILN_HAL_ELEMENT_TYPE_U64:
      reduce<Plain<uint64_t>>(reduction, sends, first, n, out);
      return true;
    case KILN_HAL_ELEMENT_TYPE_F16:
      reduce<Packed16<halfToFloat, floatToHalf>>(reduction, sends, first, n,
                                                 out);
      return true;
    case KILN_HAL_ELEMENT_TYPE_BF16:
      reduce<Packed16<bf16ToFloat, floatToBf16>>(reduction, sends, first, n,
                                                 out);
      return true;
    case KILN_HAL_ELEMENT_TYPE_F32:
      reduce<Plain<float>>(reduction, sends, first, n, out);
      return true;
    case KILN_HAL_ELEMENT_TYPE_F64:
      reduce<Plain<double>>(reduction, sends, first, n, out);
      return true;
    case KILN_HAL_ELEMENT_TYPE_INVALID:
      break;
  }
  return false;
}

bool sameOp(const kiln_hal_collective_op_t& a,
            const kiln_hal_collective_op_t& b) {
  return a.kind == b.kind && a.reduction == b.reduction &&
         a.element_type == b.element_type &&
         a.element_count == b.element_count && a.root == b.root;
}

const char* kindName(kiln_hal_collective_kind_t kind) {
  switch (kind) {
    case KILN_HAL_COLLECTIVE_ALL_REDUCE: return "all_reduce";
    case KILN_HAL_COLLECTIVE_ALL_GATHER: return "all_gather";
    case KILN_HAL_COLLECTIVE_REDUCE_SCATTER: return "reduce_scatter";
    case KILN_HAL_COLLECTIVE_ALL_TO_ALL: return "all_to_all";
    case KILN_HAL_COLLECTIVE_BROADCAST: return "broadcast";
  }
  return "collective";
}

// Bytes rank |rank| must receive for |op| among |ranks| ranks, and checks.
kiln_status_t recvBytes(const kiln_hal_collective_op_t& op, int32_t ranks,
                        uint64_t* out) {
  uint64_t elementSize = kiln_hal_element_type_size(op.element_type);
  uint64_t count = op.element_count;
  bool needsReduction = op.kind == KILN_HAL_COLLECTIVE_ALL_REDUCE ||
                        op.kind == KILN_HAL_COLLECTIVE_REDUCE_SCATTER;
  if (needsReduction && op.reduction == KILN_HAL_REDUCTION_NONE)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s needs a reduction", kindName(op.kind));
  bool splits = op.kind == KILN_HAL_COLLECTIVE_REDUCE_SCATTER ||
                op.kind == KILN_HAL_COLLECTIVE_ALL_TO_ALL;
  if (splits && count % uint64_t(ranks) != 0)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s of %llu elements does not split evenly over "
                            "%d ranks",
                            kindName(op.kind), (unsigned long long)count,
                            ranks);
  if (op.kind == KILN_HAL_COLLECTIVE_BROADCAST &&
      (op.root < 0 || op.root >= ranks))
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "broadcast root %d is not a rank of %d", op.root,
                            ranks);
  switch (op.kind) {
    case KILN_HAL_COLLECTIVE_ALL_GATHER:
      *out = count * uint64_t(ranks) * elementSize;
      break;
    case KILN_HAL_COLLECTIVE_REDUCE_SCATTER:
      *out = count / uint64_t(ranks) * elementSize;
      break;
    default:
      *out = count * elementSize;
      break;
  }
  return nullptr;
}

}  // namespace

kiln_status_t CollectiveGroup::barrier(const std::function<bool()>& cancelled) {
  std::unique_lock<std::mutex> lock(mutex);
  if (broken)
    return kiln_make_status(KILN_STATUS_ABORTED,
                            "the collective group was broken by an earlier "
                            "cancelled collective");
  uint64_t myGeneration = generation;
  if (++arrived == count) {
    arrived = 0;
    ++generation;
    changed.notify_all();
    return nullptr;
  }
  while (generation == myGeneration && !broken) {
    changed.wait_for(lock, kCancelPoll);
    if (generation == myGeneration && cancelled && cancelled()) {
      broken = true;
      changed.notify_all();
    }
  }
  if (generation != myGeneration) return nullptr;
  return kiln_make_status(KILN_STATUS_ABORTED,
                          "a collective was cancelled while waiting for its "
                          "peers (device destroyed)");
}

kiln_status_t CollectiveHub::createChannelId(uint8_t* outId, size_t capacity,
                                             size_t* outLength) {
  uint64_t n;
  {
    std::lock_guard<std::mutex> lock(mutex);
    n = nextId++;
  }
  std::string id = "local-group-" + std::to_string(n);
  if (id.size() > capacity)
    return kiln_make_status(KILN_STATUS_OUT_OF_RANGE,
                            "channel id needs %zu bytes, capacity is %zu",
                            id.size(), capacity);
  std::memcpy(outId, id.data(), id.size());
  *outLength = id.size();
  return nullptr;
}

kiln_status_t CollectiveHub::createChannel(const kiln_hal_channel_params_t* params,
                                           kiln_hal_channel_t** outChannel) {
  std::string key(static_cast<const char*>(params->id), params->id_length);
  key += "/" + std::to_string(params->count);
  std::shared_ptr<CollectiveGroup> group;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = groups.find(key);
  if (it != groups.end()) group = it->second.lock();
  if (!group) {
    group = std::make_shared<CollectiveGroup>(params->count);
    groups[key] = group;
  }
  {
    std::lock_guard<std::mutex> groupLock(group->mutex);
    if (group->joined[size_t(params->rank)])
      return kiln_make_status(KILN_STATUS_ALREADY_EXISTS,
                              "rank %d of this %d-rank group already has a "
                              "channel",
                              params->rank, params->count);
    group->joined[size_t(params->rank)] = true;
  }
  auto* channel = new (std::nothrow) LocalChannel();
  if (!channel) {
    std::lock_guard<std::mutex> groupLock(group->mutex);
    group->joined[size_t(params->rank)] = false;
    return kiln_make_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory creating a channel");
  }
  kiln_hal_resource_initialize(&kChannelVTable, &channel->base.resource);
  channel->base.rank = params->rank;
  channel->base.count = params->count;
  channel->group = std::move(group);
  // Drop entries of groups that no longer exist.
  for (auto entry = groups.begin(); entry != groups.end();) {
    if (entry->second.expired()) entry = groups.erase(entry); else ++entry;
  }
  *outChannel = &channel->base;
  return nullptr;
}

bool isLocalChannel(kiln_hal_channel_t* channel) {
  return channel && channel->resource.vtable == &kChannelVTable;
}

kiln_status_t runCollective(kiln_hal_channel_t* base,
                            const kiln_hal_collective_op_t& op,
                            const uint8_t* send, uint64_t sendLength,
                            uint8_t* recv, uint64_t recvLength,
                            const std::function<bool()>& cancelled) {
  if (!isLocalChannel(base))
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "channel was not created by the local driver");
  CollectiveGroup& group = *reinterpret_cast<LocalChannel*>(base)->group;
  int32_t rank = base->rank;
  int32_t ranks = base->count;
  // Validate locally but still take part in the rounds, so that peers see
  // this rank's failure instead of waiting forever.
  uint64_t need = 0;
  kiln_status_t status = recvBytes(op, ranks, &need);
  uint64_t elementSize = kiln_hal_element_type_size(op.element_type);
  if (!status && sendLength < op.element_count * elementSize)
    status = kiln_make_status(KILN_STATUS_OUT_OF_RANGE,
                              "%s send range has %llu bytes, needs %llu",
                              kindName(op.kind),
                              (unsigned long long)sendLength,
                              (unsigned long long)(op.element_count *
                                                   elementSize));
  if (!status && recvLength < need)
    status = kiln_make_status(KILN_STATUS_OUT_OF_RANGE,
                              "%s recv range has %llu bytes, needs %llu",
                              kindName(op.kind),
                              (unsigned long long)recvLength,
                              (unsigned long long)need);
  {
    std::lock_guard<std::mutex> lock(group.mutex);
    group.sends[size_t(rank)] = status ? nullptr : send;
    group.sendLengths[size_t(rank)] = sendLength;
    group.ops[size_t(rank)] = op;
  }
  kiln_status_t barrierStatus = group.barrier(cancelled);
  if (barrierStatus) {
    kiln_status_free(status);
    return barrierStatus;
  }
  std::vector<const uint8_t*> sends;
  bool peersOk = true;
  {
    std::lock_guard<std::mutex> lock(group.mutex);
    sends = group.sends;
    for (int32_t r = 0; r < ranks; ++r) {
      peersOk = peersOk && sends[size_t(r)] != nullptr &&
                sameOp(group.ops[size_t(r)], op);
    }
  }
  if (!status && !peersOk)
    status = kiln_make_status(KILN_STATUS_FAILED_PRECONDITION,
                              "%s on rank %d: another rank of the %d-rank "
                              "group ran a different or invalid collective",
                              kindName(op.kind), rank, ranks);
  std::vector<uint8_t> result;
  if (!status) {
    result.resize(size_t(need));
    uint64_t count = op.element_count;
    switch (op.kind) {
      case KILN_HAL_COLLECTIVE_ALL_REDUCE:
        reduceTyped(op.element_type, op.reduction, sends, 0, count,
                    result.data());
        break;
      case KILN_HAL_COLLECTIVE_REDUCE_SCATTER: {
        uint64_t chunk = count / uint64_t(ranks);
        reduceTyped(op.element_type, op.reduction, sends,
                    uint64_t(rank) * chunk, chunk, result.data());
        break;
      }
      case KILN_HAL_COLLECTIVE_ALL_GATHER:
        for (int32_t r = 0; r < ranks; ++r)
          std::memcpy(result.data() + uint64_t(r) * count * elementSize,
                      sends[size_t(r)], size_t(count * elementSize));
        break;
      case KILN_HAL_COLLECTIVE_ALL_TO_ALL: {
        uint64_t chunkBytes = count / uint64_t(ranks) * elementSize;
        for (int32_t r = 0; r < ranks; ++r)
          std::memcpy(result.data() + uint64_t(r) * chunkBytes,
                      sends[size_t(r)] + uint64_t(rank) * chunkBytes,
                      size_t(chunkBytes));
        break;
      }
      case KILN_HAL_COLLECTIVE_BROADCAST:
        std::memcpy(result.data(), sends[size_t(op.root)], size_t(need));
        break;
    }
  }
  // Nobody writes a recv buffer until every rank finished reading sends.
  barrierStatus = group.barrier(cancelled);
  if (barrierStatus) {
    kiln_status_free(status);
    return barrierStatus;
  }
  if (status) return status;
  if (need) std::memcpy(recv, result.data(), size_t(need));
  return nullptr;
}

}  // namespace kiln::local
