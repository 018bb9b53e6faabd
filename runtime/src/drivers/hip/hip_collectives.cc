#include "drivers/hip/hip_collectives.h"

#include <chrono>
#include <cstring>
#include <new>
#include <string>
#include <thread>

#include "drivers/common/collective_names.h"
#include "drivers/hip/hip_comm_window.h"
#include "drivers/hip/hip_logical.h"

namespace kiln::hip {
namespace {

// ncclCommSplit's color for "this rank joins no new communicator".
constexpr int kNcclSplitNoColor = -1;

// The per-collective argument record the ranks exchange (collective_checks).
struct Signature {
  uint32_t valid;  // 1: the rank's arguments passed its local checks
  uint32_t kind;
  uint32_t reduction;
  uint32_t elementType;
  uint64_t elementCount;
  int32_t root;
  uint32_t reserved;
};
static_assert(sizeof(Signature) == 32, "signatures are exchanged as 32 bytes");

struct HipChannel {
  kiln_hal_channel_t base;
  std::shared_ptr<const DeviceContext> context;
  std::shared_ptr<Comm> comm;             // null on logical devices
  std::shared_ptr<LogicalGroup> logical;  // logical devices' channels
  std::string member;  // key in DriverShared::channelMembers ("" if none)
  // Signature exchange buffers, made on first use: device memory for the
  // all-gather (count signatures) and pinned host memory for the result
  // (count signatures, then this rank's own).
  std::mutex checkMutex;
  void* deviceSignatures = nullptr;
  void* hostSignatures = nullptr;
};

void destroyChannel(kiln_hal_resource_t* resource);
kiln_status_t splitChannel(kiln_hal_channel_t* base, int32_t color,
                           int32_t key, kiln_hal_channel_t** outChannel);
kiln_status_t createWindow(kiln_hal_channel_t* base,
                           const kiln_hal_window_params_t* params,
                           kiln_hal_window_t** outWindow);
const kiln_hal_channel_vtable_t kChannelVTable = {destroyChannel, splitChannel,
                                                  createWindow};

HipChannel* asHipChannel(kiln_hal_channel_t* channel) {
  if (!channel || channel->resource.vtable != &kChannelVTable) return nullptr;
  return reinterpret_cast<HipChannel*>(channel);
}

using drivers::collectiveKindName;
using drivers::reductionName;

struct TypeInfo {
  const char* name;
  uint64_t size;
  int nccl;  // -1: NCCL has no such type
};

TypeInfo typeInfo(uint32_t type) {
  switch (type) {
    case KILN_HAL_ELEMENT_TYPE_I1: return {"i1", 1, -1};
    case KILN_HAL_ELEMENT_TYPE_I8: return {"i8", 1, ncclInt8};
    case KILN_HAL_ELEMENT_TYPE_I16: return {"i16", 2, -1};
    case KILN_HAL_ELEMENT_TYPE_I32: return {"i32", 4, ncclInt32};
    case KILN_HAL_ELEMENT_TYPE_I64: return {"i64", 8, ncclInt64};
    case KILN_HAL_ELEMENT_TYPE_U8: return {"u8", 1, ncclUint8};
    case KILN_HAL_ELEMENT_TYPE_U16: return {"u16", 2, -1};
    case KILN_HAL_ELEMENT_TYPE_U32: return {"u32", 4, ncclUint32};
    case KILN_HAL_ELEMENT_TYPE_U64: return {"u64", 8, ncclUint64};
    case KILN_HAL_ELEMENT_TYPE_F16: return {"f16", 2, ncclFloat16};
    case KILN_HAL_ELEMENT_TYPE_BF16: return {"bf16", 2, ncclBfloat16};
    case KILN_HAL_ELEMENT_TYPE_F32: return {"f32", 4, ncclFloat32};
    case KILN_HAL_ELEMENT_TYPE_F64: return {"f64", 8, ncclFloat64};
  }
  return {"?", 0, -1};
}

int ncclReduction(uint32_t reduction) {
  switch (reduction) {
    case KILN_HAL_REDUCTION_SUM: return ncclSum;
    case KILN_HAL_REDUCTION_PROD: return ncclProd;
    case KILN_HAL_REDUCTION_MIN: return ncclMin;
    case KILN_HAL_REDUCTION_MAX: return ncclMax;
    case KILN_HAL_REDUCTION_AVG: return ncclAvg;
  }
  return -1;
}

bool isReduction(uint32_t kind) {
  return kind == KILN_HAL_COLLECTIVE_ALL_REDUCE ||
         kind == KILN_HAL_COLLECTIVE_REDUCE_SCATTER;
}

std::string describe(const Signature& s) {
  std::string text = collectiveKindName(s.kind);
  text += "(";
  if (isReduction(s.kind)) text += std::string(reductionName(s.reduction)) + ", ";
  text += std::string(typeInfo(s.elementType).name) + ", " +
          std::to_string(s.elementCount) + " elements";
  if (s.kind == KILN_HAL_COLLECTIVE_BROADCAST)
    text += ", root " + std::to_string(s.root);
  return text + ")";
}

// The library of |context|'s platform, loaded once per driver.
kiln_status_t library(const DeviceContext& context,
                      std::shared_ptr<const NcclLibrary>* out) {
  DriverShared& shared = *context.driver;
  std::lock_guard<std::mutex> lock(shared.mutex);
  if (!shared.nccl)
    KILN_HIP_RETURN_IF_ERROR(
        loadNcclLibrary(context.platform->name(), &shared.nccl));
  *out = shared.nccl;
  return nullptr;
}

// A channel over |comm| (NCCL/RCCL), or over |logical| (logical devices).
kiln_status_t newChannel(std::shared_ptr<const DeviceContext> context,
                         std::shared_ptr<Comm> comm, int32_t rank,
                         int32_t count, kiln_hal_channel_t** outChannel,
                         std::shared_ptr<LogicalGroup> logical = nullptr) {
  auto* channel = new (std::nothrow) HipChannel();
  if (!channel)
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED,
                      "out of memory creating a channel");
  kiln_hal_resource_initialize(&kChannelVTable, &channel->base.resource);
  channel->base.rank = rank;
  channel->base.count = count;
  if (comm) context->comms->add(comm);
  channel->context = std::move(context);
  channel->comm = std::move(comm);
  channel->logical = std::move(logical);
  *outChannel = &channel->base;
  return nullptr;
}

void destroyChannel(kiln_hal_resource_t* resource) {
  kiln_hal_channel_t* base = reinterpret_cast<kiln_hal_channel_t*>(resource);
  HipChannel* channel = asHipChannel(base);
  const DeviceContext& context = *channel->context;
  kiln_status_t status = context.bind();
  if (!status) {
    if (channel->deviceSignatures)
      context.platform->free(channel->deviceSignatures);
    if (channel->hostSignatures)
      context.platform->hostFree(channel->hostSignatures);
    channel->comm.reset();  // the device is current for ncclCommAbort
  }
  freeStatus(status);
  if (!channel->member.empty()) {
    std::lock_guard<std::mutex> lock(context.driver->mutex);
    context.driver->channelMembers.erase(channel->member);
  }
  delete channel;
}

kiln_status_t splitChannel(kiln_hal_channel_t* base, int32_t color,
                           int32_t key, kiln_hal_channel_t** outChannel) {
  HipChannel* parent = asHipChannel(base);
  const DeviceContext& context = *parent->context;
  if (parent->logical) {
    std::shared_ptr<LogicalGroup> group;
    int32_t rank = 0, count = 0;
    KILN_HIP_RETURN_IF_ERROR(splitLogicalGroup(
        *parent->logical, base->rank, color, key, &group, &rank, &count));
    return newChannel(parent->context, nullptr, rank, count, outChannel,
                      std::move(group));
  }
  const NcclLibrary& nccl = parent->comm->library();
  if (!nccl.ncclCommSplit)
    return makeStatus(KILN_STATUS_UNIMPLEMENTED,
                      "channel_split on hip://%d needs ncclCommSplit (NCCL "
                      "2.18 or newer); '%s' is %s %s",
                      context.ordinal, nccl.path.c_str(), nccl.kind,
                      nccl.versionText().c_str());
  KILN_HIP_RETURN_IF_ERROR(parent->comm->health());
  KILN_HIP_RETURN_IF_ERROR(context.bind());
  // A negative color still takes part in the split (it is collective over
  // the parent's ranks) so that the other ranks are not left waiting.
  ncclComm_t handle = nullptr;
  KILN_HIP_RETURN_IF_ERROR(annotate(
      nccl.check(nccl.ncclCommSplit(parent->comm->get(),
                                    color < 0 ? kNcclSplitNoColor : color, key,
                                    &handle, nullptr),
                 "ncclCommSplit"),
      "splitting rank %d of a %d-rank channel on hip://%d", base->rank,
      base->count, context.ordinal));
  if (color < 0)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "channel_split color %d is negative: rank %d joins no "
                      "sub-group (it took part in the split so that the "
                      "other ranks can go on)",
                      color, base->rank);
  int count = 0, rank = 0;
  kiln_status_t status = nccl.check(nccl.ncclCommCount(handle, &count),
                                    "ncclCommCount");
  if (!status)
    status = nccl.check(nccl.ncclCommUserRank(handle, &rank),
                        "ncclCommUserRank");
  auto comm = std::make_shared<Comm>(parent->comm->libraryRef(), handle,
                                     context.ordinal);
  KILN_HIP_RETURN_IF_ERROR(status);  // |comm| aborts the communicator
  return newChannel(parent->context, std::move(comm), rank, count, outChannel);
}

