#include "drivers/hip/hip_comm_window.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>
#include <random>
#include <string>
#include <thread>

#include "drivers/hip/hip_buffer.h"
#include "drivers/hip/status_util.h"

namespace kiln::hip {

// One rank's window memory: its own data and signals, its mappings of the
// peers' memory opened from IPC handles, and its mapping of the group's
// shared-memory segment (the abort word, then a "closed" word per rank).
struct CommWindowMemory final : drivers::RetiredMemory::Entry {
  std::shared_ptr<const DeviceContext> context;
  int32_t rank = 0;
  int32_t count = 0;
  void *data = nullptr;
  void *signals = nullptr;
  std::vector<void *> imports;
  uint64_t *segment = nullptr; // host address (null: not mapped)
  size_t segmentBytes = 0;
  bool registered = false;       // pinned and mapped for the GPU
  void *segmentDevice = nullptr; // the segment's address for kernels

  uint64_t *abortWord() const { return segment; }
  uint64_t *closedWord(int32_t r) const { return segment + 1 + r; }

  // Whether no rank maps this rank's memory any more (every rank closed its
  // window, or the segment that would tell was never mapped).
  bool closedByAll() const override {
    if (!segment)
      return true;
    for (int32_t r = 0; r < count; ++r)
      if (__atomic_load_n(closedWord(r), __ATOMIC_ACQUIRE) == 0)
        return false;
    return true;
  }

  // Unmaps the peers' memory and marks this rank closed.
  void close() {
    if (!imports.empty()) {
      kiln_status_t status = context->bind();
      if (!status)
        for (void *pointer : imports)
          context->platform->ipcCloseMemHandle(pointer);
      freeStatus(status);
      imports.clear();
    }
    if (segment)
      __atomic_store_n(closedWord(rank), uint64_t{1}, __ATOMIC_RELEASE);
  }

