// The HIP platform layer: exactly the HIP runtime calls the HIP driver uses,
// behind one interface with two implementations:
//   - AMD (platform_amd.cc): the functions of libamdhip64, loaded with dlopen;
//   - NVIDIA (platform_nvidia.cc): the same calls implemented on the CUDA
//     driver API (libcuda.so.1, loaded with dlopen, symbols resolved by
//     version through cuGetProcAddress).
// Everything above this layer (device, queue, semaphores, command buffers)
// is platform independent.
//
// Calls return hipError_t codes with HIP's numbering (hipSuccess = 0, ...).
// HIP took its numbering from CUDA, so the NVIDIA layer returns CUresult
// values unchanged: every code the driver tests for (below) has the same
// number and meaning in both; errorName() names any code.
//
// Device binding: like HIP, calls act on the calling thread's current device;
// setDevice(ordinal) must be called on a thread before other calls for that
// device (the driver does it at every entry point; it is cheap).
//
// Ownership: a Platform owns its dlopen handle (never closed: device objects
// may still hold handles at process exit) and, on NVIDIA, the primary
// context references it retained. Shared (std::shared_ptr) by the driver and
// every object that calls into it. Thread-safe: the underlying runtimes are.
#ifndef KILN_DRIVERS_HIP_HIP_PLATFORM_H_
#define KILN_DRIVERS_HIP_HIP_PLATFORM_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "kiln/status.h"

namespace kiln::hip {

// HIP types, declared here so that no HIP or CUDA header is needed (their
// struct layouts change between versions; handles are opaque pointers on
// both platforms).
using hipError_t = int;
using hipStream_t = struct HipOpaqueStream*;
using hipEvent_t = struct HipOpaqueEvent*;
using hipModule_t = struct HipOpaqueModule*;
using hipFunction_t = struct HipOpaqueFunction*;
using hipGraph_t = struct HipOpaqueGraph*;
using hipGraphExec_t = struct HipOpaqueGraphExec*;
// An interprocess handle of device memory: hipIpcMemHandle_t and
// CUipcMemHandle are both 64 opaque bytes, passed by value.
struct IpcMemHandle {
  char reserved[64];
};

// hipError_t values the driver tests for (HIP numbering).
constexpr hipError_t hipSuccess = 0;
constexpr hipError_t hipErrorInvalidValue = 1;
constexpr hipError_t hipErrorOutOfMemory = 2;
constexpr hipError_t hipErrorNoDevice = 100;
constexpr hipError_t hipErrorInvalidDevice = 101;
constexpr hipError_t hipErrorInvalidImage = 200;
constexpr hipError_t hipErrorNoBinaryForGpu = 209;
constexpr hipError_t hipErrorInvalidKernelFile = 218;
constexpr hipError_t hipErrorSharedObjectInitFailed = 303;
constexpr hipError_t hipErrorNotFound = 500;
constexpr hipError_t hipErrorNotReady = 600;
constexpr hipError_t hipErrorPeerAccessAlreadyEnabled = 704;
constexpr hipError_t hipErrorLaunchFailure = 719;
constexpr hipError_t hipErrorNotSupported = 801;
constexpr hipError_t hipErrorUnknown = 999;

// hipDeviceAttribute_t values the driver queries. These sit in the
// CUDA-compatible block of the enum, whose numbering HIP 5 and 6 share.
enum hipDeviceAttribute_t : int {
  hipDeviceAttributeConcurrentManagedAccess = 9,
  hipDeviceAttributeComputeCapabilityMajor = 23,
  hipDeviceAttributeManagedMemory = 24,
  hipDeviceAttributeComputeCapabilityMinor = 61,
  hipDeviceAttributeMultiprocessorCount = 63,
  hipDeviceAttributeMaxSharedMemoryPerBlock = 74,
  hipDeviceAttributeSharedMemPerBlockOptin = 75,
  hipDeviceAttributeWarpSize = 87,
  hipDeviceAttributeMemoryPoolsSupported = 88,
};

// Pointer attributes (hipPointer_attribute, CUpointer_attribute: numbered
// alike) pointerGetAllocation reads.
constexpr int kPointerDeviceOrdinal = 9;
constexpr int kPointerRangeStart = 11;
constexpr int kPointerRangeSize = 12;

class Platform {
 public:
  virtual ~Platform() = default;

  // "amd" or "nvidia".
  virtual const char* name() const = 0;
  // The library this platform loaded (path as given to dlopen).
  virtual const std::string& libraryPath() const = 0;
  // Compiler target backend of this platform's binaries ("rocm", "cuda") and
  // the executable format it loads ("hsaco", "ptx").
  virtual const char* targetBackend() const = 0;
  virtual const char* executableFormat() const = 0;
  // Human readable version of the runtime ("HIP 5.2", "CUDA driver 13.0").
  virtual std::string version() const = 0;
  // "hipErrorOutOfMemory (out of memory)" style text for messages.
  virtual std::string errorName(hipError_t error) const = 0;

