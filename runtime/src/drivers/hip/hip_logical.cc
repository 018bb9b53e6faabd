#include "drivers/hip/hip_logical.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "drivers/hip/hip_buffer.h"
#include "drivers/hip/status_util.h"

namespace kiln::hip {

namespace {

constexpr char kIdPrefix[] = "kiln-logical:";
constexpr size_t kIdLength = 64;

// A rank's window memory: its data and signal buffers, released when the
// last window holding it goes.
struct RankMemory {
  std::shared_ptr<const DeviceContext> context;
  kiln_hal_buffer_t* data = nullptr;
  kiln_hal_buffer_t* signals = nullptr;
  // Pinned host memory that kernels read at the same address: rank 0's is
  // the group's abort word (the peer table's last entry), set when any
  // rank releases its window or a rank's device fails a submission.
  uint64_t* abort = nullptr;
  ~RankMemory() {
    if (data) kiln_hal_resource_release(&data->resource);
    if (signals) kiln_hal_resource_release(&signals->resource);
    if (abort) {
      freeStatus(context->bind());
      context->platform->hostFree(abort);
    }
  }
};

// One rank's part of a round (a split or a window creation).
struct Part {
  // Split.
  int32_t color = 0, key = 0;
  // Window: its parameters and memory (null if this rank's allocation
  // failed, so that every rank fails alike).
  kiln_hal_window_params_t params = {};
  std::shared_ptr<RankMemory> memory;
};

struct Round {
  std::vector<std::shared_ptr<Part>> parts;  // by rank
  int32_t arrived = 0, left = 0;
  // Split: the sub-group of each color, made by its first rank.
  std::shared_ptr<std::map<int32_t, std::shared_ptr<LogicalGroup>>> children;
};

}  // namespace

struct LogicalGroup {
  int32_t count = 0;
  std::mutex mutex;
  std::condition_variable changed;
  int32_t joined = 0;
  // Rounds by sequence number; each rank counts its own rounds.
  std::map<uint64_t, Round> rounds;
  std::vector<uint64_t> nextRound;  // by rank
};

namespace {

// Posts |mine| as rank |rank|'s part of its next round and waits for every
// rank's; returns all parts by rank.
kiln_status_t exchange(
    LogicalGroup& group, int32_t rank, std::shared_ptr<Part> mine,
    std::vector<std::shared_ptr<Part>>* all,
    std::shared_ptr<std::map<int32_t, std::shared_ptr<LogicalGroup>>>*
        children = nullptr) {
  std::unique_lock<std::mutex> lock(group.mutex);
  uint64_t sequence = group.nextRound[size_t(rank)]++;
  Round& round = group.rounds[sequence];
  if (round.parts.empty()) round.parts.resize(size_t(group.count));
  round.parts[size_t(rank)] = std::move(mine);
  ++round.arrived;
  group.changed.notify_all();
  bool done =
      group.changed.wait_for(lock, std::chrono::seconds(kLogicalWaitSeconds),
                             [&] { return round.arrived == group.count; });
  if (!done)
    return makeStatus(KILN_STATUS_DEADLINE_EXCEEDED,
                      "rank %d of a %d-rank logical hip channel waited %d s "
                      "for the other ranks (%d arrived) to split it or make "
                      "a window",
                      rank, group.count, kLogicalWaitSeconds, round.arrived);
  *all = round.parts;
  if (children) {
    if (!round.children)
      round.children =
          std::make_shared<std::map<int32_t, std::shared_ptr<LogicalGroup>>>();
    *children = round.children;
  }
  if (++round.left == group.count) group.rounds.erase(sequence);
  return nullptr;
}

std::shared_ptr<LogicalGroup> newGroup(int32_t count) {
  auto group = std::make_shared<LogicalGroup>();
  group->count = count;
  group->nextRound.assign(size_t(count), 0);
  return group;
}

struct LogicalWindow {
  kiln_hal_window_t base;
  std::vector<std::shared_ptr<RankMemory>> memory;  // every rank's
  kiln_hal_buffer_t* peerTable = nullptr;
};

void destroyWindow(kiln_hal_resource_t* resource) {
  auto* window = reinterpret_cast<LogicalWindow*>(resource);
  // A rank that leaves aborts the kernels that still wait for it.
  if (!window->memory.empty())
    __atomic_store_n(window->memory[0]->abort, uint64_t{1}, __ATOMIC_RELEASE);
  if (window->peerTable)
    kiln_hal_resource_release(&window->peerTable->resource);
  delete window;
}

const kiln_hal_window_vtable_t kWindowVTable = {destroyWindow};

uint8_t* storageOf(kiln_hal_buffer_t* buffer) {
  return asHipBuffer(buffer)->storage.load();
}

}  // namespace

bool isLogicalChannelId(const void* id, size_t length) {
  return length == kIdLength &&
         std::memcmp(id, kIdPrefix, sizeof(kIdPrefix) - 1) == 0;
}

kiln_status_t createLogicalChannelId(uint8_t* outId, size_t capacity,
                                     size_t* outLength) {
  if (capacity < kIdLength)
    return makeStatus(KILN_STATUS_OUT_OF_RANGE,
                      "a logical hip channel id has %zu bytes; capacity is "
                      "%zu",
                      kIdLength, capacity);
  static std::atomic<uint64_t> counter{0};
  std::random_device random;
  std::memset(outId, 0, kIdLength);
  std::memcpy(outId, kIdPrefix, sizeof(kIdPrefix) - 1);
  uint64_t words[3] = {counter.fetch_add(1),
                       (uint64_t(random()) << 32) | random(),
                       (uint64_t(random()) << 32) | random()};
  std::memcpy(outId + sizeof(kIdPrefix) - 1, words, sizeof(words));
  *outLength = kIdLength;
  return nullptr;
}

kiln_status_t joinLogicalGroup(const DeviceContext& context, const void* id,
                               size_t idLength, int32_t rank, int32_t count,
                               std::shared_ptr<LogicalGroup>* outGroup) {
  if (count < 1 || rank < 0 || rank >= count)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "rank %d is not a rank of a %d-rank channel", rank,
                      count);
  std::string key(static_cast<const char*>(id), idLength);
  std::shared_ptr<LogicalGroup> group;
  {
    DriverShared& shared = *context.driver;
    std::lock_guard<std::mutex> lock(shared.mutex);
    auto& slot = shared.logicalGroups[key];
    group = slot.lock();
    if (!group) {
      group = newGroup(count);
      slot = group;
    }
  }
  if (group->count != count)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "rank %d joins a logical hip channel of %d ranks as "
                      "one of %d",
                      rank, group->count, count);
  std::unique_lock<std::mutex> lock(group->mutex);
  ++group->joined;
  group->changed.notify_all();
  bool done =
      group->changed.wait_for(lock, std::chrono::seconds(kLogicalWaitSeconds),
                              [&] { return group->joined >= group->count; });
  if (!done) {
    --group->joined;
    return makeStatus(KILN_STATUS_DEADLINE_EXCEEDED,
                      "rank %d of a %d-rank logical hip channel waited %d s "
                      "for the other ranks to join (%d joined)",
                      rank, count, kLogicalWaitSeconds, group->joined + 1);
  }
  *outGroup = std::move(group);
  return nullptr;
}

