// The AMD platform: HIP calls forwarded to libamdhip64 (dlopen'ed).
//
// Works with HIP 5.x, 6.x and 7.x libraries because it declares only C
// functions taking handles, integers and pointers (dynamic_symbol_tables.h)
// and reads the one string it needs from hipDeviceProp_t without using the
// struct's layout (deviceGetArchName below).

#include <dlfcn.h>

#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "drivers/hip/hip_platform.h"
#include "drivers/hip/status_util.h"
#include "schemas/module_constants.h"

namespace kiln::hip {
namespace {

// HIP constants the calls below pass (values shared by HIP 5, 6 and 7).
constexpr unsigned kHipHostMallocPortable = 0x1;
constexpr unsigned kHipHostMallocMapped = 0x2;
constexpr unsigned kHipMemAttachGlobal = 0x1;
constexpr unsigned kHipDeviceMallocUncached = 0x3;
constexpr unsigned kHipIpcMemLazyEnablePeerAccess = 0x1;
constexpr unsigned kHipHostRegisterPortable = 0x1;
constexpr unsigned kHipHostRegisterMapped = 0x2;
constexpr unsigned kHipStreamNonBlocking = 0x1;
constexpr unsigned kHipEventBlockingSync = 0x1;
constexpr unsigned kHipEventDisableTiming = 0x2;
constexpr int kHipMemcpyDefault = 4;
constexpr int kHipStreamCaptureModeThreadLocal = 1;

struct AmdSymbols {
#define KILN_AMD_REQUIRED(name, ret, params) ret(*name) params = nullptr;
#define KILN_AMD_OPTIONAL(name, ret, params) ret(*name) params = nullptr;
#include "drivers/hip/dynamic_symbol_tables.h"
};

// hipFunction_attribute (CUDA-compatible numbering).
constexpr int kHipFuncAttributeSharedSizeBytes = 1;

class AmdPlatform final : public Platform {
 public:
  AmdPlatform(void* handle, std::string path) : handle(handle), path(path) {}

  kiln_status_t resolve() {
    std::string missing;
#define KILN_AMD_REQUIRED(name, ret, params)                                \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(handle, #name));    \
  if (!api.name) missing += std::string(missing.empty() ? "" : ", ") + #name;
#define KILN_AMD_OPTIONAL(name, ret, params) \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(handle, #name));
#include "drivers/hip/dynamic_symbol_tables.h"
    if (!missing.empty())
      return makeStatus(KILN_STATUS_UNAVAILABLE,
                        "'%s' lacks HIP functions the driver needs: %s (is it "
                        "libamdhip64 from ROCm 5.2 or newer?)",
                        path.c_str(), missing.c_str());
    return nullptr;
  }

  const char* name() const override { return "amd"; }
  const std::string& libraryPath() const override { return path; }
  const char* targetBackend() const override { return "rocm"; }
  const char* executableFormat() const override { return KILN_ROCM_FORMAT; }

  std::string version() const override {
    int value = 0;
    if (api.hipRuntimeGetVersion(&value) != hipSuccess) return "HIP";
    // HIP_VERSION = major * 10000000 + minor * 100000 + patch.
    return "HIP " + std::to_string(value / 10000000) + "." +
           std::to_string((value / 100000) % 100);
  }

  std::string errorName(hipError_t error) const override {
    const char* name = api.hipGetErrorName(error);
    const char* text = api.hipGetErrorString(error);
    std::string result = name ? name : "hipError " + std::to_string(error);
    if (text && *text) result += std::string(" (") + text + ")";
    return result;
  }

  hipError_t getDeviceCount(int* count) override {
    *count = 0;
    hipError_t error = api.hipInit(0);
    if (error != hipSuccess) return error;
    return api.hipGetDeviceCount(count);
  }
  hipError_t deviceGetName(char* name, int length, int device) override {
    return api.hipDeviceGetName(name, length, device);
  }
  hipError_t deviceGetAttribute(int* value, hipDeviceAttribute_t attribute,
                                int device) override {
    return api.hipDeviceGetAttribute(value, attribute, device);
  }