// Checks the resolved ranges of |op| for |channel|; the bytes each side
// moves are returned.
kiln_status_t checkRanges(const kiln_hal_channel_t& channel,
                          const kiln_hal_collective_op_t& op,
                          const uint8_t* send, uint64_t sendLength,
                          const uint8_t* recv, uint64_t recvLength,
                          uint64_t* sendBytes, uint64_t* recvBytes) {
  uint64_t ranks = uint64_t(channel.count);
  uint64_t size = typeInfo(op.element_type).size;
  uint64_t count = op.element_count;
  if (count > (UINT64_MAX / 2) / size / ranks)
    return makeStatus(KILN_STATUS_OUT_OF_RANGE, "%s of %llu elements is too "
                      "large", collectiveKindName(op.kind), (unsigned long long)count);
  *sendBytes = count * size;
  switch (op.kind) {
    case KILN_HAL_COLLECTIVE_ALL_GATHER: *recvBytes = count * ranks * size; break;
    case KILN_HAL_COLLECTIVE_REDUCE_SCATTER: *recvBytes = count / ranks * size; break;
    default: *recvBytes = count * size; break;
  }
  if (sendLength < *sendBytes)
    return makeStatus(KILN_STATUS_OUT_OF_RANGE,
                      "%s send range has %llu bytes, needs %llu",
                      collectiveKindName(op.kind), (unsigned long long)sendLength,
                      (unsigned long long)*sendBytes);
  if (recvLength < *recvBytes)
    return makeStatus(KILN_STATUS_OUT_OF_RANGE,
                      "%s recv range has %llu bytes, needs %llu",
                      collectiveKindName(op.kind), (unsigned long long)recvLength,
                      (unsigned long long)*recvBytes);
  bool overlap = *sendBytes && *recvBytes && send < recv + *recvBytes &&
                 recv < send + *sendBytes;
  if (!overlap) return nullptr;
  // NCCL's in-place forms; any other overlap would be read after written.
  uint64_t rank = uint64_t(channel.rank);
  bool inPlace = false;
  switch (op.kind) {
    case KILN_HAL_COLLECTIVE_ALL_REDUCE:
    case KILN_HAL_COLLECTIVE_BROADCAST:
      inPlace = send == recv;
      break;
    case KILN_HAL_COLLECTIVE_ALL_GATHER:
      inPlace = send == recv + rank * *sendBytes;
      break;
    case KILN_HAL_COLLECTIVE_REDUCE_SCATTER:
      inPlace = recv == send + rank * *recvBytes;
      break;
    default:
      break;
  }
  if (!inPlace)
    return makeStatus(KILN_STATUS_UNIMPLEMENTED,
                      "%s with overlapping send and recv ranges: the hip "
                      "driver supports only NCCL's in-place forms (all_reduce "
                      "and broadcast: send == recv; all_gather: send == recv + "
                      "rank * send bytes; reduce_scatter: recv == send + rank "
                      "* recv bytes; all_to_all: none)",
                      collectiveKindName(op.kind));
  return nullptr;
}

