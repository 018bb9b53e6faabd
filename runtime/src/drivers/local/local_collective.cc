#include "drivers/local/local_collective.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <vector>

#include "drivers/common/collective_names.h"
#include "drivers/local/local_buffer.h"

namespace kiln::local {

enum class RoundKind { Collective, Split, Window };

// What one rank published for the current round of its group.
struct RoundEntry {
  RoundKind kind = RoundKind::Collective;
  // False when the rank's own arguments were invalid: it still takes part in
  // the round so that its peers fail instead of waiting forever.
  bool valid = false;
  kiln_hal_collective_op_t op = {};
  const uint8_t* send = nullptr;
  uint64_t sendLength = 0;
  uint8_t* recv = nullptr;
  uint64_t recvLength = 0;
  int32_t color = 0;  // split only
  int32_t key = 0;    // split only
  // Window only: the parameters, and the rank's memory (a
  // std::shared_ptr<WindowMemory>, alive until the round's last barrier).
  kiln_hal_window_params_t window = {};
  const void* memory = nullptr;
};

struct CollectiveGroup {
  CollectiveGroup(int32_t count, uint64_t parallelThreshold)
      : count(count), parallelThreshold(parallelThreshold),
        joined(size_t(count), false), entries(size_t(count)) {}

  const int32_t count;
  // All-reduces of at least this many bytes use the parallel algorithm.
  const uint64_t parallelThreshold;
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<bool> joined;
  uint64_t generation = 0;
  int32_t arrived = 0;
  bool broken = false;
  std::vector<RoundEntry> entries;
  // Sub-groups of the split in progress, by color.
  std::map<int32_t, std::shared_ptr<CollectiveGroup>> splits;

