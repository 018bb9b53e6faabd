#include "drivers/hip/nccl_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

#include "drivers/hip/status_util.h"

namespace kiln::hip {

std::string NcclLibrary::versionText() const {
  // NCCL_VERSION_CODE = major * 10000 + minor * 100 + patch (2.9+).
  return std::to_string(version / 10000) + "." +
         std::to_string((version / 100) % 100) + "." +
         std::to_string(version % 100);
}

kiln_status_t NcclLibrary::check(int result, const char* what,
                                 kiln_status_code_t code) const {
  if (result == ncclSuccess) return nullptr;
  if (result == ncclInvalidArgument || result == ncclInvalidUsage)
    code = KILN_STATUS_INVALID_ARGUMENT;
  const char* text = ncclGetErrorString ? ncclGetErrorString(result) : nullptr;
  return makeStatus(code, "%s failed in %s %s: %s (ncclResult_t %d; set "
                    "NCCL_DEBUG=WARN for the library's own report)",
                    what, kind, versionText().c_str(), text ? text : "error",
                    result);
}

kiln_status_t loadNcclLibrary(const std::string& platformName,
                              std::shared_ptr<const NcclLibrary>* out) {
  bool amd = platformName == "amd";
  const char* env = amd ? KILN_HIP_RCCL_LIBRARY_ENV : KILN_HIP_NCCL_LIBRARY_ENV;
  const char* override = std::getenv(env);
  std::vector<std::string> candidates;
  if (override && *override) {
    candidates.push_back(override);
  } else if (amd) {
    candidates = {"librccl.so.1", "librccl.so", "/opt/rocm/lib/librccl.so.1"};
  } else {
    candidates = {"libnccl.so.2"};
  }
  // Make every connection when a communicator is created. Since NCCL 2.22
  // the default connects lazily inside the first collective that needs a
  // path, and that call then blocks the queue thread until the peer makes
  // the same call; only an abort from another thread could end that wait,
  // which races with the call still inside NCCL. With connections made at
  // init (which waits for all ranks anyway), collective calls only enqueue
  // work, and waiting for peers happens where the driver polls and can stop.
  // A value the user set wins.
  setenv("NCCL_RUNTIME_CONNECT", "0", /*overwrite=*/0);
  std::string tried;
  for (const std::string& path : candidates) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* error = dlerror();
      tried += "\n  '" + path + "': " + (error ? error : "not loadable");
      continue;
    }
    // The handle is never closed: see the header.
    auto library = std::make_shared<NcclLibrary>();
    library->path = path;
    library->kind = amd ? "RCCL" : "NCCL";
    std::string missing;
#define KILN_NCCL_REQUIRED(name, ret, params)                                  \
  library->name = reinterpret_cast<decltype(library->name)>(dlsym(handle, #name)); \
  if (!library->name) missing += std::string(missing.empty() ? "" : ", ") + #name;
#define KILN_NCCL_OPTIONAL(name, ret, params) \
  library->name = reinterpret_cast<decltype(library->name)>(dlsym(handle, #name));
#include "drivers/hip/dynamic_symbol_tables.h"
    if (!missing.empty())
      return makeStatus(KILN_STATUS_UNAVAILABLE,
                        "'%s' is not a usable %s library: it lacks %s (set "
                        "$%s to the path of %s)",
                        path.c_str(), amd ? "RCCL" : "NCCL", missing.c_str(),
                        env, amd ? "librccl.so" : "libnccl.so.2");
    kiln_status_t status = library->check(library->ncclGetVersion(&library->version),
                                          "ncclGetVersion",
                                          KILN_STATUS_UNAVAILABLE);
    if (status) return annotate(status, "loading '%s'", path.c_str());
    *out = std::move(library);
    return nullptr;
  }
  return makeStatus(KILN_STATUS_UNAVAILABLE,
                    "collectives on the hip driver's %s platform need %s, "
                    "which could not be loaded (install it or set $%s to its "
                    "path); tried:%s",
                    amd ? "AMD" : "NVIDIA", amd ? "RCCL" : "NCCL", env,
                    tried.c_str());
}

}  // namespace kiln::hip