  // hipDeviceProp_t grew and was reordered in HIP 6 (and the entry point
  // became hipGetDevicePropertiesR0600), but in every version gcnArchName is
  // an inline char array holding "gfx942:sramecc+:xnack-". So the
  // properties are written into a zeroed buffer far larger than any version
  // of the struct and the first NUL-preceded string starting with "gfx" is
  // taken; feature suffixes after ':' are dropped.
  hipError_t deviceGetArchName(int device, std::string* arch) override {
    std::vector<char> bytes(64 * 1024, 0);
    hipError_t error = api.hipGetDevicePropertiesR0600
                           ? api.hipGetDevicePropertiesR0600(bytes.data(), device)
                           : api.hipGetDeviceProperties(bytes.data(), device);
    if (error != hipSuccess) return error;
    for (size_t i = 0; i + 4 < bytes.size(); ++i) {
      if ((i > 0 && bytes[i - 1] != 0) || std::strncmp(&bytes[i], "gfx", 3))
        continue;
      std::string name;
      for (size_t j = i; j < bytes.size() && bytes[j] && bytes[j] != ':'; ++j)
        name += bytes[j];
      bool plausible = name.size() > 3 && name.size() < 16;
      for (char c : name)
        plausible = plausible && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'));
      if (plausible) {
        *arch = name;
        return hipSuccess;
      }
    }
    return hipErrorNotFound;
  }

  hipError_t setDevice(int device) override { return api.hipSetDevice(device); }
  hipError_t bindForCaller(int device, uintptr_t* token,
                           bool* restore) override {
    *restore = false;
    int current = 0;
    hipError_t error = api.hipGetDevice(&current);
    if (error != hipSuccess) return error;
    if (current == device) return hipSuccess;
    error = api.hipSetDevice(device);
    *token = uintptr_t(current);
    *restore = error == hipSuccess;
    return error;
  }
  hipError_t restoreCurrent(uintptr_t token) override {
    return api.hipSetDevice(int(token));
  }
  hipError_t deviceCanAccessPeer(int* canAccess, int device,
                                 int peer) override {
    return api.hipDeviceCanAccessPeer(canAccess, device, peer);
  }
  hipError_t deviceEnablePeerAccess(int peer) override {
    return api.hipDeviceEnablePeerAccess(peer, 0);
  }
  hipError_t memGetInfo(size_t* freeBytes, size_t* totalBytes) override {
    return api.hipMemGetInfo(freeBytes, totalBytes);
  }
  hipError_t pointerGetAllocation(const void* pointer, int* device,
                                  uintptr_t* start, size_t* size) override {
    if (!api.hipPointerGetAttribute) return hipErrorNotSupported;
    void* base = nullptr;
    hipError_t error =
        api.hipPointerGetAttribute(device, kPointerDeviceOrdinal, pointer);
    if (!error)
      error = api.hipPointerGetAttribute(&base, kPointerRangeStart, pointer);
    if (!error)
      error = api.hipPointerGetAttribute(size, kPointerRangeSize, pointer);
    *start = reinterpret_cast<uintptr_t>(base);
    return error;
  }
  hipStream_t externalStream(uint64_t value) const override {
    return value <= 1 ? nullptr
                      : reinterpret_cast<hipStream_t>(uintptr_t(value));
  }

  hipError_t malloc(void** pointer, size_t size) override {
    return api.hipMalloc(pointer, size);
  }
  hipError_t free(void* pointer) override { return api.hipFree(pointer); }
  hipError_t hostMalloc(void** pointer, size_t size) override {
    return api.hipHostMalloc(pointer, size,
                             kHipHostMallocMapped | kHipHostMallocPortable);
  }
  hipError_t hostFree(void* pointer) override { return api.hipHostFree(pointer); }
  hipError_t mallocManaged(void** pointer, size_t size) override {
    return api.hipMallocManaged(pointer, size, kHipMemAttachGlobal);
  }
  hipError_t mallocAsync(void** pointer, size_t size,
                         hipStream_t stream) override {
    if (!api.hipMallocAsync) return hipErrorNotSupported;
    return api.hipMallocAsync(pointer, size, stream);
  }
  hipError_t freeAsync(void* pointer, hipStream_t stream) override {
    if (!api.hipFreeAsync) return hipErrorNotSupported;
    return api.hipFreeAsync(pointer, stream);
  }
  hipError_t mallocSignals(void **pointer, size_t size) override {
    if (!api.hipExtMallocWithFlags)
      return api.hipMalloc(pointer, size);
    return api.hipExtMallocWithFlags(pointer, size, kHipDeviceMallocUncached);
  }
  hipError_t ipcGetMemHandle(IpcMemHandle *handle, void *pointer) override {
    return api.hipIpcGetMemHandle(handle, pointer);
  }
  hipError_t ipcOpenMemHandle(void **pointer,
                              const IpcMemHandle &handle) override {
    return api.hipIpcOpenMemHandle(pointer, handle,
                                   kHipIpcMemLazyEnablePeerAccess);
  }
  hipError_t ipcCloseMemHandle(void *pointer) override {
    return api.hipIpcCloseMemHandle(pointer);
  }
  hipError_t hostRegister(void *pointer, size_t size) override {
    return api.hipHostRegister(
        pointer, size, kHipHostRegisterPortable | kHipHostRegisterMapped);
  }
  hipError_t hostGetDevicePointer(void **devicePointer,
                                  void *hostPointer) override {
    return api.hipHostGetDevicePointer(devicePointer, hostPointer, 0);
  }
  hipError_t hostUnregister(void *pointer) override {
    return api.hipHostUnregister(pointer);
  }