// How often a wait for collectives checks the communicators' health.
constexpr auto kHealthPollInterval = std::chrono::milliseconds(1);

// Waits for |event| polling the communicators (see waitWithComms).
kiln_status_t pollEvent(const DeviceContext& context, hipEvent_t event,
                        StreamNotification* notification,
                        const std::vector<Comm*>& comms) {
  auto sleep = std::chrono::microseconds(10);
  while (true) {
    hipError_t error = context.platform->eventQuery(event);
    if (error == hipSuccess) {
      // Kernels of an aborted communicator end early: the work is done but
      // its results are not.
      for (Comm* comm : comms) KILN_HIP_RETURN_IF_ERROR(comm->health());
      return nullptr;
    }
    if (error != hipErrorNotReady)
      return context.check(error, "hipEventQuery (waiting for collectives)",
                           KILN_STATUS_ABORTED);
    for (Comm* comm : comms) KILN_HIP_RETURN_IF_ERROR(comm->health());
    if (notification) {
      notification->waitFor(kHealthPollInterval);
      continue;
    }
    std::this_thread::sleep_for(sleep);
    if (sleep < std::chrono::microseconds(500)) sleep *= 2;
  }
}

// Gathers |bytes| bytes from each of the |count| ranks of |comm| on
// |stream|: this rank's |own| (pinned host memory) goes into its slot of
// |slots| (device memory, count x bytes), every rank's come back into
// |gathered| (pinned host memory, count x bytes), and the wait polls the
// communicator's health. Device current.
kiln_status_t
gatherOnStream(const std::shared_ptr<const DeviceContext> &context, Comm &comm,
               int32_t rank, size_t count, size_t bytes, const void *own,
               uint8_t *slots, void *gathered, hipStream_t stream) {
  const DeviceContext &ctx = *context;
  Platform &platform = *ctx.platform;
  const NcclLibrary &nccl = comm.library();
  uint8_t *slot = slots + size_t(rank) * bytes;
  KILN_HIP_RETURN_IF_ERROR(
      ctx.check(platform.memcpyAsync(slot, own, bytes, stream),
                "hipMemcpyAsync (all-gather)"));
  KILN_HIP_RETURN_IF_ERROR(comm.health());
  KILN_HIP_RETURN_IF_ERROR(comm.checkCall(
      nccl.ncclAllGather(slot, slots, bytes, ncclUint8, comm.get(), stream),
      "ncclAllGather"));
  KILN_HIP_RETURN_IF_ERROR(
      ctx.check(platform.memcpyAsync(gathered, slots, count * bytes, stream),
                "hipMemcpyAsync (all-gather)"));
  std::shared_ptr<Event> event;
  KILN_HIP_RETURN_IF_ERROR(Event::create(context, &event));
  KILN_HIP_RETURN_IF_ERROR(
      ctx.check(platform.eventRecord(event->get(), stream), "hipEventRecord"));
  std::shared_ptr<StreamNotification> notification;
  KILN_HIP_RETURN_IF_ERROR(
      StreamNotification::launch(ctx, stream, &notification));
  return pollEvent(ctx, event->get(), notification.get(), {&comm});
}