  // Devices.
  virtual hipError_t getDeviceCount(int* count) = 0;
  virtual hipError_t deviceGetName(char* name, int length, int device) = 0;
  virtual hipError_t deviceGetAttribute(int* value,
                                        hipDeviceAttribute_t attribute,
                                        int device) = 0;
  // The chip name binaries are compiled for: "gfx942" (gcnArchName without
  // feature suffixes), "sm_90".
  virtual hipError_t deviceGetArchName(int device, std::string* arch) = 0;
  virtual hipError_t setDevice(int device) = 0;
  // setDevice on a thread that is not the driver's own (an embedder's
  // thread may use the GPU API itself). When the thread had another device
  // (CUDA context) current, *restore is set and restoreCurrent(*token) puts
  // it back afterwards; a thread that had this device, or nothing, current
  // keeps this device (as after a first CUDA runtime call), so repeated
  // calls switch nothing.
  virtual hipError_t bindForCaller(int device, uintptr_t* token,
                                   bool* restore) = 0;
  virtual hipError_t restoreCurrent(uintptr_t token) = 0;
  // Whether |device| can address |peer|'s memory directly (NVLink, PCIe P2P).
  virtual hipError_t deviceCanAccessPeer(int* canAccess, int device,
                                         int peer) = 0;
  // Lets the current device access |peer|'s memory directly. Returns
  // hipErrorPeerAccessAlreadyEnabled when it already can.
  virtual hipError_t deviceEnablePeerAccess(int peer) = 0;
  virtual hipError_t memGetInfo(size_t* freeBytes, size_t* totalBytes) = 0;
  // The allocation that holds |pointer|: the ordinal of its device and its
  // address range (pointer attributes DEVICE_ORDINAL, RANGE_START_ADDR and
  // RANGE_SIZE, which HIP and CUDA number alike). hipErrorNotSupported where
  // the runtime cannot tell.
  virtual hipError_t pointerGetAllocation(const void* pointer, int* device,
                                          uintptr_t* start, size_t* size) = 0;
  // The stream a DLPack stream value names: on NVIDIA the value itself (1 is
  // CU_STREAM_LEGACY, 2 CU_STREAM_PER_THREAD, others handles); on AMD 0 and
  // 1 name the null stream.
  virtual hipStream_t externalStream(uint64_t value) const = 0;

  // Memory. hostMalloc returns pinned, mapped, portable host memory usable by
  // the device at the same address; mallocManaged returns memory attached
  // globally (host and device access).
  virtual hipError_t malloc(void** pointer, size_t size) = 0;
  virtual hipError_t free(void* pointer) = 0;
  virtual hipError_t hostMalloc(void** pointer, size_t size) = 0;
  virtual hipError_t hostFree(void* pointer) = 0;
  virtual hipError_t mallocManaged(void** pointer, size_t size) = 0;
  virtual hipError_t mallocAsync(void** pointer, size_t size,
                                 hipStream_t stream) = 0;
  virtual hipError_t freeAsync(void* pointer, hipStream_t stream) = 0;
  // Device memory for signal slots that other GPUs write and this one polls
  // (and the reverse): on AMD uncached fine-grained memory
  // (hipExtMallocWithFlags(hipDeviceMallocUncached), so that peers' stores
  // are seen without cache maintenance; hipMalloc where the runtime lacks
  // it), on NVIDIA plain device memory (system-scope atomics suffice). Both
  // can be exported with ipcGetMemHandle; free with free().
  virtual hipError_t mallocSignals(void **pointer, size_t size) = 0;

  // Interprocess memory (device memory from malloc/mallocSignals): the
  // handle of an allocation; mapping a handle another process exported into
  // this one (peer access to the owner's GPU enabled lazily), and unmapping
  // it. A process cannot open its own handles.
  virtual hipError_t ipcGetMemHandle(IpcMemHandle *handle, void *pointer) = 0;
  virtual hipError_t ipcOpenMemHandle(void **pointer,
                                      const IpcMemHandle &handle) = 0;
  virtual hipError_t ipcCloseMemHandle(void *pointer) = 0;
  // Pins existing host memory (e.g. a shared memory mapping), mapped for
  // every device (portable); the address kernels use for it; and unpinning.
  virtual hipError_t hostRegister(void *pointer, size_t size) = 0;
  virtual hipError_t hostGetDevicePointer(void **devicePointer,
                                          void *hostPointer) = 0;
  virtual hipError_t hostUnregister(void *pointer) = 0;

  // Streams (created non-blocking: no implicit sync with the null stream).
  virtual hipError_t streamCreate(hipStream_t* stream) = 0;
  virtual hipError_t streamDestroy(hipStream_t stream) = 0;
  virtual hipError_t streamSynchronize(hipStream_t stream) = 0;
  virtual hipError_t streamWaitEvent(hipStream_t stream, hipEvent_t event) = 0;
  // Enqueues |function|(|data|) on |stream|: it runs on a runtime thread once
  // the work before it is done, and the stream's later work waits for it to
  // return. It must not call the device API. It may not be called at all if
  // the device context fails.
  virtual hipError_t launchHostFunc(hipStream_t stream,
                                    void (*function)(void*), void* data) = 0;