  hipError_t streamCreate(hipStream_t* stream) override {
    return api.hipStreamCreateWithFlags(stream, kHipStreamNonBlocking);
  }
  hipError_t streamDestroy(hipStream_t stream) override {
    return api.hipStreamDestroy(stream);
  }
  hipError_t streamSynchronize(hipStream_t stream) override {
    return api.hipStreamSynchronize(stream);
  }
  hipError_t streamWaitEvent(hipStream_t stream, hipEvent_t event) override {
    return api.hipStreamWaitEvent(stream, event, 0);
  }
  hipError_t launchHostFunc(hipStream_t stream, void (*function)(void*),
                            void* data) override {
    // A stream callback gets the stream's status too; the host function's
    // caller learns of errors from its events instead.
    struct HostCall {
      void (*function)(void*);
      void* data;
    };
    auto* call = new (std::nothrow) HostCall{function, data};
    if (!call) return hipErrorOutOfMemory;
    hipError_t error = api.hipStreamAddCallback(
        stream,
        [](hipStream_t, int, void* raw) {
          std::unique_ptr<HostCall> call(static_cast<HostCall*>(raw));
          call->function(call->data);
        },
        call, 0);
    if (error != hipSuccess) delete call;
    return error;
  }

  hipError_t eventCreate(hipEvent_t* event) override {
    return api.hipEventCreateWithFlags(
        event, kHipEventDisableTiming | kHipEventBlockingSync);
  }
  hipError_t eventDestroy(hipEvent_t event) override {
    return api.hipEventDestroy(event);
  }
  hipError_t eventRecord(hipEvent_t event, hipStream_t stream) override {
    return api.hipEventRecord(event, stream);
  }
  hipError_t eventSynchronize(hipEvent_t event) override {
    return api.hipEventSynchronize(event);
  }
  hipError_t eventQuery(hipEvent_t event) override {
    return api.hipEventQuery(event);
  }
  hipError_t timingEventCreate(hipEvent_t* event) override {
    return api.hipEventCreateWithFlags(event, kHipEventBlockingSync);
  }
  hipError_t eventElapsedTime(float* milliseconds, hipEvent_t start,
                              hipEvent_t end) override {
    return api.hipEventElapsedTime(milliseconds, start, end);
  }

  hipError_t memcpyAsync(void* target, const void* source, size_t size,
                         hipStream_t stream) override {
    return api.hipMemcpyAsync(target, source, size, kHipMemcpyDefault, stream);
  }
  hipError_t memsetD8Async(void* target, uint8_t value, size_t count,
                           hipStream_t stream) override {
    return api.hipMemsetD8Async(target, value, count, stream);
  }
  hipError_t memsetD16Async(void* target, uint16_t value, size_t count,
                            hipStream_t stream) override {
    return api.hipMemsetD16Async(target, value, count, stream);
  }
  hipError_t memsetD32Async(void* target, uint32_t value, size_t count,
                            hipStream_t stream) override {
    return api.hipMemsetD32Async(target, int(value), count, stream);
  }