// Exchanges the signatures of |op| (|valid|: passed the local checks) and
// compares them. Caller holds the channel's checkMutex; device current.
kiln_status_t exchangeSignatures(HipChannel* channel,
                                 const kiln_hal_collective_op_t& op,
                                 bool valid, hipStream_t stream) {
  const DeviceContext& context = *channel->context;
  Platform& platform = *context.platform;
  size_t ranks = size_t(channel->base.count);
  size_t rank = size_t(channel->base.rank);
  size_t bytes = ranks * sizeof(Signature);
  if (!channel->deviceSignatures)
    KILN_HIP_RETURN_IF_ERROR(context.check(
        platform.malloc(&channel->deviceSignatures, bytes),
        "hipMalloc (collective signatures)", KILN_STATUS_RESOURCE_EXHAUSTED));
  if (!channel->hostSignatures)
    KILN_HIP_RETURN_IF_ERROR(context.check(
        platform.hostMalloc(&channel->hostSignatures, bytes + sizeof(Signature)),
        "hipHostMalloc (collective signatures)",
        KILN_STATUS_RESOURCE_EXHAUSTED));
  auto* all = static_cast<Signature*>(channel->hostSignatures);
  Signature& own = all[ranks];
  own = Signature{valid ? 1u : 0u, uint32_t(op.kind), uint32_t(op.reduction),
                  uint32_t(op.element_type), op.element_count, op.root, 0};
  KILN_HIP_RETURN_IF_ERROR(
      annotate(gatherOnStream(channel->context, *channel->comm, int32_t(rank),
                              ranks, sizeof(Signature), &own,
                              static_cast<uint8_t *>(channel->deviceSignatures),
                              all, stream),
               "exchanging collective arguments between the ranks"));
  std::string problems;
  for (size_t r = 0; r < ranks; ++r) {
    const Signature& other = all[r];
    if (!other.valid) {
      if (r != rank)
        problems += "; rank " + std::to_string(r) +
                    " could not run its part (see that rank's error)";
      continue;
    }
    Signature a = other, b = own;
    a.valid = b.valid = 1;
    if (std::memcmp(&a, &b, sizeof(Signature)) != 0)
      problems += "; rank " + std::to_string(r) + " runs " + describe(other);
  }
  if (!valid || problems.empty()) return nullptr;  // own error reported by caller
  return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                    "collective arguments differ between the ranks of a "
                    "%zu-rank channel: rank %zu (hip://%d) runs %s%s",
                    ranks, rank, context.ordinal, describe(own).c_str(),
                    problems.c_str());
}

}  // namespace

