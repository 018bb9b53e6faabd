// The NVIDIA platform: the HIP calls the driver uses, implemented on the CUDA
// driver API (libcuda.so.1, dlopen'ed). This is how the HIP driver runs on
// NVIDIA GPUs; nothing above this file knows which platform it is on.
//
// Symbols are resolved with cuGetProcAddress(name, version) rather than
// dlsym: many driver calls were replaced by _v2/_v3 variants with other
// signatures (cuMemAlloc_v2, cuStreamDestroy_v2, cuStreamBeginCapture_v2,
// cuCtxSynchronize_v2 ...), and asking for the version whose signature we
// declare (dynamic_symbol_tables.h) gets the matching variant.
//
// HIP's per-thread "current device" maps onto each device's primary context,
// made current with cuCtxSetCurrent. Primary contexts are retained on first
// use and released when the platform is destroyed.

#include <dlfcn.h>

#include <mutex>
#include <string>
#include <vector>

#include "drivers/hip/hip_platform.h"
#include "drivers/hip/status_util.h"
#include "schemas/module_constants.h"

namespace kiln::hip {
namespace {

using CUcontext = struct CudaOpaqueContext*;
using CUdeviceptr = unsigned long long;

// CUDA constants used below.
constexpr unsigned kCuMemHostAllocPortable = 0x1;
constexpr unsigned kCuMemHostAllocDeviceMap = 0x2;
constexpr unsigned kCuMemAttachGlobal = 0x1;
constexpr unsigned kCuIpcMemLazyEnablePeerAccess = 0x1;
constexpr unsigned kCuMemHostRegisterPortable = 0x1;
constexpr unsigned kCuMemHostRegisterDeviceMap = 0x2;
constexpr unsigned kCuStreamNonBlocking = 0x1;
constexpr unsigned kCuEventBlockingSync = 0x1;
constexpr unsigned kCuEventDisableTiming = 0x2;
constexpr int kCuStreamCaptureModeThreadLocal = 1;
constexpr int kCuDeviceAttributeMultiprocessorCount = 16;
constexpr int kCuDeviceAttributeMaxSharedMemoryPerBlock = 8;
constexpr int kCuDeviceAttributeWarpSize = 10;
constexpr int kCuDeviceAttributeComputeCapabilityMajor = 75;
constexpr int kCuDeviceAttributeComputeCapabilityMinor = 76;
constexpr int kCuDeviceAttributeManagedMemory = 83;
constexpr int kCuDeviceAttributeConcurrentManagedAccess = 89;
constexpr int kCuDeviceAttributeMaxSharedMemoryPerBlockOptin = 97;
// CUfunction_attribute values.
constexpr int kCuFuncAttributeSharedSizeBytes = 1;
constexpr int kCuFuncAttributeNumRegs = 4;
constexpr int kCuFuncAttributeMaxDynamicSharedSizeBytes = 8;
constexpr int kCuDeviceAttributeMemoryPoolsSupported = 115;

// cuGetProcAddress as exported under its two ABIs (CUDA 11.3+ / 12.0+).
using GetProcAddressV1 = int (*)(const char*, void**, int, unsigned long long);
using GetProcAddressV2 = int (*)(const char*, void**, int, unsigned long long,
                                 int*);

struct CudaSymbols {
#define KILN_CUDA_REQUIRED(name, version, ret, params) ret(*name) params = nullptr;
#define KILN_CUDA_OPTIONAL(name, version, ret, params) ret(*name) params = nullptr;
#include "drivers/hip/dynamic_symbol_tables.h"
};

class NvidiaPlatform final : public Platform {
 public:
  NvidiaPlatform(void* handle, std::string path) : handle(handle), path(path) {}

  ~NvidiaPlatform() override {
    for (size_t i = 0; i < contexts.size(); ++i)
      if (contexts[i]) api.cuDevicePrimaryCtxRelease(devices[i]);
  }

