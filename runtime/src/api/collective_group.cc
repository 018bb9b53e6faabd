// Collective groups of kiln/runtime.h and the channels of SPMD modules.
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "api/objects.h"
#include "collective/grid.h"
#include "collective/rendezvous.h"

namespace {

using kiln::api::CollectiveMembership;
using kiln::module::FunctionChannels;
using kiln::module::HalChannelPtr;

constexpr int32_t kMaxWorldSize = 1 << 16;
constexpr int64_t kDefaultRendezvousTimeoutNs = 300ll * 1000 * 1000 * 1000;

// Gives up the devices' claims on a group that failed to form or was
// released.
void LeaveGroup(const std::vector<kiln_device_t*>& devices) {
  for (kiln_device_t* device : devices) {
    std::lock_guard<std::mutex> lock(device->mutex);
    device->in_group = false;
    device->membership.reset();
  }
}

kiln_status_t CheckGroupArguments(kiln_device_t* const* devices,
                                  size_t device_count,
                                  const kiln_collective_group_params_t* params,
                                  kiln_collective_group_t** out_group) {
  if (!devices || device_count == 0 || !params || !out_group) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_collective_group_create: devices (at least "
                            "one), params and out_group are required");
  }
  const int64_t world = params->world_size;
  if (world <= 0 || world > kMaxWorldSize) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "collective group world size %d is not in "
                            "1..%d", params->world_size, kMaxWorldSize);
  }
  if (params->first_rank < 0 ||
      int64_t(params->first_rank) + int64_t(device_count) > world) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "ranks %d..%lld (first rank %d, %zu devices) are "
                            "not within the %d ranks of the group",
                            params->first_rank,
                            (long long)params->first_rank +
                                (long long)device_count - 1,
                            params->first_rank, device_count,
                            params->world_size);
  }
  for (size_t i = 0; i < device_count; ++i) {
    if (!devices[i]) {
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "collective group device %zu is NULL", i);
    }
    for (size_t j = 0; j < i; ++j) {
      if (devices[j]->device.get() == devices[i]->device.get()) {
        return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                                "device '%s' is given twice (ranks %zu and "
                                "%zu); each rank needs its own device",
                                devices[i]->uri.c_str(), j, i);
      }
    }
  }
  const bool multi_process = int64_t(device_count) < world;
  const bool has_rendezvous = params->rendezvous && params->rendezvous[0];
  if (multi_process && !has_rendezvous) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "this process owns %zu of the %d ranks, so the "
                            "group needs a rendezvous (file:DIR or "
                            "tcp://HOST:PORT) to reach the other processes",
                            device_count, params->world_size);
  }
  if (multi_process) {
    // The local driver's channels meet in this process's memory: ranks of
    // other processes would never arrive.
    const char* driver = kiln_hal_device_driver_name(devices[0]->device.get());
    if (driver && std::strcmp(driver, "local") == 0) {
      return kiln_make_status(KILN_STATUS_FAILED_PRECONDITION,
                              "the local driver's collectives only connect "
                              "devices of one process; run all %d ranks in "
                              "this process (local://0..%d) or use a driver "
                              "with multi-process collectives (hip with "
                              "NCCL/RCCL)", params->world_size,
                              params->world_size - 1);
    }
  }
  return kiln_ok_status();
}

// Makes (rank 0's process) or receives (the others) the world channel id.
kiln_status_t ShareChannelId(kiln_device_t* const* devices,
                             size_t device_count,
                             const kiln_collective_group_params_t& params,
                             std::string* id) {
  if (params.first_rank == 0) {
    uint8_t bytes[KILN_HAL_CHANNEL_ID_MAX_LENGTH];
    size_t length = 0;
    KILN_RETURN_IF_ERROR(kiln_hal_channel_id_create(
        devices[0]->device.get(), bytes, sizeof(bytes), &length));
    id->assign(reinterpret_cast<const char*>(bytes), length);
  }
  if (int64_t(device_count) == params.world_size) return kiln_ok_status();
  int64_t timeout = params.rendezvous_timeout_ns > 0
                        ? params.rendezvous_timeout_ns
                        : kDefaultRendezvousTimeoutNs;
  kiln_time_t deadline = kiln_deadline_from_timeout(timeout);
  std::unique_ptr<kiln::collective::Rendezvous> store;
  KILN_RETURN_IF_ERROR(kiln::collective::OpenRendezvous(
      params.rendezvous, /*serve=*/params.first_rank == 0, deadline, &store));
  return kiln::collective::ExchangeChannelId(
      store.get(), params.first_rank, int32_t(device_count), params.world_size,
      deadline, id);
}