Comm::~Comm() {
  // Not ncclCommDestroy: see the class comment.
  if (!aborted()) nccl->ncclCommAbort(handle);
}

void Comm::abort(const std::string& why) {
  std::lock_guard<std::mutex> lock(mutex);
  if (abortedFlag.load(std::memory_order_relaxed)) return;
  reason = why;
  // Flag first: users check it before each call on the communicator.
  abortedFlag.store(true, std::memory_order_release);
  nccl->ncclCommAbort(handle);
}

kiln_status_t Comm::health() {
  int asyncError = ncclSuccess;
  int result = ncclSuccess;
  {
    // Under the mutex: abort() must not free the communicator while NCCL
    // reads it here.
    std::lock_guard<std::mutex> lock(mutex);
    if (aborted())
      return makeStatus(KILN_STATUS_ABORTED,
                        "the collective channel on hip://%d was aborted: %s",
                        ordinal, reason.c_str());
    result = nccl->ncclCommGetAsyncError(handle, &asyncError);
  }
  if (result == ncclSuccess && (asyncError == ncclSuccess ||
                                asyncError == ncclInProgress))
    return nullptr;
  kiln_status_t status = nccl->check(
      result != ncclSuccess ? result : asyncError,
      result != ncclSuccess ? "ncclCommGetAsyncError"
                            : "a collective (asynchronous error)",
      KILN_STATUS_ABORTED);
  abort(std::string(statusMessage(status)));
  return annotate(status, "collective channel on hip://%d (now aborted)",
                  ordinal);
}

kiln_status_t Comm::checkCall(int result, const char* what) {
  if (result == ncclSuccess) return nullptr;
  if (aborted()) return health();
  return nccl->check(result, what);
}

void CommList::add(const std::shared_ptr<Comm>& comm) {
  std::lock_guard<std::mutex> lock(mutex);
  for (auto it = comms.begin(); it != comms.end();)
    it = it->expired() ? comms.erase(it) : it + 1;
  comms.push_back(comm);
}

bool CommList::any() {
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto& weak : comms)
    if (!weak.expired()) return true;
  return false;
}

void CommList::abortAll(const std::string& why) {
  std::vector<std::shared_ptr<Comm>> live;
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (const auto& weak : comms)
      if (auto comm = weak.lock()) live.push_back(comm);
  }
  for (auto& comm : live) comm->abort(why);
}

kiln_status_t
allGatherOnHost(const std::shared_ptr<const DeviceContext> &context, Comm &comm,
                int32_t rank, int32_t count, const void *mine, size_t bytes,
                void *all, const char *what) {
  KILN_HIP_RETURN_IF_ERROR(context->bind());
  KILN_HIP_RETURN_IF_ERROR(comm.health());
  Platform &platform = *context->platform;
  size_t total = size_t(count) * bytes;
  hipStream_t stream = nullptr;
  void *slots = nullptr;
  void *staging = nullptr;
  kiln_status_t status = context->check(platform.streamCreate(&stream),
                                        "hipStreamCreate (all-gather)");
  if (!status)
    status =
        context->check(platform.malloc(&slots, total), "hipMalloc (all-gather)",
                       KILN_STATUS_RESOURCE_EXHAUSTED);
  if (!status)
    status = context->check(platform.hostMalloc(&staging, total),
                            "hipHostMalloc (all-gather)",
                            KILN_STATUS_RESOURCE_EXHAUSTED);
  bool enqueued = false;
  if (!status) {
    // This rank's part is staged in its own slot of the host buffer, which
    // the gathered parts then overwrite.
    auto *own = static_cast<uint8_t *>(staging) + size_t(rank) * bytes;
    std::memcpy(own, mine, bytes);
    enqueued = true;
    status = gatherOnStream(context, comm, rank, size_t(count), bytes, own,
                            static_cast<uint8_t *>(slots), staging, stream);
  }
  if (!status)
    std::memcpy(all, staging, total);
  // After a failure the stream may still hold work that uses the buffers
  // (an aborted communicator's kernels end, but not necessarily yet): they
  // are left to the process rather than freed under it.
  if (!status || !enqueued) {
    if (staging)
      platform.hostFree(staging);
    if (slots)
      platform.free(slots);
    if (stream)
      platform.streamDestroy(stream);
  }
  return annotate(status,
                  "%s: all-gather of %zu bytes per rank over rank %d "
                  "of a %d-rank channel on hip://%d",
                  what, bytes, rank, count, context->ordinal);
}

