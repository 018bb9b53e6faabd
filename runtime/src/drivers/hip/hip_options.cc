#include "drivers/hip/hip_options.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "drivers/common/block_cache.h"
#include "drivers/hip/status_util.h"

namespace kiln::hip {
namespace {

constexpr const char* kAcceptedKeys =
    "graphs=0|1, memory_pools=0|1, inject_failure=N, "
    "inject_capture_failure=N, collective_checks=0|1, peer_access=0|1, "
    "memory_limit=BYTES, spin_wait_us=N, logical=0|1";

bool parseBool(const std::string& text, bool* out) {
  for (const char* word : {"1", "on", "true", "yes"})
    if (text == word) return (*out = true);
  for (const char* word : {"0", "off", "false", "no"})
    if (text == word) return !(*out = false);
  return false;
}

bool parseCount(const std::string& text, uint64_t* out) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  errno = 0;
  unsigned long long value = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE) return false;
  *out = value;
  return true;
}

// One option: |key| (URI spelling) = |value|; |source| names where it came
// from in messages.
kiln_status_t apply(const std::string& key, const std::string& value,
                    const std::string& source, DeviceOptions* options) {
  bool ok = true;
  const char* expected = "0 or 1 (also off/on, false/true, no/yes)";
  if (key == "graphs") {
    ok = parseBool(value, &options->graphs);
  } else if (key == "memory_pools") {
    ok = parseBool(value, &options->memoryPools);
  } else if (key == "collective_checks") {
    ok = parseBool(value, &options->collectiveChecks);
  } else if (key == "peer_access") {
    ok = parseBool(value, &options->peerAccess);
  } else if (key == "logical") {
    ok = parseBool(value, &options->logical);
  } else if (key == "memory_limit") {
    ok = drivers::parseByteSize(value, &options->memoryLimit);
    expected = "a byte count, e.g. 1073741824, 512M or 8G (0: no limit)";
  } else if (key == "spin_wait_us") {
    ok = parseCount(value, &options->spinWaitUs);
    expected = "N microseconds to poll for completed work before sleeping";
  } else if (key == "inject_failure") {
    ok = parseCount(value, &options->injectFailureEvery);
    expected = "N, to fail every N-th queue_execute of the device (0: never)";
  } else if (key == "inject_capture_failure") {
    ok = parseCount(value, &options->injectCaptureFailureEvery);
    expected = "N, to fail every N-th graph capture of the device (0: never)";
  } else {
    const char* hint = key == "platform"
                           ? " (the platform is chosen per driver with "
                             "$KILN_HIP_PLATFORM)"
                           : "";
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "%s: unknown hip device option '%s'%s; accepted: %s",
                      source.c_str(), key.c_str(), hint, kAcceptedKeys);
  }
  if (!ok)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "%s: bad value '%s' for hip device option '%s': "
                      "expected %s",
                      source.c_str(), value.c_str(), key.c_str(), expected);
  return nullptr;
}

}  // namespace

kiln_status_t readEnvironmentOptions(DeviceOptions* options) {
  struct Variable {
    const char* name;
    const char* key;
  };
  static const Variable kVariables[] = {
      {"KILN_HIP_GRAPHS", "graphs"},
      {"KILN_HIP_MEMORY_POOLS", "memory_pools"},
      {"KILN_HIP_INJECT_FAILURE", "inject_failure"},
      {"KILN_HIP_INJECT_CAPTURE_FAILURE", "inject_capture_failure"},
      {"KILN_HIP_COLLECTIVE_CHECKS", "collective_checks"},
      {"KILN_HIP_PEER_ACCESS", "peer_access"},
      {"KILN_HIP_MEMORY_LIMIT", "memory_limit"},
      {"KILN_HIP_SPIN_WAIT_US", "spin_wait_us"},
      {"KILN_HIP_LOGICAL", "logical"},
  };
  *options = DeviceOptions();
  for (const Variable& variable : kVariables) {
    const char* value = std::getenv(variable.name);
    if (!value || !*value) continue;
    KILN_HIP_RETURN_IF_ERROR(apply(variable.key, value,
                                   std::string("$") + variable.name, options));
  }
  return nullptr;
}

kiln_status_t parseDeviceOptions(const char* query, DeviceOptions* options) {
  std::string text = query ? query : "";
  std::vector<std::pair<std::string, std::string>> items;
  std::string bad;
  if (!drivers::splitDeviceOptions(text, &items, &bad))
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "device options '%s': '%s' is not key=value; "
                      "accepted: %s",
                      text.c_str(), bad.c_str(), kAcceptedKeys);
  for (const auto& item : items)
    KILN_HIP_RETURN_IF_ERROR(apply(item.first, item.second,
                                   "device options '" + text + "'", options));
  return nullptr;
}

}  // namespace kiln::hip