std::string GridString(const std::vector<int64_t>& shape) {
  std::string text;
  for (int64_t extent : shape) {
    if (!text.empty()) text += "x";
    text += std::to_string(extent);
  }
  return text;
}

std::string AxesString(const std::vector<int16_t>& axes) {
  std::string text = "[";
  for (size_t i = 0; i < axes.size(); ++i) {
    if (i) text += ", ";
    text += std::to_string(axes[i]);
  }
  return text + "]";
}

}  // namespace

namespace kiln {
namespace api {

kiln_status_t ResolveModuleChannels(
    kiln_device_t* device, const kiln::module::ModuleImage& image,
    std::vector<FunctionChannels>* out_channels) {
  out_channels->clear();
  std::shared_ptr<CollectiveMembership> membership;
  {
    std::lock_guard<std::mutex> lock(device->mutex);
    membership = device->membership;
  }
  const auto& functions = image.functions();
  std::vector<FunctionChannels> result(functions.size());
  bool any = false;
  // First every check, then the splits: a module that fails its checks
  // fails identically on every rank, before any rank starts a collective.
  for (size_t f = 0; f < functions.size(); ++f) {
    const auto* channels = functions[f].function->channels();
    if (!channels || channels->size() == 0) continue;
    any = true;
    const auto* shape = channels->Get(0)->grid_shape();
    std::vector<int64_t> grid(shape->begin(), shape->end());
    int64_t size = kiln::collective::GridSize(grid);
    if (!membership) {
      result[f].unavailable_reason =
          "function '" + functions[f].name + "' of module '" + image.source() +
          "' is an SPMD program for a " + GridString(grid) + " grid (" +
          std::to_string(size) + " ranks), but device '" + device->uri +
          "' is in no collective group; create one over " +
          std::to_string(size) + " devices (kiln_collective_group_create) "
          "and load the module on each of them";
      continue;
    }
    if (size != membership->world_size) {
      return kiln_make_status(
          KILN_STATUS_FAILED_PRECONDITION,
          "function '%s' of module '%s' runs on a %s grid (%lld ranks), but "
          "device '%s' is rank %d of a %d-rank collective group; run it on "
          "%lld ranks", functions[f].name.c_str(), image.source().c_str(),
          GridString(grid).c_str(), (long long)size, device->uri.c_str(),
          membership->rank, membership->world_size, (long long)size);
    }
  }
  if (!any) return kiln_ok_status();
  if (!membership) {
    *out_channels = std::move(result);
    return kiln_ok_status();
  }

  std::lock_guard<std::mutex> lock(membership->mutex);
  for (size_t f = 0; f < functions.size(); ++f) {
    const auto* channels = functions[f].function->channels();
    if (!channels) continue;
    for (uint32_t c = 0; c < channels->size(); ++c) {
      const schema::Channel* channel = channels->Get(c);
      std::vector<int64_t> grid(channel->grid_shape()->begin(),
                                channel->grid_shape()->end());
      std::vector<int16_t> axes;
      if (channel->axes()) axes.assign(channel->axes()->begin(),
                                       channel->axes()->end());
      if (kiln::collective::SpansWorldInOrder(grid, axes)) {
        result[f].channels.push_back(membership->world_channel.get());
        continue;
      }
      auto key = std::make_pair(grid, axes);
      auto it = membership->sub_channels.find(key);
      if (it == membership->sub_channels.end()) {
        kiln::collective::ChannelPlacement place =
            kiln::collective::PlaceRank(grid, axes, membership->rank);
        kiln_hal_channel_t* split = nullptr;
        kiln_status_t status = kiln_hal_channel_split(
            membership->world_channel.get(), place.color, place.key, &split);
        if (!kiln_status_is_ok(status)) {
          return kiln_status_annotate(
              status, "while creating channel %u (grid %s, axes %s) of "
              "function '%s' for rank %d on device '%s'", c,
              GridString(grid).c_str(), AxesString(axes).c_str(),
              functions[f].name.c_str(), membership->rank,
              device->uri.c_str());
        }
        it = membership->sub_channels.emplace(key, HalChannelPtr(split)).first;
      }
      result[f].channels.push_back(it->second.get());
    }
  }
  *out_channels = std::move(result);
  return kiln_ok_status();
}

}  // namespace api
}  // namespace kiln