kiln_status_t createChannelId(std::shared_ptr<const DeviceContext> context,
                              uint8_t* outId, size_t capacity,
                              size_t* outLength) {
  if (context->options.logical)
    return createLogicalChannelId(outId, capacity, outLength);
  std::shared_ptr<const NcclLibrary> nccl;
  KILN_HIP_RETURN_IF_ERROR(library(*context, &nccl));
  ncclUniqueId id;
  static_assert(sizeof(id) <= KILN_HAL_CHANNEL_ID_MAX_LENGTH,
                "NCCL ids must fit a HAL channel id");
  if (capacity < sizeof(id))
    return makeStatus(KILN_STATUS_OUT_OF_RANGE,
                      "a hip channel id has %zu bytes; capacity is %zu",
                      sizeof(id), capacity);
  KILN_HIP_RETURN_IF_ERROR(annotate(
      nccl->check(nccl->ncclGetUniqueId(&id), "ncclGetUniqueId"),
      "creating a channel id on hip://%d", context->ordinal));
  std::memcpy(outId, &id, sizeof(id));
  *outLength = sizeof(id);
  return nullptr;
}

kiln_status_t createChannel(std::shared_ptr<const DeviceContext> context,
                            const kiln_hal_channel_params_t* params,
                            kiln_hal_channel_t** outChannel) {
  bool logicalId = isLogicalChannelId(params->id, params->id_length);
  if (logicalId != context->options.logical)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "hip://%d%s joins a channel whose id was made on a%s "
                      "device: every rank of a group is a logical device "
                      "(hip://N?logical=1), or none is",
                      context->ordinal,
                      context->options.logical ? "?logical=1" : "",
                      logicalId ? " logical" : " non-logical (NCCL/RCCL)");
  if (logicalId) {
    std::shared_ptr<LogicalGroup> group;
    KILN_HIP_RETURN_IF_ERROR(
        annotate(joinLogicalGroup(*context, params->id, params->id_length,
                                  params->rank, params->count, &group),
                 "joining rank %d of a %d-rank logical channel on hip://%d",
                 params->rank, params->count, context->ordinal));
    return newChannel(context, nullptr, params->rank, params->count, outChannel,
                      std::move(group));
  }
  ncclUniqueId id;
  if (params->id_length != sizeof(id))
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "hip://%d: a hip channel id is the %zu-byte NCCL/RCCL "
                      "unique id made by kiln_hal_channel_id_create on a hip "
                      "device; got %zu bytes",
                      context->ordinal, sizeof(id), params->id_length);
  std::memcpy(&id, params->id, sizeof(id));
  std::shared_ptr<const NcclLibrary> nccl;
  KILN_HIP_RETURN_IF_ERROR(library(*context, &nccl));
  std::string member(id.internal, sizeof(id.internal));
  member += "/" + std::to_string(params->rank);
  {
    std::lock_guard<std::mutex> lock(context->driver->mutex);
    if (!context->driver->channelMembers.insert(member).second)
      return makeStatus(KILN_STATUS_ALREADY_EXISTS,
                        "rank %d of this %d-rank group already has a channel "
                        "in this process",
                        params->rank, params->count);
  }
  auto forget = [&] {
    std::lock_guard<std::mutex> lock(context->driver->mutex);
    context->driver->channelMembers.erase(member);
  };
  kiln_status_t status = context->bind();
  ncclComm_t handle = nullptr;
  // Blocks until all |count| ranks joined.
  if (!status)
    status = annotate(
        nccl->check(nccl->ncclCommInitRank(&handle, params->count, id,
                                           params->rank),
                    "ncclCommInitRank", KILN_STATUS_UNAVAILABLE),
        "joining rank %d of a %d-rank channel on hip://%d", params->rank,
        params->count, context->ordinal);
  if (status) {
    forget();
    return status;
  }
  auto comm = std::make_shared<Comm>(nccl, handle, context->ordinal);
  status = newChannel(context, std::move(comm), params->rank, params->count,
                      outChannel);
  if (status) {
    forget();
    return status;
  }
  asHipChannel(*outChannel)->member = member;
  return nullptr;
}