  // All ranks meet here; ABORTED if |cancelled| turns true or the group
  // broke earlier.
  kiln_status_t barrier(const std::function<bool()>& cancelled);
  // Publishes |entry| as rank |rank|'s part of a round, waits for every rank
  // and copies all entries into |out| (the same snapshot on every rank).
  kiln_status_t exchange(int32_t rank, const RoundEntry& entry,
                         const std::function<bool()>& cancelled,
                         std::vector<RoundEntry>* out);
};

namespace {

struct LocalChannel {
  kiln_hal_channel_t base;
  std::shared_ptr<CollectiveGroup> group;
  // The memory of the device the channel was created on (its windows'), and
  // where that device keeps its windows' abort words.
  std::shared_ptr<drivers::BlockCache> blocks;
  std::shared_ptr<drivers::WindowAborts> aborts;
};

LocalChannel* cast(kiln_hal_channel_t* base) {
  return reinterpret_cast<LocalChannel*>(base);
}

void destroyChannel(kiln_hal_resource_t* resource) {
  kiln_hal_channel_t* base = reinterpret_cast<kiln_hal_channel_t*>(resource);
  auto* channel = cast(base);
  {
    std::lock_guard<std::mutex> lock(channel->group->mutex);
    channel->group->joined[size_t(base->rank)] = false;
  }
  delete channel;
}

kiln_status_t splitChannel(kiln_hal_channel_t* base, int32_t color,
                           int32_t key, kiln_hal_channel_t** outChannel);
kiln_status_t createWindow(kiln_hal_channel_t* base,
                           const kiln_hal_window_params_t* params,
                           kiln_hal_window_t** outWindow);

const kiln_hal_channel_vtable_t kChannelVTable = {destroyChannel, splitChannel,
                                                  createWindow};

// Wraps rank |rank| of |group| (whose joined flag the caller set) in a
// channel.
kiln_status_t newChannel(std::shared_ptr<CollectiveGroup> group, int32_t rank,
                         std::shared_ptr<drivers::BlockCache> blocks,
                         std::shared_ptr<drivers::WindowAborts> aborts,
                         kiln_hal_channel_t** outChannel) {
  auto* channel = new (std::nothrow) LocalChannel();
  if (!channel) {
    std::lock_guard<std::mutex> lock(group->mutex);
    group->joined[size_t(rank)] = false;
    return kiln_make_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory creating a channel");
  }
  kiln_hal_resource_initialize(&kChannelVTable, &channel->base.resource);
  channel->base.rank = rank;
  channel->base.count = group->count;
  channel->group = std::move(group);
  channel->blocks = std::move(blocks);
  channel->aborts = std::move(aborts);
  *outChannel = &channel->base;
  return nullptr;
}

// One rank's window memory, shared by the windows of every rank of the
// group.
struct WindowMemory {
  kiln_hal_buffer_t* data = nullptr;
  kiln_hal_buffer_t* signals = nullptr;
  // Rank 0's is the group's abort word (the peer table's last entry): set
  // when any rank releases its window or a rank's device fails a
  // submission. Kernels read it with atomic loads.
  uint64_t abort = 0;
  ~WindowMemory() {
    kiln_hal_buffer_release(data);
    kiln_hal_buffer_release(signals);
  }
};

struct LocalWindow {
  kiln_hal_window_t base;
  std::vector<std::shared_ptr<WindowMemory>> ranks;
};

void destroyWindow(kiln_hal_resource_t* resource) {
  auto* window = reinterpret_cast<LocalWindow*>(resource);
  // A rank that leaves aborts the kernels that still wait for it.
  __atomic_store_n(&window->ranks[0]->abort, uint64_t{1}, __ATOMIC_RELEASE);
  kiln_hal_buffer_release(window->base.peer_table);
  delete window;
}

const kiln_hal_window_vtable_t kWindowVTable = {destroyWindow};

// A zeroed host buffer of |size| bytes from |blocks|, mappable and usable
// by dispatches and collectives.
kiln_status_t allocateZeroed(const std::shared_ptr<drivers::BlockCache>& blocks,
                             uint64_t size, kiln_hal_buffer_t** outBuffer) {
  kiln_hal_buffer_params_t params = {};
  params.memory_type =
      KILN_HAL_MEMORY_TYPE_DEVICE_LOCAL | KILN_HAL_MEMORY_TYPE_HOST_VISIBLE;
  params.usage = KILN_HAL_BUFFER_USAGE_DEFAULT | KILN_HAL_BUFFER_USAGE_MAPPING;
  KILN_RETURN_IF_ERROR(
      createBuffer(blocks, &params, size, /*allocateNow=*/true, outBuffer));
  std::memset(asLocalBuffer(*outBuffer)->storage.load(), 0, size);
  return nullptr;
}

uint8_t* storageOf(kiln_hal_buffer_t* buffer) {
  return asLocalBuffer(buffer)->storage.load();
}

// Collective over the channel's group: one round publishes every rank's
// memory (or that its allocation failed), every rank takes a reference to
// all of it, and a barrier ends the round once nobody reads the published
// entries any more.
kiln_status_t createWindow(kiln_hal_channel_t* base,
                           const kiln_hal_window_params_t* params,
                           kiln_hal_window_t** outWindow) {
  LocalChannel* channel = cast(base);
  CollectiveGroup& group = *channel->group;
  const int32_t rank = base->rank;
  auto memory = std::make_shared<WindowMemory>();
  uint64_t signalBytes = 8 * std::max<uint64_t>(1, params->signal_count);
  kiln_status_t status =
      allocateZeroed(channel->blocks, params->size, &memory->data);
  if (!status)
    status = allocateZeroed(channel->blocks, signalBytes, &memory->signals);
  kiln_hal_buffer_t* table = nullptr;
  if (!status)
    status =
        allocateZeroed(channel->blocks, 16 * uint64_t(group.count) + 8, &table);
  RoundEntry entry;
  entry.kind = RoundKind::Window;
  entry.valid = status == nullptr;
  entry.window = *params;
  entry.memory = &memory;
  std::vector<RoundEntry> entries;
  kiln_status_t roundStatus = group.exchange(rank, entry, {}, &entries);
  if (roundStatus) {
    kiln_status_free(status);
    kiln_hal_buffer_release(table);
    return roundStatus;
  }
  bool peersOk = true;
  for (const RoundEntry& peer : entries)
    peersOk = peersOk && peer.kind == RoundKind::Window && peer.valid &&
              peer.window.size == params->size &&
              peer.window.signal_count == params->signal_count;
  if (!status && !peersOk)
    status = kiln_make_status(
        KILN_STATUS_FAILED_PRECONDITION,
        "window creation on rank %d: another rank of the %d-rank group asked "
        "for another size or signal count (this rank: %llu bytes, %u "
        "signals), could not allocate its window, or ran something else",
        rank, group.count, (unsigned long long)params->size,
        params->signal_count);
  auto* window = status ? nullptr : new (std::nothrow) LocalWindow();
  if (!status && !window)
    status = kiln_make_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                              "out of memory creating a window");
  if (window) {
    auto* addresses = reinterpret_cast<uint64_t*>(storageOf(table));
    for (int32_t r = 0; r < group.count; ++r) {
      const auto& peer = *static_cast<const std::shared_ptr<WindowMemory>*>(
          entries[size_t(r)].memory);
      window->ranks.push_back(peer);
      addresses[r] = reinterpret_cast<uintptr_t>(storageOf(peer->data));
      addresses[group.count + r] =
          reinterpret_cast<uintptr_t>(storageOf(peer->signals));
    }
    addresses[2 * group.count] =
        reinterpret_cast<uintptr_t>(&window->ranks[0]->abort);
    // A failed submission on this rank's device aborts the group.
    channel->aborts->add(std::shared_ptr<uint64_t>(window->ranks[0],
                                                   &window->ranks[0]->abort));
  }
  // Every rank holds its references: the published entries may go.
  roundStatus = group.barrier({});
  if (roundStatus || status) {
    delete window;
    kiln_hal_buffer_release(table);
    if (roundStatus) {
      kiln_status_free(status);
      return roundStatus;
    }
    return status;
  }
  kiln_hal_resource_initialize(&kWindowVTable, &window->base.resource);
  window->base.size = params->size;
  window->base.signal_count = params->signal_count;
  window->base.data = memory->data;
  window->base.signals = memory->signals;
  window->base.peer_table = table;
  *outWindow = &window->base;
  return nullptr;
}

// MPI_Comm_split over the ranks of |base|'s group: two rounds, one to
// publish (color, key), one after every rank took its sub-group.
kiln_status_t splitChannel(kiln_hal_channel_t* base, int32_t color,
                           int32_t key, kiln_hal_channel_t** outChannel) {
  CollectiveGroup& group = *cast(base)->group;
  const int32_t rank = base->rank;
  kiln_status_t status = nullptr;
  if (color < 0)
    status = kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "channel split on rank %d: color %d is "
                              "negative (colors must be >= 0)",
                              rank, color);
  RoundEntry entry;
  entry.kind = RoundKind::Split;
  entry.valid = status == nullptr;
  entry.color = color;
  entry.key = key;
  std::vector<RoundEntry> entries;
  kiln_status_t roundStatus = group.exchange(rank, entry, {}, &entries);
  if (roundStatus) {
    kiln_status_free(status);
    return roundStatus;
  }
  bool peersOk = true;
  for (const RoundEntry& peer : entries)
    peersOk = peersOk && peer.kind == RoundKind::Split && peer.valid;
  if (!status && !peersOk)
    status = kiln_make_status(KILN_STATUS_FAILED_PRECONDITION,
                              "channel split on rank %d: another rank of the "
                              "%d-rank group passed a negative color or ran "
                              "a collective instead of the split",
                              rank, group.count);
  std::shared_ptr<CollectiveGroup> sub;
  int32_t subRank = 0;
  if (!status) {
    // Members of this color, ordered by key, ties by parent rank.
    std::vector<int32_t> members;
    for (int32_t r = 0; r < group.count; ++r)
      if (entries[size_t(r)].color == color) members.push_back(r);
    std::stable_sort(members.begin(), members.end(),
                     [&](int32_t a, int32_t b) {
                       return entries[size_t(a)].key < entries[size_t(b)].key;
                     });
    subRank = int32_t(std::find(members.begin(), members.end(), rank) -
                      members.begin());
    std::lock_guard<std::mutex> lock(group.mutex);
    std::shared_ptr<CollectiveGroup>& slot = group.splits[color];
    if (!slot)
      slot = std::make_shared<CollectiveGroup>(int32_t(members.size()),
                                               group.parallelThreshold);
    sub = slot;
    std::lock_guard<std::mutex> subLock(sub->mutex);
    sub->joined[size_t(subRank)] = true;
  }
  // Every rank took its sub-group: the table can go (the next split only
  // fills it after its first round, which every rank reaches after this).
  roundStatus = group.barrier({});
  {
    std::lock_guard<std::mutex> lock(group.mutex);
    group.splits.clear();
  }
  if (roundStatus || status) {
    if (sub) {
      std::lock_guard<std::mutex> subLock(sub->mutex);
      sub->joined[size_t(subRank)] = false;
    }
    if (roundStatus) {
      kiln_status_free(status);
      return roundStatus;
    }
    return status;
  }
  return newChannel(std::move(sub), subRank, cast(base)->blocks,
                    cast(base)->aborts, outChannel);
}

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