  kiln_status_t resolve() {
    auto v2 = reinterpret_cast<GetProcAddressV2>(
        dlsym(handle, "cuGetProcAddress_v2"));
    auto v1 = reinterpret_cast<GetProcAddressV1>(
        dlsym(handle, "cuGetProcAddress"));
    if (!v1 && !v2)
      return makeStatus(KILN_STATUS_UNAVAILABLE,
                        "NVIDIA platform: '%s' has no cuGetProcAddress (the "
                        "driver needs an NVIDIA driver for CUDA 11.3 or newer)",
                        path.c_str());
    auto lookup = [&](const char* name, int version, void** out) {
      *out = nullptr;
      int status = 0;
      int result = v2 ? v2(name, out, version, 0, &status)
                      : v1(name, out, version, 0);
      if (result != 0) *out = nullptr;
    };
    std::string missing;
    void* symbol = nullptr;
#define KILN_CUDA_REQUIRED(name, version, ret, params)                     \
  lookup(#name, version, &symbol);                                         \
  api.name = reinterpret_cast<decltype(api.name)>(symbol);                 \
  if (!api.name)                                                           \
    missing += std::string(missing.empty() ? "" : ", ") + #name + "@" +   \
               std::to_string(version);
#define KILN_CUDA_OPTIONAL(name, version, ret, params) \
  lookup(#name, version, &symbol);                     \
  api.name = reinterpret_cast<decltype(api.name)>(symbol);
#include "drivers/hip/dynamic_symbol_tables.h"
    if (!missing.empty())
      return makeStatus(KILN_STATUS_UNAVAILABLE,
                        "NVIDIA platform: '%s' does not provide CUDA driver "
                        "functions the driver needs (name@version): %s",
                        path.c_str(), missing.c_str());
    return nullptr;
  }

  // cuInit and the device table; returns the CUDA error.
  int initialize() {
    int error = api.cuInit(0);
    if (error) return error;
    int count = 0;
    error = api.cuDeviceGetCount(&count);
    if (error) return error;
    devices.resize(size_t(count));
    contexts.assign(size_t(count), nullptr);
    for (int i = 0; i < count; ++i) {
      error = api.cuDeviceGet(&devices[size_t(i)], i);
      if (error) return error;
    }
    return 0;
  }

  const char* name() const override { return "nvidia"; }
  const std::string& libraryPath() const override { return path; }
  const char* targetBackend() const override { return "cuda"; }
  const char* executableFormat() const override { return KILN_CUDA_FORMAT; }

  std::string version() const override {
    int value = 0;
    if (api.cuDriverGetVersion(&value)) return "CUDA driver";
    return "CUDA driver " + std::to_string(value / 1000) + "." +
           std::to_string((value % 1000) / 10);
  }

  std::string errorName(hipError_t error) const override {
    const char* name = nullptr;
    const char* text = nullptr;
    api.cuGetErrorName(error, &name);
    api.cuGetErrorString(error, &text);
    std::string result = name ? name : "CUresult " + std::to_string(error);
    if (text && *text) result += std::string(" (") + text + ")";
    return result;
  }

  hipError_t getDeviceCount(int* count) override {
    *count = int(devices.size());
    return hipSuccess;
  }
  hipError_t deviceGetName(char* name, int length, int device) override {
    if (!valid(device)) return hipErrorInvalidDevice;
    return api.cuDeviceGetName(name, length, devices[size_t(device)]);
  }
  hipError_t deviceGetAttribute(int* value, hipDeviceAttribute_t attribute,
                                int device) override {
    if (!valid(device)) return hipErrorInvalidDevice;
    int cuAttribute = 0;
    switch (attribute) {
      case hipDeviceAttributeConcurrentManagedAccess:
        cuAttribute = kCuDeviceAttributeConcurrentManagedAccess;
        break;
      case hipDeviceAttributeComputeCapabilityMajor:
        cuAttribute = kCuDeviceAttributeComputeCapabilityMajor;
        break;
      case hipDeviceAttributeComputeCapabilityMinor:
        cuAttribute = kCuDeviceAttributeComputeCapabilityMinor;
        break;
      case hipDeviceAttributeManagedMemory:
        cuAttribute = kCuDeviceAttributeManagedMemory;
        break;
      case hipDeviceAttributeMultiprocessorCount:
        cuAttribute = kCuDeviceAttributeMultiprocessorCount;
        break;
      case hipDeviceAttributeMaxSharedMemoryPerBlock:
        cuAttribute = kCuDeviceAttributeMaxSharedMemoryPerBlock;
        break;
      case hipDeviceAttributeSharedMemPerBlockOptin:
        cuAttribute = kCuDeviceAttributeMaxSharedMemoryPerBlockOptin;
        break;
      case hipDeviceAttributeWarpSize:
        cuAttribute = kCuDeviceAttributeWarpSize;
        break;
      case hipDeviceAttributeMemoryPoolsSupported:
        cuAttribute = kCuDeviceAttributeMemoryPoolsSupported;
        break;
    }
    if (cuAttribute == 0) return hipErrorInvalidValue;
    return api.cuDeviceGetAttribute(value, cuAttribute, devices[size_t(device)]);
  }
  hipError_t deviceGetArchName(int device, std::string* arch) override {
    int major = 0, minor = 0;
    hipError_t error = deviceGetAttribute(
        &major, hipDeviceAttributeComputeCapabilityMajor, device);
    if (!error)
      error = deviceGetAttribute(&minor, hipDeviceAttributeComputeCapabilityMinor,
                                 device);
    if (error) return error;
    *arch = "sm_" + std::to_string(major) + std::to_string(minor);
    return hipSuccess;
  }

  hipError_t setDevice(int device) override {
    CUcontext context = nullptr;
    hipError_t error = primaryContext(device, &context);
    if (error) return error;
    return api.cuCtxSetCurrent(context);
  }
  hipError_t bindForCaller(int device, uintptr_t* token,
                           bool* restore) override {
    *restore = false;
    CUcontext current = nullptr, context = nullptr;
    hipError_t error = api.cuCtxGetCurrent(&current);
    if (error == hipSuccess) error = primaryContext(device, &context);
    if (error != hipSuccess || current == context) return error;
    error = api.cuCtxSetCurrent(context);
    *token = reinterpret_cast<uintptr_t>(current);
    *restore = error == hipSuccess && current != nullptr;
    return error;
  }
  hipError_t restoreCurrent(uintptr_t token) override {
    return api.cuCtxSetCurrent(reinterpret_cast<CUcontext>(token));
  }

  hipError_t deviceCanAccessPeer(int* canAccess, int device,
                                 int peer) override {
    if (!valid(device) || !valid(peer)) return hipErrorInvalidDevice;
    return api.cuDeviceCanAccessPeer(canAccess, devices[size_t(device)],
                                     devices[size_t(peer)]);
  }
  hipError_t deviceEnablePeerAccess(int peer) override {
    // CUDA enables access from the current context to the peer's context;
    // CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED has HIP's number (704).
    CUcontext context = nullptr;
    hipError_t error = primaryContext(peer, &context);
    if (error) return error;
    return api.cuCtxEnablePeerAccess(context, 0);
  }
  hipError_t memGetInfo(size_t* freeBytes, size_t* totalBytes) override {
    return api.cuMemGetInfo(freeBytes, totalBytes);
  }
  hipError_t pointerGetAllocation(const void* pointer, int* device,
                                  uintptr_t* start, size_t* size) override {
    auto address = reinterpret_cast<CUdeviceptr>(pointer);
    CUdeviceptr base = 0;
    hipError_t error =
        api.cuPointerGetAttribute(device, kPointerDeviceOrdinal, address);
    if (!error)
      error = api.cuPointerGetAttribute(&base, kPointerRangeStart, address);
    if (!error)
      error = api.cuPointerGetAttribute(size, kPointerRangeSize, address);
    *start = uintptr_t(base);
    return error;
  }
  hipStream_t externalStream(uint64_t value) const override {
    return reinterpret_cast<hipStream_t>(uintptr_t(value));
  }

  hipError_t malloc(void** pointer, size_t size) override {
    CUdeviceptr address = 0;
    int error = api.cuMemAlloc(&address, size);
    *pointer = error ? nullptr : reinterpret_cast<void*>(address);
    return error;
  }
  hipError_t free(void* pointer) override {
    return api.cuMemFree(reinterpret_cast<CUdeviceptr>(pointer));
  }
  hipError_t hostMalloc(void** pointer, size_t size) override {
    // With unified addressing the host pointer is also the device pointer.
    return api.cuMemHostAlloc(pointer, size,
                              kCuMemHostAllocPortable | kCuMemHostAllocDeviceMap);
  }
  hipError_t hostFree(void* pointer) override { return api.cuMemFreeHost(pointer); }
  hipError_t mallocManaged(void** pointer, size_t size) override {
    CUdeviceptr address = 0;
    int error = api.cuMemAllocManaged(&address, size, kCuMemAttachGlobal);
    *pointer = error ? nullptr : reinterpret_cast<void*>(address);
    return error;
  }
  hipError_t mallocAsync(void** pointer, size_t size,
                         hipStream_t stream) override {
    if (!api.cuMemAllocAsync) return hipErrorNotSupported;
    CUdeviceptr address = 0;
    int error = api.cuMemAllocAsync(&address, size, stream);
    *pointer = error ? nullptr : reinterpret_cast<void*>(address);
    return error;
  }
  hipError_t freeAsync(void* pointer, hipStream_t stream) override {
    if (!api.cuMemFreeAsync) return hipErrorNotSupported;
    return api.cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(pointer), stream);
  }
  hipError_t mallocSignals(void **pointer, size_t size) override {
    return malloc(pointer, size);
  }
  hipError_t ipcGetMemHandle(IpcMemHandle *handle, void *pointer) override {
    return api.cuIpcGetMemHandle(handle,
                                 reinterpret_cast<CUdeviceptr>(pointer));
  }
  hipError_t ipcOpenMemHandle(void **pointer,
                              const IpcMemHandle &handle) override {
    CUdeviceptr address = 0;
    int error =
        api.cuIpcOpenMemHandle(&address, handle, kCuIpcMemLazyEnablePeerAccess);
    *pointer = error ? nullptr : reinterpret_cast<void *>(address);
    return error;
  }
  hipError_t ipcCloseMemHandle(void *pointer) override {
    return api.cuIpcCloseMemHandle(reinterpret_cast<CUdeviceptr>(pointer));
  }
  hipError_t hostRegister(void *pointer, size_t size) override {
    return api.cuMemHostRegister(pointer, size,
                                 kCuMemHostRegisterPortable |
                                     kCuMemHostRegisterDeviceMap);
  }
  hipError_t hostGetDevicePointer(void **devicePointer,
                                  void *hostPointer) override {
    CUdeviceptr address = 0;
    int error = api.cuMemHostGetDevicePointer(&address, hostPointer, 0);
    *devicePointer = error ? nullptr : reinterpret_cast<void *>(address);
    return error;
  }
  hipError_t hostUnregister(void *pointer) override {
    return api.cuMemHostUnregister(pointer);
  }

  hipError_t streamCreate(hipStream_t* stream) override {
    return api.cuStreamCreate(stream, kCuStreamNonBlocking);
  }
  hipError_t streamDestroy(hipStream_t stream) override {
    return api.cuStreamDestroy(stream);
  }
  hipError_t streamSynchronize(hipStream_t stream) override {
    return api.cuStreamSynchronize(stream);
  }
  hipError_t streamWaitEvent(hipStream_t stream, hipEvent_t event) override {
    return api.cuStreamWaitEvent(stream, event, 0);
  }
  hipError_t launchHostFunc(hipStream_t stream, void (*function)(void*),
                            void* data) override {
    return api.cuLaunchHostFunc(stream, function, data);
  }

  hipError_t eventCreate(hipEvent_t* event) override {
    return api.cuEventCreate(event, kCuEventBlockingSync | kCuEventDisableTiming);
  }
  hipError_t eventDestroy(hipEvent_t event) override {
    return api.cuEventDestroy(event);
  }
  hipError_t eventRecord(hipEvent_t event, hipStream_t stream) override {
    return api.cuEventRecord(event, stream);
  }
  hipError_t eventSynchronize(hipEvent_t event) override {
    return api.cuEventSynchronize(event);
  }
  hipError_t eventQuery(hipEvent_t event) override {
    return api.cuEventQuery(event);
  }
  hipError_t timingEventCreate(hipEvent_t* event) override {
    return api.cuEventCreate(event, kCuEventBlockingSync);
  }
  hipError_t eventElapsedTime(float* milliseconds, hipEvent_t start,
                              hipEvent_t end) override {
    return api.cuEventElapsedTime(milliseconds, start, end);
  }

  hipError_t memcpyAsync(void* target, const void* source, size_t size,
                         hipStream_t stream) override {
    return api.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(target),
                             reinterpret_cast<CUdeviceptr>(source), size,
                             stream);
  }
  hipError_t memsetD8Async(void* target, uint8_t value, size_t count,
                           hipStream_t stream) override {
    return api.cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(target), value,
                               count, stream);
  }
  hipError_t memsetD16Async(void* target, uint16_t value, size_t count,
                            hipStream_t stream) override {
    return api.cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(target), value,
                                count, stream);
  }
  hipError_t memsetD32Async(void* target, uint32_t value, size_t count,
                            hipStream_t stream) override {
    return api.cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(target), value,
                                count, stream);
  }

  hipError_t moduleLoadData(hipModule_t* module, const void* image) override {
    return api.cuModuleLoadData(module, image);
  }
  hipError_t moduleUnload(hipModule_t module) override {
    return api.cuModuleUnload(module);
  }
  // The function is loaded now, not at its first launch. CUDA loads modules
  // lazily by default (CUDA_MODULE_LOADING=LAZY), and loading a function
  // at launch can wait for the kernels already running: a compiled
  // collective's kernel that waits for a peer on the same GPU (logical
  // devices) then never sees that peer's kernel start (seen on an H200: 8
  // ranks, all launched, spinning until the time bound). Loading also costs
  // the first call of each kernel milliseconds.
  hipError_t moduleGetFunction(hipFunction_t* function, hipModule_t module,
                               const char* name) override {
    hipError_t error = api.cuModuleGetFunction(function, module, name);
    if (error != hipSuccess) return error;
    if (api.cuFuncLoad) return api.cuFuncLoad(*function);
    // Before CUDA 12.4: reading an attribute of the code loads it.
    int registers = 0;
    return api.cuFuncGetAttribute(&registers, kCuFuncAttributeNumRegs,
                                  *function);
  }
  hipError_t functionStaticSharedBytes(hipFunction_t function,
                                       int* bytes) override {
    return api.cuFuncGetAttribute(bytes, kCuFuncAttributeSharedSizeBytes,
                                  function);
  }
  hipError_t functionAllowDynamicSharedBytes(hipFunction_t function,
                                             int bytes) override {
    return api.cuFuncSetAttribute(
        function, kCuFuncAttributeMaxDynamicSharedSizeBytes, bytes);
  }
  hipError_t moduleLaunchKernel(hipFunction_t function, const uint32_t grid[3],
                                const uint32_t block[3],
                                uint32_t dynamicSharedBytes,
                                hipStream_t stream,
                                void** kernelParams) override {
    return api.cuLaunchKernel(function, grid[0], grid[1], grid[2], block[0],
                              block[1], block[2], dynamicSharedBytes, stream,
                              kernelParams, nullptr);
  }

  hipError_t streamBeginCapture(hipStream_t stream) override {
    if (!api.cuStreamBeginCapture) return hipErrorNotSupported;
    return api.cuStreamBeginCapture(stream, kCuStreamCaptureModeThreadLocal);
  }
  hipError_t streamEndCapture(hipStream_t stream, hipGraph_t* graph) override {
    if (!api.cuStreamEndCapture) return hipErrorNotSupported;
    return api.cuStreamEndCapture(stream, graph);
  }
  hipError_t graphInstantiate(hipGraphExec_t* exec, hipGraph_t graph) override {
    if (!api.cuGraphInstantiateWithFlags) return hipErrorNotSupported;
    return api.cuGraphInstantiateWithFlags(exec, graph, 0);
  }
  hipError_t graphLaunch(hipGraphExec_t exec, hipStream_t stream) override {
    if (!api.cuGraphLaunch) return hipErrorNotSupported;
    return api.cuGraphLaunch(exec, stream);
  }
  hipError_t graphExecDestroy(hipGraphExec_t exec) override {
    if (!api.cuGraphExecDestroy) return hipErrorNotSupported;
    return api.cuGraphExecDestroy(exec);
  }
  hipError_t graphDestroy(hipGraph_t graph) override {
    if (!api.cuGraphDestroy) return hipErrorNotSupported;
    return api.cuGraphDestroy(graph);
  }

 private:
  bool valid(int device) const {
    return device >= 0 && size_t(device) < devices.size();
  }

  // |device|'s primary context, retained on first use.
  hipError_t primaryContext(int device, CUcontext* out) {
    if (!valid(device)) return hipErrorInvalidDevice;
    std::lock_guard<std::mutex> lock(mutex);
    CUcontext& context = contexts[size_t(device)];
    if (!context) {
      int error = api.cuDevicePrimaryCtxRetain(&context, devices[size_t(device)]);
      if (error) {
        context = nullptr;
        return error;
      }
    }
    *out = context;
    return hipSuccess;
  }

  void* handle;
  std::string path;
  CudaSymbols api;
  std::vector<int> devices;  // CUdevice per ordinal
  std::mutex mutex;          // guards |contexts|
  std::vector<CUcontext> contexts;
};

}  // namespace

