#include "drivers/hip/hip_options.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "drivers/hip/status_util.h"

namespace kiln::hip {
namespace {

constexpr const char* kAcceptedKeys =
    "graphs=0|1, memory_pools=0|1, inject_failure=N, collective_checks=0|1, "
    "peer_access=0|1";

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
  } else if (key == "inject_failure") {
    ok = parseCount(value, &options->injectFailureEvery);
    expected = "N, to fail every N-th queue_execute of the device (0: never)";
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
      {"KILN_HIP_COLLECTIVE_CHECKS", "collective_checks"},
      {"KILN_HIP_PEER_ACCESS", "peer_access"},
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
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('&', begin);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(begin, end - begin);
    begin = end + 1;
    if (item.empty()) continue;  // "a=1&&b=0", a trailing '&'
    size_t equals = item.find('=');
    if (equals == std::string::npos || equals == 0)
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                        "device options '%s': '%s' is not key=value; "
                        "accepted: %s",
                        text.c_str(), item.c_str(), kAcceptedKeys);
    KILN_HIP_RETURN_IF_ERROR(apply(item.substr(0, equals),
                                   item.substr(equals + 1),
                                   "device options '" + text + "'", options));
  }
  return nullptr;
}

}  // namespace kiln::hip