  hipError_t moduleLoadData(hipModule_t* module, const void* image) override {
    return api.hipModuleLoadData(module, image);
  }
  hipError_t moduleUnload(hipModule_t module) override {
    return api.hipModuleUnload(module);
  }
  hipError_t moduleGetFunction(hipFunction_t* function, hipModule_t module,
                               const char* name) override {
    return api.hipModuleGetFunction(function, module, name);
  }
  hipError_t functionStaticSharedBytes(hipFunction_t function,
                                       int* bytes) override {
    return api.hipFuncGetAttribute(bytes, kHipFuncAttributeSharedSizeBytes,
                                   function);
  }
  // AMD has no opt-in: a launch may use LDS up to the device's size, which
  // preparing an executable checks against the export's total.
  hipError_t functionAllowDynamicSharedBytes(hipFunction_t, int) override {
    return hipSuccess;
  }
  hipError_t moduleLaunchKernel(hipFunction_t function, const uint32_t grid[3],
                                const uint32_t block[3],
                                uint32_t dynamicSharedBytes,
                                hipStream_t stream,
                                void** kernelParams) override {
    return api.hipModuleLaunchKernel(function, grid[0], grid[1], grid[2],
                                     block[0], block[1], block[2],
                                     dynamicSharedBytes,
                                     stream, kernelParams, nullptr);
  }

  hipError_t streamBeginCapture(hipStream_t stream) override {
    if (!api.hipStreamBeginCapture) return hipErrorNotSupported;
    return api.hipStreamBeginCapture(stream, kHipStreamCaptureModeThreadLocal);
  }
  hipError_t streamEndCapture(hipStream_t stream, hipGraph_t* graph) override {
    if (!api.hipStreamEndCapture) return hipErrorNotSupported;
    return api.hipStreamEndCapture(stream, graph);
  }
  hipError_t graphInstantiate(hipGraphExec_t* exec, hipGraph_t graph) override {
    if (!api.hipGraphInstantiate) return hipErrorNotSupported;
    return api.hipGraphInstantiate(exec, graph, nullptr, nullptr, 0);
  }
  hipError_t graphLaunch(hipGraphExec_t exec, hipStream_t stream) override {
    if (!api.hipGraphLaunch) return hipErrorNotSupported;
    return api.hipGraphLaunch(exec, stream);
  }
  hipError_t graphExecDestroy(hipGraphExec_t exec) override {
    if (!api.hipGraphExecDestroy) return hipErrorNotSupported;
    return api.hipGraphExecDestroy(exec);
  }
  hipError_t graphDestroy(hipGraph_t graph) override {
    if (!api.hipGraphDestroy) return hipErrorNotSupported;
    return api.hipGraphDestroy(graph);
  }

 private:
  void* handle;
  std::string path;
  AmdSymbols api;
};

}  // namespace

kiln_status_t loadAmdPlatform(const std::string& libraryPath,
                              std::shared_ptr<Platform>* outPlatform) {
  // Unversioned name first (ROCm installs it); the versioned names cover
  // runtime-only installs (Debian ships libamdhip64.so.5, ROCm 6/7 .so.6/.7).
  std::vector<std::string> candidates;
  if (!libraryPath.empty()) {
    candidates.push_back(libraryPath);
  } else {
    candidates = {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6",
                  "libamdhip64.so.5", "/opt/rocm/lib/libamdhip64.so"};
  }
  std::string tried;
  void* handle = nullptr;
  std::string loaded;
  for (const std::string& candidate : candidates) {
    handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle) {
      loaded = candidate;
      break;
    }
    const char* error = dlerror();
    tried += "\n  " + candidate + ": " + (error ? error : "cannot be loaded");
  }
  if (!handle)
    return makeStatus(KILN_STATUS_UNAVAILABLE,
                      "AMD platform: the HIP runtime library could not be "
                      "loaded (install ROCm or set $%s):%s",
                      KILN_HIP_AMD_LIBRARY_ENV, tried.c_str());
  // The handle is never closed: see hip_platform.h.
  auto platform = std::make_shared<AmdPlatform>(handle, loaded);
  KILN_HIP_RETURN_IF_ERROR(platform->resolve());
  int count = 0;
  hipError_t error = platform->getDeviceCount(&count);
  if (error != hipSuccess || count <= 0)
    return makeStatus(KILN_STATUS_UNAVAILABLE,
                      "AMD platform: '%s' (%s) loaded but reports no AMD GPU "
                      "(hipInit/hipGetDeviceCount: %s)",
                      loaded.c_str(), platform->version().c_str(),
                      error == hipSuccess ? "0 devices"
                                          : platform->errorName(error).c_str());
  *outPlatform = std::move(platform);
  return nullptr;
}

}  // namespace kiln::hip