kiln_status_t loadNvidiaPlatform(const std::string& libraryPath,
                                 std::shared_ptr<Platform>* outPlatform) {
  std::string path = libraryPath.empty() ? "libcuda.so.1" : libraryPath;
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* error = dlerror();
    return makeStatus(KILN_STATUS_UNAVAILABLE,
                      "NVIDIA platform: the CUDA driver library '%s' could not "
                      "be loaded (no NVIDIA driver installed? set $%s to its "
                      "path): %s",
                      path.c_str(), KILN_HIP_CUDA_LIBRARY_ENV,
                      error ? error : "unknown error");
  }
  // The handle is never closed: see hip_platform.h.
  auto platform = std::make_shared<NvidiaPlatform>(handle, path);
  KILN_HIP_RETURN_IF_ERROR(platform->resolve());
  int error = platform->initialize();
  int count = 0;
  if (!error) platform->getDeviceCount(&count);
  if (error || count <= 0)
    return makeStatus(KILN_STATUS_UNAVAILABLE,
                      "NVIDIA platform: '%s' (%s) loaded but reports no NVIDIA "
                      "GPU (cuInit/cuDeviceGetCount: %s)",
                      path.c_str(), platform->version().c_str(),
                      error ? platform->errorName(error).c_str() : "0 devices");
  *outPlatform = std::move(platform);
  return nullptr;
}

}  // namespace kiln::hip