  // Events (created without timing and with blocking sync, so a host thread
  // waiting on one sleeps instead of spinning).
  virtual hipError_t eventCreate(hipEvent_t* event) = 0;
  virtual hipError_t eventDestroy(hipEvent_t event) = 0;
  virtual hipError_t eventRecord(hipEvent_t event, hipStream_t stream) = 0;
  virtual hipError_t eventSynchronize(hipEvent_t event) = 0;
  virtual hipError_t eventQuery(hipEvent_t event) = 0;
  // Events that keep timestamps (for profiling; blocking sync too, as the
  // last of a submission's also marks its completion), and the milliseconds
  // between two of them once both completed.
  virtual hipError_t timingEventCreate(hipEvent_t* event) = 0;
  virtual hipError_t eventElapsedTime(float* milliseconds, hipEvent_t start,
                                      hipEvent_t end) = 0;

  // Transfers (unified addressing: the direction comes from the pointers).
  virtual hipError_t memcpyAsync(void* target, const void* source,
                                 size_t size, hipStream_t stream) = 0;
  virtual hipError_t memsetD8Async(void* target, uint8_t value, size_t count,
                                   hipStream_t stream) = 0;
  virtual hipError_t memsetD16Async(void* target, uint16_t value,
                                    size_t count, hipStream_t stream) = 0;
  virtual hipError_t memsetD32Async(void* target, uint32_t value,
                                    size_t count, hipStream_t stream) = 0;

  // Code objects and launches.
  virtual hipError_t moduleLoadData(hipModule_t* module, const void* image) = 0;
  virtual hipError_t moduleUnload(hipModule_t module) = 0;
  virtual hipError_t moduleGetFunction(hipFunction_t* function,
                                       hipModule_t module,
                                       const char* name) = 0;
  // Shared memory `function` reserves statically (bytes).
  virtual hipError_t functionStaticSharedBytes(hipFunction_t function,
                                               int* bytes) = 0;
  // Lets launches of `function` pass up to `bytes` of dynamic shared
  // memory: CUDA requires this opt-in above 48 KiB; AMD allows any amount
  // up to the LDS size without one (the call only checks the limit there).
  virtual hipError_t functionAllowDynamicSharedBytes(hipFunction_t function,
                                                     int bytes) = 0;
  virtual hipError_t moduleLaunchKernel(hipFunction_t function,
                                        const uint32_t grid[3],
                                        const uint32_t block[3],
                                        uint32_t dynamicSharedBytes,
                                        hipStream_t stream,
                                        void** kernelParams) = 0;

  // Graphs, built by capturing a stream (thread-local capture mode).
  virtual hipError_t streamBeginCapture(hipStream_t stream) = 0;
  virtual hipError_t streamEndCapture(hipStream_t stream,
                                      hipGraph_t* graph) = 0;
  virtual hipError_t graphInstantiate(hipGraphExec_t* exec,
                                      hipGraph_t graph) = 0;
  virtual hipError_t graphLaunch(hipGraphExec_t exec, hipStream_t stream) = 0;
  virtual hipError_t graphExecDestroy(hipGraphExec_t exec) = 0;
  virtual hipError_t graphDestroy(hipGraph_t graph) = 0;
};

// Environment variables (driver options; docs/drivers.md).
#define KILN_HIP_PLATFORM_ENV "KILN_HIP_PLATFORM"          // auto|amd|nvidia
#define KILN_HIP_AMD_LIBRARY_ENV "KILN_HIP_AMD_LIBRARY"    // libamdhip64 path
#define KILN_HIP_CUDA_LIBRARY_ENV "KILN_HIP_CUDA_LIBRARY"  // libcuda path

// Loads one platform. On success the platform has at least one device.
// Errors (UNAVAILABLE, or NOT_FOUND for a missing library) name the library
// tried and what it reported. |libraryPath| empty: the default names.
kiln_status_t loadAmdPlatform(const std::string& libraryPath,
                              std::shared_ptr<Platform>* outPlatform);
kiln_status_t loadNvidiaPlatform(const std::string& libraryPath,
                                 std::shared_ptr<Platform>* outPlatform);

// Picks the platform from $KILN_HIP_PLATFORM (default auto: AMD if an AMD
// device is present, else NVIDIA). The error of "auto" reports both tries.
kiln_status_t selectPlatform(std::shared_ptr<Platform>* outPlatform);

// Turns a failed call into a status: "<what> on <platform>: <error name>".
// Out-of-memory errors become RESOURCE_EXHAUSTED, the rest |code|.
kiln_status_t platformError(const Platform& platform, hipError_t error,
                            kiln_status_code_t code, const char* what);

}  // namespace kiln::hip

#endif  // KILN_DRIVERS_HIP_HIP_PLATFORM_H_