// Element access. Plain types reduce in their own type; 16-bit floats in
// float; i1 as 0 or 1.
template <typename T>
struct Plain {
  using Acc = T;
  static Acc load(const uint8_t* p, uint64_t i) {
    T v;
    std::memcpy(&v, p + i * sizeof(T), sizeof(T));
    return v;
  }
  static void store(uint8_t* p, uint64_t i, Acc v) {
    std::memcpy(p + i * sizeof(T), &v, sizeof(T));
  }
};

struct Bool {
  using Acc = uint8_t;
  static Acc load(const uint8_t* p, uint64_t i) { return p[i] != 0; }
  static void store(uint8_t* p, uint64_t i, Acc v) { p[i] = v; }
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

// Integer sums and products wrap around (as on GPUs) instead of overflowing
// into undefined behaviour; narrow types are widened to unsigned int first
// (uint16 * uint16 would overflow int).
template <typename T, bool = std::is_integral_v<T>>
struct WideOf {
  using type = T;
};
template <typename T>
struct WideOf<T, true> {
  using type = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned,
                                  std::make_unsigned_t<T>>;
};
template <typename T>
using Wide = typename WideOf<T>::type;

struct SumOp {
  template <typename A>
  static A apply(A a, A b) {
    return A(Wide<A>(a) + Wide<A>(b));
  }
};
struct ProdOp {
  template <typename A>
  static A apply(A a, A b) {
    return A(Wide<A>(a) * Wide<A>(b));
  }
};
struct MinOp {
  template <typename A>
  static A apply(A a, A b) {
    return b < a ? b : a;
  }
};
struct MaxOp {
  template <typename A>
  static A apply(A a, A b) {
    return b > a ? b : a;
  }
};

// out[i] = reduce over ranks r = 0..N-1 (in that order) of
// sends[r][first + i], i < n; with |average| divided by N. Works in blocks
// so the inner loops vectorize; a block is loaded completely before it is
// stored, so |out| may be sends[r] + first (in place).
template <typename E, typename Op>
void reduceBlocks(const std::vector<const uint8_t*>& sends, uint64_t first,
                  uint64_t n, bool average, uint8_t* out) {
  using Acc = typename E::Acc;
  constexpr uint64_t kBlock = 256;
  Acc acc[kBlock];
  const size_t ranks = sends.size();
  for (uint64_t base = 0; base < n; base += kBlock) {
    const uint64_t m = std::min(kBlock, n - base);
    const uint64_t at = first + base;
    for (uint64_t j = 0; j < m; ++j) acc[j] = E::load(sends[0], at + j);
    for (size_t r = 1; r < ranks; ++r)
      for (uint64_t j = 0; j < m; ++j)
        acc[j] = Op::apply(acc[j], E::load(sends[r], at + j));
    if (average)
      for (uint64_t j = 0; j < m; ++j) acc[j] = Acc(acc[j] / Acc(ranks));
    for (uint64_t j = 0; j < m; ++j) E::store(out, base + j, acc[j]);
  }
}

template <typename E>
void reduceAs(kiln_hal_reduction_t reduction,
              const std::vector<const uint8_t*>& sends, uint64_t first,
              uint64_t n, uint8_t* out) {
  switch (reduction) {
    case KILN_HAL_REDUCTION_SUM:
      return reduceBlocks<E, SumOp>(sends, first, n, false, out);
    case KILN_HAL_REDUCTION_AVG:
      return reduceBlocks<E, SumOp>(sends, first, n, true, out);
    case KILN_HAL_REDUCTION_PROD:
      return reduceBlocks<E, ProdOp>(sends, first, n, false, out);
    case KILN_HAL_REDUCTION_MIN:
      return reduceBlocks<E, MinOp>(sends, first, n, false, out);
    case KILN_HAL_REDUCTION_MAX:
      return reduceBlocks<E, MaxOp>(sends, first, n, false, out);
    case KILN_HAL_REDUCTION_NONE:
      break;
  }
}

// Reduces elements [first, first + n) of every rank's send into out[0, n).
// The op was validated (a reduction, a supported type).
void reduceTyped(kiln_hal_element_type_t type, kiln_hal_reduction_t reduction,
                 const std::vector<const uint8_t*>& sends, uint64_t first,
                 uint64_t n, uint8_t* out) {
  switch (type) {
    case KILN_HAL_ELEMENT_TYPE_I1:
      // Logical: sum is or (max of 0/1), prod is and (min of 0/1).
      if (reduction == KILN_HAL_REDUCTION_SUM) reduction = KILN_HAL_REDUCTION_MAX;
      if (reduction == KILN_HAL_REDUCTION_PROD) reduction = KILN_HAL_REDUCTION_MIN;
      return reduceAs<Bool>(reduction, sends, first, n, out);
    case KILN_HAL_ELEMENT_TYPE_U8:
      return reduceAs<Plain<uint8_t>>(reduction, sends, first, n, out);
    case KILN_HAL_ELEMENT_TYPE_I8:
      return reduceAs<Plain<int8_t>>(reduction, sends, first, n, out);
    case KILN_HAL_ELEMENT_TYPE_I16:
      return reduceAs<Plain<int16_t>>(reduction, sends, first, n, out);
    case KILN_HAL_ELEMENT_TYPE_U16:
      return reduceAs<Plain<uint16_t>>(reduction, sends, first, n, out);
    case KILN_HAL_ELEMENT_TYPE_I32:
      return reduceAs<Plain<int32_t>>(reduction, sends, first, n, out);
    case KILN_HAL_ELEMENT_TYPE_U32:
      return reduceAs<Plain<uint32_t>>(reduction, sends, first, n, out);
    case KILN_HAL_ELEMENT_TYPE_I64:
      return reduceAs<Plain<int64_t>>(reduction, sends, first, n, out);
    case KILN_HAL_ELEMENT_TYPE_U64:
      return reduceAs<Plain<uint64_t>>(reduction, sends, first, n, out);
    case KILN_HAL_ELEMENT_TYPE_F16:
      return reduceAs<Packed16<halfToFloat, floatToHalf>>(reduction, sends,
                                                          first, n, out);
    case KILN_HAL_ELEMENT_TYPE_BF16:
      return reduceAs<Packed16<bf16ToFloat, floatToBf16>>(reduction, sends,
                                                          first, n, out);
    case KILN_HAL_ELEMENT_TYPE_F32:
      return reduceAs<Plain<float>>(reduction, sends, first, n, out);
    case KILN_HAL_ELEMENT_TYPE_F64:
      return reduceAs<Plain<double>>(reduction, sends, first, n, out);
    case KILN_HAL_ELEMENT_TYPE_INVALID:
      break;
  }
}

bool sameOp(const kiln_hal_collective_op_t& a,
            const kiln_hal_collective_op_t& b) {
  return a.kind == b.kind && a.reduction == b.reduction &&
         a.element_type == b.element_type &&
         a.element_count == b.element_count && a.root == b.root;
}

using drivers::collectiveKindName;

// Bytes each rank receives for a validated |op| among |ranks| ranks.
uint64_t recvBytes(const kiln_hal_collective_op_t& op, int32_t ranks) {
  uint64_t elementSize = kiln_hal_element_type_size(op.element_type);
  switch (op.kind) {
    case KILN_HAL_COLLECTIVE_ALL_GATHER:
      return op.element_count * uint64_t(ranks) * elementSize;
    case KILN_HAL_COLLECTIVE_REDUCE_SCATTER:
      return op.element_count / uint64_t(ranks) * elementSize;
    default:
      return op.element_count * elementSize;
  }
}

bool overlaps(const uint8_t* a, uint64_t aLength, const uint8_t* b,
              uint64_t bLength) {
  return aLength && bLength && a < b + bLength && b < a + aLength;
}

// True when [recv, recv + length) overlaps the part of any rank's send that
// peers read (|sendBytes| bytes).
bool overlapsAnySend(const uint8_t* recv, uint64_t length,
                     const std::vector<RoundEntry>& entries,
                     uint64_t sendBytes) {
  for (const RoundEntry& entry : entries)
    if (overlaps(recv, length, entry.send, sendBytes)) return true;
  return false;
}

// The parallel all-reduce writes every rank's recv while peers still read
// sends: it needs each recv to be its own rank's send (in place) or apart
// from every send and every other recv. Otherwise the direct algorithm runs.
bool parallelAllReduceSafe(const std::vector<RoundEntry>& entries,
                           uint64_t bytes) {
  for (size_t s = 0; s < entries.size(); ++s) {
    const RoundEntry& e = entries[s];
    for (size_t t = 0; t < entries.size(); ++t) {
      if (s == t && e.recv == e.send) continue;
      if (overlaps(e.recv, bytes, entries[t].send, bytes)) return false;
      if (s != t && overlaps(e.recv, bytes, entries[t].recv, bytes))
        return false;
    }
  }
  return true;
}

// Bytes a parallel all-reduce reduces before copying them out (fits L2).
constexpr uint64_t kParallelChunkBytes = 64 * 1024;

// Rank |rank| reduces its slice of the elements (1/N, the remainder spread
// over the first ranks) chunk by chunk into its own recv, and copies each
// reduced chunk into the peers' recvs.
void parallelAllReduce(const kiln_hal_collective_op_t& op, int32_t rank,
                       const std::vector<RoundEntry>& entries,
                       const std::vector<const uint8_t*>& sends) {
  const uint64_t ranks = entries.size();
  const uint64_t count = op.element_count;
  const uint64_t elementSize = kiln_hal_element_type_size(op.element_type);
  const uint64_t share = count / ranks, extra = count % ranks;
  const uint64_t r = uint64_t(rank);
  const uint64_t first = r * share + std::min(r, extra);
  const uint64_t last = first + share + (r < extra ? 1 : 0);
  const uint64_t chunk = std::max<uint64_t>(1, kParallelChunkBytes / elementSize);
  uint8_t* own = entries[r].recv;
  for (uint64_t at = first; at < last; at += chunk) {
    const uint64_t n = std::min(chunk, last - at);
    reduceTyped(op.element_type, op.reduction, sends, at, n,
                own + at * elementSize);
    for (uint64_t peer = 0; peer < ranks; ++peer)
      if (peer != r)
        std::memcpy(entries[peer].recv + at * elementSize,
                    own + at * elementSize, size_t(n * elementSize));
  }
}

// Rank |rank|'s own result of |op| into |out| (recvBytes long).
void directCollective(const kiln_hal_collective_op_t& op, int32_t rank,
                      const std::vector<const uint8_t*>& sends, uint8_t* out) {
  const uint64_t ranks = sends.size();
  const uint64_t count = op.element_count;
  const uint64_t elementSize = kiln_hal_element_type_size(op.element_type);
  switch (op.kind) {
    case KILN_HAL_COLLECTIVE_ALL_REDUCE:
      reduceTyped(op.element_type, op.reduction, sends, 0, count, out);
      break;
    case KILN_HAL_COLLECTIVE_REDUCE_SCATTER: {
      uint64_t chunk = count / ranks;
      reduceTyped(op.element_type, op.reduction, sends, uint64_t(rank) * chunk,
                  chunk, out);
      break;
    }
    case KILN_HAL_COLLECTIVE_ALL_GATHER:
      for (uint64_t r = 0; r < ranks; ++r)
        std::memcpy(out + r * count * elementSize, sends[r],
                    size_t(count * elementSize));
      break;
    case KILN_HAL_COLLECTIVE_ALL_TO_ALL: {
      uint64_t chunkBytes = count / ranks * elementSize;
      for (uint64_t r = 0; r < ranks; ++r)
        std::memcpy(out + r * chunkBytes,
                    sends[r] + uint64_t(rank) * chunkBytes, size_t(chunkBytes));
      break;
    }
    case KILN_HAL_COLLECTIVE_BROADCAST:
      std::memcpy(out, sends[size_t(op.root)], size_t(count * elementSize));
      break;
  }
}

kiln_status_t parallelThresholdFromEnv(uint64_t* out) {
  *out = KILN_LOCAL_COLLECTIVE_DEFAULT_PARALLEL_THRESHOLD;
  const char* text = std::getenv(KILN_LOCAL_COLLECTIVE_PARALLEL_THRESHOLD_ENV);
  if (!text || !*text) return nullptr;
  char* end = nullptr;
  errno = 0;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (errno || *end != '\0' || text[0] == '-' || text[0] == '+')
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "$%s='%s' is not a byte count (a decimal integer "
                            ">= 0)",
                            KILN_LOCAL_COLLECTIVE_PARALLEL_THRESHOLD_ENV, text);
  *out = value;
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

kiln_status_t CollectiveGroup::exchange(int32_t rank, const RoundEntry& entry,
                                        const std::function<bool()>& cancelled,
                                        std::vector<RoundEntry>* out) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    entries[size_t(rank)] = entry;
  }
  KILN_RETURN_IF_ERROR(barrier(cancelled));
  // Entries change again only after the round's closing barrier, which
  // every rank reaches after this copy.
  std::lock_guard<std::mutex> lock(mutex);
  *out = entries;
  return nullptr;
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

