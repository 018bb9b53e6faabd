// Platform selection ($KILN_HIP_PLATFORM) and platform error statuses.

#include <cstdlib>
#include <string>

#include "drivers/hip/hip_platform.h"
#include "drivers/hip/status_util.h"

namespace kiln::hip {
namespace {

std::string envString(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

kiln_status_t selectPlatform(std::shared_ptr<Platform>* outPlatform) {
  std::string choice = envString(KILN_HIP_PLATFORM_ENV);
  std::string amdLibrary = envString(KILN_HIP_AMD_LIBRARY_ENV);
  std::string cudaLibrary = envString(KILN_HIP_CUDA_LIBRARY_ENV);
  if (choice == "amd") return loadAmdPlatform(amdLibrary, outPlatform);
  if (choice == "nvidia") return loadNvidiaPlatform(cudaLibrary, outPlatform);
  if (!choice.empty() && choice != "auto")
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "$%s='%s': expected 'auto', 'amd' or 'nvidia'",
                      KILN_HIP_PLATFORM_ENV, choice.c_str());
  // AMD first: it is Kiln's first-class target, and a machine with both
  // kinds of GPU most likely wants the AMD ones.
  kiln_status_t amd = loadAmdPlatform(amdLibrary, outPlatform);
  if (!amd) return nullptr;
  kiln_status_t nvidia = loadNvidiaPlatform(cudaLibrary, outPlatform);
  if (!nvidia) {
    freeStatus(amd);
    return nullptr;
  }
  kiln_status_t status = makeStatus(
      KILN_STATUS_UNAVAILABLE,
      "no GPU found for the HIP driver (set $%s=amd|nvidia to choose a "
      "platform):\n%s\n%s",
      KILN_HIP_PLATFORM_ENV, statusMessage(amd), statusMessage(nvidia));
  freeStatus(amd);
  freeStatus(nvidia);
  return status;
}

kiln_status_t platformError(const Platform& platform, hipError_t error,
                            kiln_status_code_t code, const char* what) {
  if (error == hipErrorOutOfMemory) code = KILN_STATUS_RESOURCE_EXHAUSTED;
  return makeStatus(code, "%s failed on the %s platform: %s", what,
                    platform.name(), platform.errorName(error).c_str());
}

}  // namespace kiln::hip