namespace {

kiln_status_t createWindow(kiln_hal_channel_t* base,
                           const kiln_hal_window_params_t* params,
                           kiln_hal_window_t** outWindow) {
  HipChannel* channel = asHipChannel(base);
  if (!channel->logical)
    return createCommWindow(channel->context, *channel->comm, base->rank,
                            base->count, params, outWindow);
  return createLogicalWindow(channel->context, *channel->logical, base->rank,
                             params, outWindow);
}

}  // namespace

kiln_status_t checkCollective(kiln_hal_channel_t* base,
                              const DeviceContext& context,
                              const kiln_hal_collective_op_t& op) {
  HipChannel* channel = asHipChannel(base);
  if (!channel)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "collective channel was not created by the hip driver");
  if (channel->context->ordinal != context.ordinal ||
      channel->context->platform != context.platform)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "collective channel belongs to hip://%d, not hip://%d",
                      channel->context->ordinal, context.ordinal);
  if (!channel->comm)
    return makeStatus(KILN_STATUS_UNIMPLEMENTED,
                      "%s on hip://%d?logical=1: a logical device's channels "
                      "have no collective library (NCCL/RCCL need one GPU per "
                      "rank); compile the module's collectives as kernels "
                      "(kiln-compile --collective-kernel-max-bytes=N)",
                      collectiveKindName(op.kind), context.ordinal);
  TypeInfo type = typeInfo(op.element_type);
  uint64_t ranks = uint64_t(base->count);
  const char* kind = collectiveKindName(op.kind);
  if (type.size == 0)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "%s: invalid element type %d", kind, int(op.element_type));
  if (isReduction(op.kind)) {
    if (op.reduction == KILN_HAL_REDUCTION_NONE)
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "%s needs a reduction",
                        kind);
    if (type.nccl < 0)
      return makeStatus(KILN_STATUS_UNIMPLEMENTED,
                        "%s(%s) of %s elements: NCCL/RCCL have no %s type, so "
                        "the hip driver cannot reduce it",
                        kind, reductionName(op.reduction), type.name,
                        type.name);
  }
  if ((op.kind == KILN_HAL_COLLECTIVE_REDUCE_SCATTER ||
       op.kind == KILN_HAL_COLLECTIVE_ALL_TO_ALL) &&
      op.element_count % ranks != 0)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "%s of %llu elements does not split evenly over %d "
                      "ranks",
                      kind, (unsigned long long)op.element_count, base->count);
  if (op.kind == KILN_HAL_COLLECTIVE_BROADCAST &&
      (op.root < 0 || op.root >= base->count))
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "broadcast root %d is not a rank of %d", op.root,
                      base->count);
  return nullptr;
}

std::shared_ptr<Comm> channelComm(kiln_hal_channel_t* channel) {
  return asHipChannel(channel)->comm;
}