kiln_status_t CollectiveHub::createChannel(
    const kiln_hal_channel_params_t* params,
    std::shared_ptr<drivers::BlockCache> blocks,
    std::shared_ptr<drivers::WindowAborts> aborts,
    kiln_hal_channel_t** outChannel) {
  std::string key(static_cast<const char*>(params->id), params->id_length);
  key += "/" + std::to_string(params->count);
  std::shared_ptr<CollectiveGroup> group;
  std::lock_guard<std::mutex> lock(mutex);
  // Drop entries of groups that no longer exist.
  for (auto entry = groups.begin(); entry != groups.end();) {
    if (entry->second.expired()) entry = groups.erase(entry); else ++entry;
  }
  auto it = groups.find(key);
  if (it != groups.end()) group = it->second.lock();
  if (!group) {
    uint64_t threshold = 0;
    KILN_RETURN_IF_ERROR(parallelThresholdFromEnv(&threshold));
    group = std::make_shared<CollectiveGroup>(params->count, threshold);
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
  return newChannel(std::move(group), params->rank, std::move(blocks),
                    std::move(aborts), outChannel);
}

bool isLocalChannel(kiln_hal_channel_t* channel) {
  return channel && channel->resource.vtable == &kChannelVTable;
}

kiln_status_t validateCollective(const kiln_hal_collective_op_t& op,
                                 int32_t ranks) {
  uint64_t count = op.element_count;
  bool needsReduction = op.kind == KILN_HAL_COLLECTIVE_ALL_REDUCE ||
                        op.kind == KILN_HAL_COLLECTIVE_REDUCE_SCATTER;
  if (needsReduction && op.reduction == KILN_HAL_REDUCTION_NONE)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s needs a reduction", collectiveKindName(op.kind));
  if (needsReduction && op.element_type == KILN_HAL_ELEMENT_TYPE_I1 &&
      op.reduction == KILN_HAL_REDUCTION_AVG)
    return kiln_make_status(KILN_STATUS_UNIMPLEMENTED,
                            "%s: the local driver has no avg of i1 (logical) "
                            "values",
                            collectiveKindName(op.kind));
  bool splits = op.kind == KILN_HAL_COLLECTIVE_REDUCE_SCATTER ||
                op.kind == KILN_HAL_COLLECTIVE_ALL_TO_ALL;
  if (splits && count % uint64_t(ranks) != 0)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s of %llu elements does not split evenly over "
                            "%d ranks",
                            collectiveKindName(op.kind), (unsigned long long)count,
                            ranks);
  if (op.kind == KILN_HAL_COLLECTIVE_BROADCAST &&
      (op.root < 0 || op.root >= ranks))
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "broadcast root %d is not a rank of %d", op.root,
                            ranks);
  return nullptr;
}