  ~CommWindowMemory() override {
    kiln_status_t status = context->bind();
    Platform &platform = *context->platform;
    if (!status) {
      for (void *pointer : imports)
        platform.ipcCloseMemHandle(pointer);
      if (data)
        platform.free(data);
      if (signals)
        platform.free(signals);
      if (registered)
        platform.hostUnregister(segment);
    }
    freeStatus(status);
    if (segment)
      munmap(segment, segmentBytes);
  }
};

void drainRetiredWindows(const DeviceContext &context) {
  context.retiredWindows->drain(
      std::chrono::duration_cast<std::chrono::milliseconds>(kRetiredWindowWait),
      [&](const drivers::RetiredMemory::Entry &entry) {
        std::fprintf(
            stderr,
            "kiln hip://%d: freeing the memory of a released window "
            "while some of its %d ranks have not closed it after "
            "%lld s (a peer process that still maps it must not "
            "use it)\n",
            context.ordinal, static_cast<const CommWindowMemory &>(entry).count,
            (long long)std::chrono::duration_cast<std::chrono::seconds>(
                kRetiredWindowWait)
                .count());
      });
}

namespace {

constexpr uint64_t kRecordMagic = 0x6b696c6e2d77696eull; // "kiln-win"

// What each rank tells the others when a window is created.
struct WindowRecord {
  uint64_t magic;
  uint64_t size;
  uint32_t signalCount;
  uint32_t ok; // 1: allocated and exported; else |error| says why
  uint64_t process;
  int32_t ordinal;
  uint32_t reserved;
  uint64_t data;
  uint64_t signals;
  IpcMemHandle dataHandle;
  IpcMemHandle signalsHandle;
  char host[48];
  char segment[48]; // rank 0: the segment's shm name
  char error[160];
};

// The outcome of a rank's mappings.
struct Outcome {
  uint32_t ok;
  char error[124];
};
static_assert(sizeof(Outcome) == 128, "outcomes are exchanged as 128 bytes");

// A random token of this process (peers of one process use each other's
// addresses; others open IPC handles).
uint64_t processToken() {
  static const uint64_t token = [] {
    std::random_device random;
    return (uint64_t(random()) << 32) ^ random() ^ uint64_t(getpid());
  }();
  return token;
}

// What names this host for IPC: the kernel's boot id, else the host name.
void hostName(char (&out)[48]) {
  std::memset(out, 0, sizeof(out));
  std::ifstream file("/proc/sys/kernel/random/boot_id");
  std::string id;
  if (file && std::getline(file, id) && !id.empty()) {
    std::snprintf(out, sizeof(out), "boot:%s", id.c_str());
    return;
  }
  char name[40] = {0};
  gethostname(name, sizeof(name) - 1);
  std::snprintf(out, sizeof(out), "host:%s", name);
}

void setError(char *out, size_t capacity, kiln_status_t status) {
  std::snprintf(out, capacity, "%s", statusMessage(status));
  freeStatus(status);
}

size_t segmentBytesFor(int32_t count) {
  size_t page = size_t(sysconf(_SC_PAGESIZE));
  size_t bytes = 8 * (1 + size_t(count));
  return (bytes + page - 1) / page * page;
}

// Creates (rank 0) or opens the group's segment and maps it.
kiln_status_t mapSegment(CommWindowMemory &memory, const char *name,
                         bool create) {
  size_t bytes = segmentBytesFor(memory.count);
  int fd = create ? shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600)
                  : shm_open(name, O_RDWR, 0);
  if (fd < 0)
    return makeStatus(KILN_STATUS_UNAVAILABLE,
                      "cannot %s the window's shared memory segment '%s': %s "
                      "(the ranks of a window must share /dev/shm: one host, "
                      "one IPC namespace)",
                      create ? "create" : "open", name, std::strerror(errno));
  struct stat info = {};
  bool sized = create ? ftruncate(fd, off_t(bytes)) == 0
                      : fstat(fd, &info) == 0 && size_t(info.st_size) >= bytes;
  void *mapping =
      sized ? mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
            : MAP_FAILED;
  int error = errno;
  ::close(fd);
  if (mapping == MAP_FAILED)
    return makeStatus(KILN_STATUS_UNAVAILABLE,
                      "cannot map the window's shared memory segment '%s' "
                      "(%zu bytes): %s",
                      name, bytes, sized ? std::strerror(error) : "wrong size");
  memory.segment = static_cast<uint64_t *>(mapping);
  memory.segmentBytes = bytes;
  return nullptr;
}

// Pins the segment's mapping for the GPU and finds its device address.
kiln_status_t registerSegment(CommWindowMemory &memory) {
  const DeviceContext &context = *memory.context;
  Platform &platform = *context.platform;
  KILN_HIP_RETURN_IF_ERROR(
      context.check(platform.hostRegister(memory.segment, memory.segmentBytes),
                    "hipHostRegister (window segment)"));
  memory.registered = true;
  return context.check(
      platform.hostGetDevicePointer(&memory.segmentDevice, memory.segment),
      "hipHostGetDevicePointer (window segment)");
}

// Allocates, zeroes and exports this rank's memory; fills |record|.
kiln_status_t allocateAndExport(CommWindowMemory &memory,
                                const kiln_hal_window_params_t &params,
                                WindowRecord *record) {
  const DeviceContext &context = *memory.context;
  Platform &platform = *context.platform;
  uint64_t signalBytes = 8 * std::max<uint64_t>(params.signal_count, 1);
  KILN_HIP_RETURN_IF_ERROR(
      context.check(platform.malloc(&memory.data, params.size),
                    "hipMalloc (window data)", KILN_STATUS_RESOURCE_EXHAUSTED));
  KILN_HIP_RETURN_IF_ERROR(context.check(
      platform.mallocSignals(&memory.signals, signalBytes),
      "hipMalloc (window signals)", KILN_STATUS_RESOURCE_EXHAUSTED));
  KILN_HIP_RETURN_IF_ERROR(context.check(
      platform.memsetD8Async(memory.data, 0, params.size, nullptr),
      "hipMemsetAsync (window data)"));
  KILN_HIP_RETURN_IF_ERROR(context.check(
      platform.memsetD8Async(memory.signals, 0, signalBytes, nullptr),
      "hipMemsetAsync (window signals)"));
  KILN_HIP_RETURN_IF_ERROR(context.check(platform.streamSynchronize(nullptr),
                                         "hipStreamSynchronize (window)"));
  KILN_HIP_RETURN_IF_ERROR(
      context.check(platform.ipcGetMemHandle(&record->dataHandle, memory.data),
                    "hipIpcGetMemHandle (window data)"));
  KILN_HIP_RETURN_IF_ERROR(context.check(
      platform.ipcGetMemHandle(&record->signalsHandle, memory.signals),
      "hipIpcGetMemHandle (window signals)"));
  record->data = uint64_t(uintptr_t(memory.data));
  record->signals = uint64_t(uintptr_t(memory.signals));
  return nullptr;
}

// Maps every peer's memory (|table|: the peer table's 2 x count addresses)
// and the segment.
kiln_status_t mapPeers(CommWindowMemory &memory,
                       const std::vector<WindowRecord> &records,
                       std::vector<uint64_t> *table) {
  const DeviceContext &context = *memory.context;
  Platform &platform = *context.platform;
  int32_t count = memory.count;
  if (memory.rank != 0) {
    char name[sizeof(records[0].segment) + 1] = {0};
    std::memcpy(name, records[0].segment, sizeof(records[0].segment));
    KILN_HIP_RETURN_IF_ERROR(mapSegment(memory, name, /*create=*/false));
  }
  KILN_HIP_RETURN_IF_ERROR(registerSegment(memory));
  for (int32_t p = 0; p < count; ++p) {
    const WindowRecord &peer = records[size_t(p)];
    uint64_t data = peer.data, signals = peer.signals;
    if (p != memory.rank && peer.process != processToken()) {
      void *pointer = nullptr;
      KILN_HIP_RETURN_IF_ERROR(annotate(
          context.check(platform.ipcOpenMemHandle(&pointer, peer.dataHandle),
                        "hipIpcOpenMemHandle"),
          "mapping the window data of rank %d (hip://%d of another process)", p,
          peer.ordinal));
      memory.imports.push_back(pointer);
      data = uint64_t(uintptr_t(pointer));
      KILN_HIP_RETURN_IF_ERROR(annotate(
          context.check(platform.ipcOpenMemHandle(&pointer, peer.signalsHandle),
                        "hipIpcOpenMemHandle"),
          "mapping the window signals of rank %d (hip://%d of another "
          "process)",
          p, peer.ordinal));
      memory.imports.push_back(pointer);
      signals = uint64_t(uintptr_t(pointer));
    } else if (p != memory.rank && peer.ordinal != context.ordinal) {
      DriverShared &shared = *context.driver;
      std::lock_guard<std::mutex> lock(shared.mutex);
      if (!shared.peerAccess.count({context.ordinal, peer.ordinal}))
        return makeStatus(
            KILN_STATUS_FAILED_PRECONDITION,
            "hip://%d has no peer access to hip://%d (rank %d of the window's "
            "channel in this process): the GPUs cannot reach each other's "
            "memory directly, or peer_access=0 turned it off",
            context.ordinal, peer.ordinal, p);
    }
    (*table)[size_t(p)] = data;
    (*table)[size_t(count + p)] = signals;
  }
  return nullptr;
}

struct CommWindow {
  kiln_hal_window_t base;
  std::shared_ptr<const DeviceContext> context;
  std::shared_ptr<CommWindowMemory> memory;
  kiln_hal_buffer_t *data = nullptr;
  kiln_hal_buffer_t *signals = nullptr;
  kiln_hal_buffer_t *peerTable = nullptr;
};

// Releases |memory|: aborts the group's waiting kernels (|abort|), unmaps
// the peers, marks this rank closed and retires the memory.
void releaseMemory(const DeviceContext &context,
                   std::shared_ptr<CommWindowMemory> memory, bool abort) {
  if (abort && memory->segment)
    __atomic_store_n(memory->abortWord(), uint64_t{1}, __ATOMIC_RELEASE);
  memory->close();
  context.retiredWindows->retire(std::move(memory));
}

void destroyWindow(kiln_hal_resource_t *resource) {
  auto *window = reinterpret_cast<CommWindow *>(resource);
  for (kiln_hal_buffer_t *buffer :
       {window->data, window->signals, window->peerTable})
    if (buffer)
      kiln_hal_resource_release(&buffer->resource);
  if (window->memory)
    releaseMemory(*window->context, std::move(window->memory),
                  /*abort=*/true);
  delete window;
}

const kiln_hal_window_vtable_t kWindowVTable = {destroyWindow};

} // namespace