extern "C" {

kiln_status_t kiln_collective_group_create(
    kiln_device_t* const* devices, size_t device_count,
    const kiln_collective_group_params_t* params,
    kiln_collective_group_t** out_group) {
  KILN_RETURN_IF_ERROR(
      CheckGroupArguments(devices, device_count, params, out_group));
  *out_group = nullptr;
  std::vector<kiln_device_t*> members(devices, devices + device_count);
  // Claim the devices, so that two groups cannot form over one device.
  for (size_t i = 0; i < members.size(); ++i) {
    std::lock_guard<std::mutex> lock(members[i]->mutex);
    if (members[i]->in_group) {
      std::vector<kiln_device_t*> claimed(members.begin(), members.begin() + i);
      LeaveGroup(claimed);
      return kiln_make_status(KILN_STATUS_FAILED_PRECONDITION,
                              "device '%s' already belongs to a collective "
                              "group; release that group first",
                              members[i]->uri.c_str());
    }
    members[i]->in_group = true;
  }

  std::string id;
  kiln_status_t status = ShareChannelId(devices, device_count, *params, &id);
  if (!kiln_status_is_ok(status)) {
    LeaveGroup(members);
    return kiln_status_annotate(status, "while forming a %d-rank collective "
                                "group (ranks %d..%d in this process)",
                                params->world_size, params->first_rank,
                                params->first_rank + int32_t(device_count) - 1);
  }

  // One thread per device: a driver may block in channel creation until
  // every rank joined.
  std::vector<kiln_hal_channel_t*> channels(device_count, nullptr);
  std::vector<kiln_status_t> statuses(device_count, kiln_ok_status());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < device_count; ++i) {
    threads.emplace_back([&, i] {
      kiln_hal_channel_params_t channel_params = {};
      channel_params.rank = params->first_rank + int32_t(i);
      channel_params.count = params->world_size;
      channel_params.id = id.data();
      channel_params.id_length = id.size();
      statuses[i] = kiln_hal_channel_create(members[i]->device.get(),
                                            &channel_params, &channels[i]);
    });
  }
  for (std::thread& thread : threads) thread.join();
  status = kiln_ok_status();
  for (size_t i = 0; i < device_count; ++i) {
    if (!kiln_status_is_ok(statuses[i])) {
      if (kiln_status_is_ok(status)) {
        status = kiln_status_annotate(
            statuses[i], "while creating the world channel of rank %d on "
            "device '%s'", params->first_rank + int32_t(i),
            members[i]->uri.c_str());
      } else {
        kiln_status_free(statuses[i]);
      }
    }
  }
  if (!kiln_status_is_ok(status)) {
    for (kiln_hal_channel_t* channel : channels) kiln_hal_channel_release(channel);
    LeaveGroup(members);
    return status;
  }

  kiln_collective_group_t* group = new kiln_collective_group_t();
  group->world_size = params->world_size;
  group->first_rank = params->first_rank;
  for (size_t i = 0; i < device_count; ++i) {
    auto membership = std::make_shared<CollectiveMembership>();
    membership->rank = params->first_rank + int32_t(i);
    membership->world_size = params->world_size;
    membership->world_channel.reset(channels[i]);
    kiln_device_retain(members[i]);
    group->devices.push_back(members[i]);
    std::lock_guard<std::mutex> lock(members[i]->mutex);
    members[i]->membership = std::move(membership);
  }
  *out_group = group;
  return kiln_ok_status();
}

void kiln_collective_group_retain(kiln_collective_group_t* group) {
  if (group) group->ref_count.fetch_add(1, std::memory_order_relaxed);
}

void kiln_collective_group_release(kiln_collective_group_t* group) {
  if (group && group->ref_count.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    LeaveGroup(group->devices);
    for (kiln_device_t* device : group->devices) kiln_device_release(device);
    delete group;
  }
}

int32_t kiln_collective_group_world_size(const kiln_collective_group_t* group) {
  return group ? group->world_size : 0;
}

int32_t kiln_device_collective_rank(const kiln_device_t* device) {
  if (!device) return -1;
  std::lock_guard<std::mutex> lock(device->mutex);
  return device->membership ? device->membership->rank : -1;
}

int32_t kiln_device_collective_world_size(const kiln_device_t* device) {
  if (!device) return 0;
  std::lock_guard<std::mutex> lock(device->mutex);
  return device->membership ? device->membership->world_size : 0;
}

}  // extern "C"