kiln_status_t runCollective(kiln_hal_channel_t* base,
                            const kiln_hal_collective_op_t& op,
                            const uint8_t* send, uint64_t sendLength,
                            uint8_t* recv, uint64_t recvLength,
                            const std::function<bool()>& cancelled) {
  if (!isLocalChannel(base))
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "channel was not created by the local driver");
  CollectiveGroup& group = *cast(base)->group;
  const int32_t rank = base->rank;
  const int32_t ranks = base->count;
  const uint64_t elementSize = kiln_hal_element_type_size(op.element_type);
  const uint64_t sendBytes = op.element_count * elementSize;
  // Validate locally but still take part in the rounds, so that peers see
  // this rank's failure instead of waiting forever.
  kiln_status_t status = validateCollective(op, ranks);
  const uint64_t need = status ? 0 : recvBytes(op, ranks);
  if (!status && sendLength < sendBytes)
    status = kiln_make_status(KILN_STATUS_OUT_OF_RANGE,
                              "%s send range has %llu bytes, needs %llu",
                              collectiveKindName(op.kind),
                              (unsigned long long)sendLength,
                              (unsigned long long)sendBytes);
  if (!status && recvLength < need)
    status = kiln_make_status(KILN_STATUS_OUT_OF_RANGE,
                              "%s recv range has %llu bytes, needs %llu",
                              collectiveKindName(op.kind),
                              (unsigned long long)recvLength,
                              (unsigned long long)need);
  RoundEntry entry;
  entry.kind = RoundKind::Collective;
  entry.valid = status == nullptr;
  entry.op = op;
  entry.send = send;
  entry.sendLength = sendLength;
  entry.recv = recv;
  entry.recvLength = recvLength;
  std::vector<RoundEntry> entries;
  kiln_status_t roundStatus = group.exchange(rank, entry, cancelled, &entries);
  if (roundStatus) {
    kiln_status_free(status);
    return roundStatus;
  }
  bool peersOk = true;
  std::vector<const uint8_t*> sends;
  for (const RoundEntry& peer : entries) {
    peersOk = peersOk && peer.kind == RoundKind::Collective && peer.valid &&
              sameOp(peer.op, op);
    sends.push_back(peer.send);
  }
  if (!status && !peersOk)
    status = kiln_make_status(KILN_STATUS_FAILED_PRECONDITION,
                              "%s on rank %d: another rank of the %d-rank "
                              "group ran a different or invalid collective",
                              collectiveKindName(op.kind), rank, ranks);
  // Direct results go to scratch memory when the recv overlaps a send that
  // peers may still read; copied to recv after the closing barrier.
  std::vector<uint8_t> scratch;
  if (!status) {
    if (op.kind == KILN_HAL_COLLECTIVE_ALL_REDUCE &&
        sendBytes >= group.parallelThreshold &&
        parallelAllReduceSafe(entries, sendBytes)) {
      parallelAllReduce(op, rank, entries, sends);
    } else if (overlapsAnySend(recv, need, entries, sendBytes)) {
      scratch.resize(size_t(need));
      directCollective(op, rank, sends, scratch.data());
    } else {
      directCollective(op, rank, sends, recv);
    }
  }
  // Nobody returns (and lets its queue reuse send or recv) until every rank
  // finished reading sends and writing recvs.
  roundStatus = group.barrier(cancelled);
  if (roundStatus) {
    kiln_status_free(status);
    return roundStatus;
  }
  if (status) return status;
  if (!scratch.empty()) std::memcpy(recv, scratch.data(), size_t(need));
  return nullptr;
}

}  // namespace kiln::local