kiln_status_t createCommWindow(std::shared_ptr<const DeviceContext> context,
                               Comm &comm, int32_t rank, int32_t count,
                               const kiln_hal_window_params_t *params,
                               kiln_hal_window_t **outWindow) {
  auto memory = std::make_shared<CommWindowMemory>();
  memory->context = context;
  memory->rank = rank;
  memory->count = count;

  // 1. This rank's memory (and rank 0's segment). A failure still takes
  // part in the exchange, so that every rank fails alike.
  WindowRecord own;
  std::memset(&own, 0, sizeof(own));
  own.magic = kRecordMagic;
  own.size = params->size;
  own.signalCount = params->signal_count;
  own.process = processToken();
  own.ordinal = context->ordinal;
  hostName(own.host);
  std::string segmentName;
  kiln_status_t local = context->bind();
  if (!local)
    local = allocateAndExport(*memory, *params, &own);
  if (!local && rank == 0) {
    std::random_device random;
    char name[48];
    std::snprintf(name, sizeof(name), "/kiln-window-%d-%08x%08x", int(getpid()),
                  unsigned(random()), unsigned(random()));
    segmentName = name;
    std::snprintf(own.segment, sizeof(own.segment), "%s", name);
    local = mapSegment(*memory, name, /*create=*/true);
  }
  own.ok = local ? 0 : 1;
  if (local)
    setError(own.error, sizeof(own.error), cloneStatus(local));
  auto unlinkSegment = [&] {
    if (!segmentName.empty())
      shm_unlink(segmentName.c_str());
    segmentName.clear();
  };

  // 2. Exchange the records.
  std::vector<WindowRecord> records(static_cast<size_t>(count));
  kiln_status_t status =
      allGatherOnHost(context, comm, rank, count, &own, sizeof(own),
                      records.data(), "creating a window");
  if (status) {
    // No rank maps this rank's memory yet (a rank that got further fails
    // the next exchange before it uses what it mapped).
    unlinkSegment();
    freeStatus(local);
    return status;
  }
  std::string problem;
  for (int32_t r = 0; r < count && problem.empty(); ++r) {
    const WindowRecord &peer = records[size_t(r)];
    char text[400] = {0};
    if (peer.magic != kRecordMagic)
      std::snprintf(text, sizeof(text), "rank %d sent no window record", r);
    else if (!peer.ok)
      std::snprintf(text, sizeof(text),
                    "rank %d (hip://%d) could not allocate and export its "
                    "window: %.*s",
                    r, peer.ordinal, int(sizeof(peer.error)), peer.error);
    else if (peer.size != params->size ||
             peer.signalCount != params->signal_count)
      std::snprintf(text, sizeof(text),
                    "window parameters differ between ranks: rank %d asks "
                    "for %llu bytes and %u signal slots, rank %d for %llu "
                    "and %u",
                    rank, (unsigned long long)params->size,
                    params->signal_count, r, (unsigned long long)peer.size,
                    peer.signalCount);
    else if (std::strncmp(peer.host, records[0].host, sizeof(peer.host)))
      std::snprintf(text, sizeof(text),
                    "rank %d runs on another host than rank 0 (%.*s, %.*s): "
                    "windows map their peers' memory with IPC handles, which "
                    "work within one host",
                    r, int(sizeof(peer.host)), peer.host,
                    int(sizeof(peer.host)), records[0].host);
    problem = text;
  }
  if (!problem.empty()) {
    // Every rank saw the same records and fails here: nothing was mapped,
    // and |memory| is freed on return.
    unlinkSegment();
    freeStatus(local);
    return makeStatus(KILN_STATUS_FAILED_PRECONDITION,
                      "creating a window on rank %d of a %d-rank channel "
                      "(hip://%d): %s",
                      rank, count, context->ordinal, problem.c_str());
  }
  freeStatus(local); // every rank reported OK, this one included

  // 3. Map the peers and the segment; 4. agree on the outcome.
  std::vector<uint64_t> table(2 * size_t(count) + 1);
  local = mapPeers(*memory, records, &table);
  Outcome mine;
  std::memset(&mine, 0, sizeof(mine));
  mine.ok = local ? 0 : 1;
  if (local)
    setError(mine.error, sizeof(mine.error), cloneStatus(local));
  std::vector<Outcome> outcomes(static_cast<size_t>(count));
  status = allGatherOnHost(context, comm, rank, count, &mine, sizeof(mine),
                           outcomes.data(), "creating a window");
  bool exchanged = status == nullptr;
  unlinkSegment(); // every rank has opened it (or failed to)
  if (!status) {
    for (int32_t r = 0; r < count && !local && !status; ++r)
      if (!outcomes[size_t(r)].ok)
        status = makeStatus(KILN_STATUS_FAILED_PRECONDITION,
                            "creating a window: rank %d could not map its "
                            "peers' memory: %.*s",
                            r, int(sizeof(outcomes[r].error)),
                            outcomes[size_t(r)].error);
  }
  if (local || status) {
    if (exchanged) {
      // Every rank knows the window failed: each unmaps its peers, and
      // after one more exchange (every rank has) the memory is freed.
      memory->close();
      uint8_t unmapped = 1;
      std::vector<uint8_t> all(static_cast<size_t>(count));
      kiln_status_t barrier =
          allGatherOnHost(context, comm, rank, count, &unmapped, 1, all.data(),
                          "discarding a window that failed");
      if (barrier) {
        freeStatus(barrier);
        context->retiredWindows->retire(std::move(memory));
      }
    } else {
      // The exchange failed: peers may have mapped this rank's memory;
      // it goes when they say they closed it (or the device goes).
      memory->close();
      context->retiredWindows->retire(std::move(memory));
    }
    if (!local)
      return status;
    freeStatus(status);
    return annotate(local,
                    "creating a window on rank %d of a %d-rank "
                    "channel (hip://%d)",
                    rank, count, context->ordinal);
  }
  table[2 * size_t(count)] = uint64_t(uintptr_t(memory->segmentDevice));

  auto *window = new (std::nothrow) CommWindow();
  if (!window) {
    releaseMemory(*context, std::move(memory), /*abort=*/true);
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED,
                      "out of memory creating a window");
  }
  kiln_hal_resource_initialize(&kWindowVTable, &window->base.resource);
  window->context = context;
  window->memory = memory;
  uint64_t signalBytes = 8 * std::max<uint64_t>(params->signal_count, 1);
  // The window's memory goes with |memory|, not with these buffers; the
  // plain allocator aligns it to 256 bytes.
  const kiln_hal_buffer_usage_t usage =
      KILN_HAL_BUFFER_USAGE_TRANSFER | KILN_HAL_BUFFER_USAGE_DISPATCH_STORAGE;
  const kiln_hal_external_release_t none = {nullptr, nullptr};
  status = wrapDeviceMemory(context, memory->data, params->size, usage,
                            /*alignment=*/256, none, &window->data);
  if (!status)
    status = wrapDeviceMemory(context, memory->signals, signalBytes, usage,
                              /*alignment=*/256, none, &window->signals);
  if (!status)
    status = createFilledBuffer(context, 8 * table.size(), table.data(),
                                &window->peerTable);
  if (status) {
    destroyWindow(&window->base.resource);
    return status;
  }
  // A failed submission on this rank's device aborts the group.
  context->windowAborts->add(
      std::shared_ptr<uint64_t>(memory, memory->abortWord()));
  window->base.size = params->size;
  window->base.signal_count = params->signal_count;
  window->base.data = window->data;
  window->base.signals = window->signals;
  window->base.peer_table = window->peerTable;
  *outWindow = &window->base;
  return nullptr;
}

} // namespace kiln::hip