kiln_status_t issueCollective(kiln_hal_channel_t* base,
                              const kiln_hal_collective_op_t& op,
                              uint8_t* send, uint64_t sendLength,
                              uint8_t* recv, uint64_t recvLength,
                              hipStream_t stream) {
  HipChannel* channel = asHipChannel(base);
  const DeviceContext& context = *channel->context;
  Comm& comm = *channel->comm;
  const NcclLibrary& nccl = comm.library();
  uint64_t sendBytes = 0, recvBytes = 0;
  kiln_status_t local = checkRanges(*base, op, send, sendLength, recv,
                                    recvLength, &sendBytes, &recvBytes);
  if (context.options.collectiveChecks) {
    std::lock_guard<std::mutex> lock(channel->checkMutex);
    kiln_status_t status = exchangeSignatures(channel, op, !local, stream);
    if (local) {
      freeStatus(status);
      return local;
    }
    KILN_HIP_RETURN_IF_ERROR(status);
  } else if (local) {
    // Without the exchange the peers cannot learn of it: they wait until
    // their device is destroyed.
    return annotate(local, "(collective_checks=0: the other ranks of the "
                           "channel will wait for this rank)");
  }
  KILN_HIP_RETURN_IF_ERROR(comm.health());
  TypeInfo type = typeInfo(op.element_type);
  int reduction = ncclReduction(op.reduction);
  uint64_t ranks = uint64_t(base->count);
  switch (op.kind) {
    case KILN_HAL_COLLECTIVE_ALL_REDUCE:
      return comm.checkCall(nccl.ncclAllReduce(send, recv, op.element_count,
                                           type.nccl, reduction, comm.get(),
                                           stream),
                        "ncclAllReduce");
    case KILN_HAL_COLLECTIVE_REDUCE_SCATTER:
      return comm.checkCall(
          nccl.ncclReduceScatter(send, recv, op.element_count / ranks,
                                 type.nccl, reduction, comm.get(), stream),
          "ncclReduceScatter");
    case KILN_HAL_COLLECTIVE_ALL_GATHER:
      return comm.checkCall(nccl.ncclAllGather(send, recv, sendBytes, ncclUint8,
                                           comm.get(), stream),
                        "ncclAllGather");
    case KILN_HAL_COLLECTIVE_BROADCAST:
      return comm.checkCall(nccl.ncclBroadcast(send, recv, sendBytes, ncclUint8,
                                           op.root, comm.get(), stream),
                        "ncclBroadcast");
    case KILN_HAL_COLLECTIVE_ALL_TO_ALL: {
      uint64_t chunk = sendBytes / ranks;
      KILN_HIP_RETURN_IF_ERROR(comm.checkCall(nccl.ncclGroupStart(),
                                          "ncclGroupStart (all_to_all)"));
      // Every call between start and end is made, so that the group is
      // closed whatever fails; the first error is reported.
      int result = ncclSuccess;
      for (uint64_t peer = 0; peer < ranks; ++peer) {
        int sent = nccl.ncclSend(send + peer * chunk, chunk, ncclUint8,
                                 int(peer), comm.get(), stream);
        int received = nccl.ncclRecv(recv + peer * chunk, chunk, ncclUint8,
                                     int(peer), comm.get(), stream);
        if (result == ncclSuccess) result = sent != ncclSuccess ? sent : received;
      }
      int ended = nccl.ncclGroupEnd();
      if (result == ncclSuccess) result = ended;
      return comm.checkCall(result, "ncclSend/ncclRecv (all_to_all)");
    }
  }
  return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "unknown collective kind %d",
                    int(op.kind));
}

kiln_status_t waitWithComms(const DeviceContext& context, hipEvent_t event,
                            StreamNotification* notification,
                            const std::vector<std::shared_ptr<Comm>>& comms) {
  std::vector<Comm*> raw;
  for (const auto& comm : comms) raw.push_back(comm.get());
  return pollEvent(context, event, notification, raw);
}

kiln_status_t StreamNotification::launch(
    const DeviceContext& context, hipStream_t stream,
    std::shared_ptr<StreamNotification>* out) {
  auto notification = std::make_shared<StreamNotification>();
  // The host function holds a reference until it has run. If the context
  // fails first it never runs and this small allocation is not freed.
  auto* reference = new std::shared_ptr<StreamNotification>(notification);
  hipError_t error = context.platform->launchHostFunc(
      stream, &StreamNotification::reach, reference);
  if (error != hipSuccess) {
    delete reference;
    return context.check(error, "hipLaunchHostFunc (completion notification)");
  }
  *out = std::move(notification);
  return nullptr;
}

bool StreamNotification::waitFor(std::chrono::microseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex);
  return changed.wait_for(lock, timeout, [this] { return reached; });
}

void StreamNotification::reach(void* data) {
  std::unique_ptr<std::shared_ptr<StreamNotification>> reference(
      static_cast<std::shared_ptr<StreamNotification>*>(data));
  StreamNotification& notification = **reference;
  {
    std::lock_guard<std::mutex> lock(notification.mutex);
    notification.reached = true;
  }
  notification.changed.notify_all();
}

}  // namespace kiln::hip