kiln_status_t splitLogicalGroup(LogicalGroup& group, int32_t rank,
                                int32_t color, int32_t key,
                                std::shared_ptr<LogicalGroup>* outGroup,
                                int32_t* outRank, int32_t* outCount) {
  auto mine = std::make_shared<Part>();
  mine->color = color;
  mine->key = key;
  std::vector<std::shared_ptr<Part>> all;
  std::shared_ptr<std::map<int32_t, std::shared_ptr<LogicalGroup>>> children;
  KILN_HIP_RETURN_IF_ERROR(exchange(group, rank, mine, &all, &children));
  if (color < 0)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "channel_split color %d is negative: rank %d joins no "
                      "sub-group (it took part in the split so that the "
                      "other ranks can go on)",
                      color, rank);
  std::vector<std::pair<std::pair<int32_t, int32_t>, int32_t>> members;
  for (int32_t r = 0; r < group.count; ++r)
    if (all[size_t(r)]->color == color)
      members.push_back({{all[size_t(r)]->key, r}, r});
  std::sort(members.begin(), members.end());
  int32_t newRank = 0;
  for (size_t i = 0; i < members.size(); ++i)
    if (members[i].second == rank) newRank = int32_t(i);
  {
    // The sub-group of each color is made once, by its first rank here.
    std::lock_guard<std::mutex> lock(group.mutex);
    auto& child = (*children)[color];
    if (!child) child = newGroup(int32_t(members.size()));
    *outGroup = child;
  }
  // Every member holds the sub-group already: joining is immediate.
  std::unique_lock<std::mutex> lock((*outGroup)->mutex);
  ++(*outGroup)->joined;
  *outRank = newRank;
  *outCount = int32_t(members.size());
  return nullptr;
}

kiln_status_t createLogicalWindow(std::shared_ptr<const DeviceContext> context,
                                  LogicalGroup& group, int32_t rank,
                                  const kiln_hal_window_params_t* params,
                                  kiln_hal_window_t** outWindow) {
  // This rank's memory first; a failed allocation still takes part in the
  // round so that every rank fails alike.
  auto mine = std::make_shared<Part>();
  mine->params = *params;
  kiln_status_t allocation = context->bind();
  auto memory = std::make_shared<RankMemory>();
  memory->context = context;
  if (!allocation) {
    void* word = nullptr;
    allocation = context->check(context->platform->hostMalloc(&word, 8),
                                "hipHostMalloc (window abort word)",
                                KILN_STATUS_RESOURCE_EXHAUSTED);
    memory->abort = static_cast<uint64_t*>(word);
    if (memory->abort) *memory->abort = 0;
  }
  if (!allocation)
    allocation =
        createFilledBuffer(context, params->size, nullptr, &memory->data);
  if (!allocation)
    allocation = createFilledBuffer(
        context, 8 * std::max<uint64_t>(params->signal_count, 1), nullptr,
        &memory->signals);
  if (!allocation) mine->memory = memory;
  std::vector<std::shared_ptr<Part>> all;
  kiln_status_t status = exchange(group, rank, mine, &all);
  if (status) {
    freeStatus(allocation);
    return status;
  }
  if (allocation) return allocation;
  for (int32_t r = 0; r < group.count; ++r) {
    const Part& part = *all[size_t(r)];
    if (!part.memory)
      return makeStatus(KILN_STATUS_FAILED_PRECONDITION,
                        "rank %d of the logical hip channel could not "
                        "allocate its window",
                        r);
    if (part.params.size != params->size ||
        part.params.signal_count != params->signal_count)
      return makeStatus(
          KILN_STATUS_FAILED_PRECONDITION,
          "window parameters differ between ranks: rank %d "
          "asks for %llu bytes and %u signal slots, rank %d for "
          "%llu and %u",
          rank, (unsigned long long)params->size, params->signal_count, r,
          (unsigned long long)part.params.size, part.params.signal_count);
  }
  auto* window = new (std::nothrow) LogicalWindow();
  if (!window)
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED,
                      "out of memory creating a window");
  kiln_hal_resource_initialize(&kWindowVTable, &window->base.resource);
  std::vector<uint64_t> table(2 * size_t(group.count) + 1);
  for (int32_t r = 0; r < group.count; ++r) {
    window->memory.push_back(all[size_t(r)]->memory);
    table[size_t(r)] =
        uint64_t(uintptr_t(storageOf(all[size_t(r)]->memory->data)));
    table[size_t(group.count + r)] =
        uint64_t(uintptr_t(storageOf(all[size_t(r)]->memory->signals)));
  }
  table[2 * size_t(group.count)] = uint64_t(uintptr_t(all[0]->memory->abort));
  // A failed submission on this rank's device aborts the group.
  context->windowAborts->add(
      std::shared_ptr<uint64_t>(all[0]->memory, all[0]->memory->abort));
  status = createFilledBuffer(context, 8 * table.size(), table.data(),
                              &window->peerTable);
  if (status) {
    destroyWindow(&window->base.resource);
    return status;
  }
  window->base.size = params->size;
  window->base.signal_count = params->signal_count;
  window->base.data = memory->data;
  window->base.signals = memory->signals;
  window->base.peer_table = window->peerTable;
  *outWindow = &window->base;
  return nullptr;
}

}  // namespace kiln::hip
