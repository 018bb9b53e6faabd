// Every device-API function the HIP driver loads at run time, one table per
// platform (the one place that lists them; IREE's dynamic_symbol_tables.h
// pattern). Each user defines the macros it needs, includes this file, and
// the macros are undefined again at the end.
//
// KILN_AMD_REQUIRED(name, return type, (parameter types))
// KILN_AMD_OPTIONAL(name, return type, (parameter types))
//   libamdhip64 C functions. Optional ones are absent from some HIP versions
//   (the driver falls back: no memory pools, no graphs). Only handles,
//   integers and pointers appear: no struct whose layout changed between
//   HIP 5 and 6 (hipDeviceProp_t is read as bytes, see platform_amd.cc).
//
// KILN_NCCL_REQUIRED(name, return type, (parameter types))
// KILN_NCCL_OPTIONAL(name, return type, (parameter types))
//   NCCL / RCCL functions (same C API; ncclResult_t is an int), loaded with
//   dlsym from libnccl.so.2 or librccl when a process first uses a
//   collective channel (nccl_library.cc). ncclCommSplit is optional (NCCL
//   2.18+): without it channel_split is UNIMPLEMENTED.
//
// KILN_CUDA_REQUIRED(name, CUDA version, return type, (parameter types))
// KILN_CUDA_OPTIONAL(name, CUDA version, return type, (parameter types))
//   CUDA driver API functions, resolved with cuGetProcAddress(name, version):
//   the version selects the ABI variant (several calls changed signature
//   under a _v2/_v3 name: cuMemAlloc_v2, cuStreamDestroy_v2,
//   cuStreamBeginCapture_v2, ...), so the name here is the base name and the
//   version is the CUDA release whose signature the parameter list matches.

#ifndef KILN_AMD_REQUIRED
#define KILN_AMD_REQUIRED(name, ret, params)
#endif
#ifndef KILN_AMD_OPTIONAL
#define KILN_AMD_OPTIONAL(name, ret, params)
#endif
#ifndef KILN_CUDA_REQUIRED
#define KILN_CUDA_REQUIRED(name, version, ret, params)
#endif
#ifndef KILN_CUDA_OPTIONAL
#define KILN_CUDA_OPTIONAL(name, version, ret, params)
#endif
#ifndef KILN_NCCL_REQUIRED
#define KILN_NCCL_REQUIRED(name, ret, params)
#endif
#ifndef KILN_NCCL_OPTIONAL
#define KILN_NCCL_OPTIONAL(name, ret, params)
#endif

//===----------------------------------------------------------------------===//
// AMD: libamdhip64 (HIP runtime API)
//===----------------------------------------------------------------------===//

KILN_AMD_REQUIRED(hipInit, int, (unsigned int))
KILN_AMD_REQUIRED(hipRuntimeGetVersion, int, (int*))
KILN_AMD_REQUIRED(hipGetErrorName, const char*, (int))
KILN_AMD_REQUIRED(hipGetErrorString, const char*, (int))
KILN_AMD_REQUIRED(hipGetDeviceCount, int, (int*))
KILN_AMD_REQUIRED(hipDeviceGetName, int, (char*, int, int))
KILN_AMD_REQUIRED(hipDeviceGetAttribute, int, (int*, int, int))
// Filled into an oversized zeroed byte buffer; only gcnArchName is read.
KILN_AMD_REQUIRED(hipGetDeviceProperties, int, (void*, int))
KILN_AMD_OPTIONAL(hipGetDevicePropertiesR0600, int, (void*, int))
KILN_AMD_REQUIRED(hipSetDevice, int, (int))
KILN_AMD_REQUIRED(hipGetDevice, int, (int*))
KILN_AMD_REQUIRED(hipDeviceCanAccessPeer, int, (int*, int, int))
KILN_AMD_REQUIRED(hipDeviceEnablePeerAccess, int, (int, unsigned int))
KILN_AMD_REQUIRED(hipMemGetInfo, int, (size_t*, size_t*))
KILN_AMD_OPTIONAL(hipPointerGetAttribute, int, (void*, int, const void*))
KILN_AMD_REQUIRED(hipMalloc, int, (void**, size_t))
KILN_AMD_REQUIRED(hipFree, int, (void*))
KILN_AMD_REQUIRED(hipHostMalloc, int, (void**, size_t, unsigned int))
KILN_AMD_REQUIRED(hipHostFree, int, (void*))
KILN_AMD_REQUIRED(hipMallocManaged, int, (void**, size_t, unsigned int))
KILN_AMD_OPTIONAL(hipExtMallocWithFlags, int, (void **, size_t, unsigned int))
KILN_AMD_REQUIRED(hipIpcGetMemHandle, int, (IpcMemHandle *, void *))
KILN_AMD_REQUIRED(hipIpcOpenMemHandle, int,
                  (void **, IpcMemHandle, unsigned int))
KILN_AMD_REQUIRED(hipIpcCloseMemHandle, int, (void *))
KILN_AMD_REQUIRED(hipHostRegister, int, (void *, size_t, unsigned int))
KILN_AMD_REQUIRED(hipHostGetDevicePointer, int, (void **, void *, unsigned int))
KILN_AMD_REQUIRED(hipHostUnregister, int, (void *))
KILN_AMD_OPTIONAL(hipMallocAsync, int, (void**, size_t, hipStream_t))
KILN_AMD_OPTIONAL(hipFreeAsync, int, (void*, hipStream_t))
KILN_AMD_REQUIRED(hipStreamCreateWithFlags, int, (hipStream_t*, unsigned int))
KILN_AMD_REQUIRED(hipStreamDestroy, int, (hipStream_t))
KILN_AMD_REQUIRED(hipStreamSynchronize, int, (hipStream_t))
KILN_AMD_REQUIRED(hipStreamWaitEvent, int, (hipStream_t, hipEvent_t, unsigned int))
// hipLaunchHostFunc is newer than HIP 5.2; stream callbacks serve instead.
KILN_AMD_REQUIRED(hipStreamAddCallback, int, (hipStream_t, void (*)(hipStream_t, int, void*), void*, unsigned int))
KILN_AMD_REQUIRED(hipEventCreateWithFlags, int, (hipEvent_t*, unsigned int))
KILN_AMD_REQUIRED(hipEventDestroy, int, (hipEvent_t))
KILN_AMD_REQUIRED(hipEventRecord, int, (hipEvent_t, hipStream_t))
KILN_AMD_REQUIRED(hipEventSynchronize, int, (hipEvent_t))
KILN_AMD_REQUIRED(hipEventQuery, int, (hipEvent_t))
KILN_AMD_REQUIRED(hipEventElapsedTime, int, (float*, hipEvent_t, hipEvent_t))
KILN_AMD_REQUIRED(hipMemcpyAsync, int, (void*, const void*, size_t, int, hipStream_t))
KILN_AMD_REQUIRED(hipMemsetD8Async, int, (void*, unsigned char, size_t, hipStream_t))
KILN_AMD_REQUIRED(hipMemsetD16Async, int, (void*, unsigned short, size_t, hipStream_t))
KILN_AMD_REQUIRED(hipMemsetD32Async, int, (void*, int, size_t, hipStream_t))
KILN_AMD_REQUIRED(hipModuleLoadData, int, (hipModule_t*, const void*))
KILN_AMD_REQUIRED(hipModuleUnload, int, (hipModule_t))
KILN_AMD_REQUIRED(hipModuleGetFunction, int, (hipFunction_t*, hipModule_t, const char*))
KILN_AMD_REQUIRED(hipFuncGetAttribute, int, (int*, int, hipFunction_t))
KILN_AMD_REQUIRED(hipModuleLaunchKernel, int,
                  (hipFunction_t, unsigned int, unsigned int, unsigned int,
                   unsigned int, unsigned int, unsigned int, unsigned int,
                   hipStream_t, void**, void**))
KILN_AMD_OPTIONAL(hipStreamBeginCapture, int, (hipStream_t, int))
KILN_AMD_OPTIONAL(hipStreamEndCapture, int, (hipStream_t, hipGraph_t*))
KILN_AMD_OPTIONAL(hipGraphInstantiate, int,
                  (hipGraphExec_t*, hipGraph_t, void*, char*, size_t))
KILN_AMD_OPTIONAL(hipGraphLaunch, int, (hipGraphExec_t, hipStream_t))
KILN_AMD_OPTIONAL(hipGraphExecDestroy, int, (hipGraphExec_t))
KILN_AMD_OPTIONAL(hipGraphDestroy, int, (hipGraph_t))

//===----------------------------------------------------------------------===//
// NVIDIA: libcuda (CUDA driver API), under the HIP calls above
//===----------------------------------------------------------------------===//

KILN_CUDA_REQUIRED(cuInit, 2000, int, (unsigned int))
KILN_CUDA_REQUIRED(cuDriverGetVersion, 2020, int, (int*))
KILN_CUDA_REQUIRED(cuGetErrorName, 6000, int, (int, const char**))
KILN_CUDA_REQUIRED(cuGetErrorString, 6000, int, (int, const char**))
KILN_CUDA_REQUIRED(cuDeviceGetCount, 2000, int, (int*))
KILN_CUDA_REQUIRED(cuDeviceGet, 2000, int, (int*, int))
KILN_CUDA_REQUIRED(cuDeviceGetName, 2000, int, (char*, int, int))
KILN_CUDA_REQUIRED(cuDeviceGetAttribute, 2000, int, (int*, int, int))
KILN_CUDA_REQUIRED(cuDevicePrimaryCtxRetain, 7000, int, (CUcontext*, int))
KILN_CUDA_REQUIRED(cuDevicePrimaryCtxRelease, 11000, int, (int))
KILN_CUDA_REQUIRED(cuCtxSetCurrent, 4000, int, (CUcontext))
KILN_CUDA_REQUIRED(cuCtxGetCurrent, 4000, int, (CUcontext*))
KILN_CUDA_REQUIRED(cuDeviceCanAccessPeer, 4000, int, (int*, int, int))
KILN_CUDA_REQUIRED(cuCtxEnablePeerAccess, 4000, int, (CUcontext, unsigned int))
KILN_CUDA_REQUIRED(cuMemGetInfo, 3020, int, (size_t*, size_t*))
KILN_CUDA_REQUIRED(cuPointerGetAttribute, 4000, int, (void*, int, CUdeviceptr))
KILN_CUDA_REQUIRED(cuMemAlloc, 3020, int, (CUdeviceptr*, size_t))
KILN_CUDA_REQUIRED(cuMemFree, 3020, int, (CUdeviceptr))
KILN_CUDA_REQUIRED(cuMemHostAlloc, 3020, int, (void**, size_t, unsigned int))
KILN_CUDA_REQUIRED(cuMemFreeHost, 2000, int, (void*))
KILN_CUDA_REQUIRED(cuMemAllocManaged, 6000, int, (CUdeviceptr*, size_t, unsigned int))
KILN_CUDA_REQUIRED(cuIpcGetMemHandle, 4010, int, (IpcMemHandle *, CUdeviceptr))
KILN_CUDA_REQUIRED(cuIpcOpenMemHandle, 11000, int,
                   (CUdeviceptr *, IpcMemHandle, unsigned int))
KILN_CUDA_REQUIRED(cuIpcCloseMemHandle, 4010, int, (CUdeviceptr))
KILN_CUDA_REQUIRED(cuMemHostRegister, 6050, int, (void *, size_t, unsigned int))
KILN_CUDA_REQUIRED(cuMemHostGetDevicePointer, 3020, int,
                   (CUdeviceptr *, void *, unsigned int))
KILN_CUDA_REQUIRED(cuMemHostUnregister, 4000, int, (void *))
KILN_CUDA_OPTIONAL(cuMemAllocAsync, 11020, int, (CUdeviceptr*, size_t, hipStream_t))
KILN_CUDA_OPTIONAL(cuMemFreeAsync, 11020, int, (CUdeviceptr, hipStream_t))
KILN_CUDA_REQUIRED(cuStreamCreate, 2000, int, (hipStream_t*, unsigned int))
KILN_CUDA_REQUIRED(cuStreamDestroy, 4000, int, (hipStream_t))
KILN_CUDA_REQUIRED(cuStreamSynchronize, 2000, int, (hipStream_t))
KILN_CUDA_REQUIRED(cuStreamWaitEvent, 3020, int, (hipStream_t, hipEvent_t, unsigned int))
KILN_CUDA_REQUIRED(cuLaunchHostFunc, 10000, int, (hipStream_t, void (*)(void*), void*))
KILN_CUDA_REQUIRED(cuEventCreate, 2000, int, (hipEvent_t*, unsigned int))
KILN_CUDA_REQUIRED(cuEventDestroy, 4000, int, (hipEvent_t))
KILN_CUDA_REQUIRED(cuEventRecord, 2000, int, (hipEvent_t, hipStream_t))
KILN_CUDA_REQUIRED(cuEventSynchronize, 2000, int, (hipEvent_t))
KILN_CUDA_REQUIRED(cuEventQuery, 2000, int, (hipEvent_t))
KILN_CUDA_REQUIRED(cuEventElapsedTime, 2000, int, (float*, hipEvent_t, hipEvent_t))
KILN_CUDA_REQUIRED(cuMemcpyAsync, 4000, int, (CUdeviceptr, CUdeviceptr, size_t, hipStream_t))
KILN_CUDA_REQUIRED(cuMemsetD8Async, 3020, int, (CUdeviceptr, unsigned char, size_t, hipStream_t))
KILN_CUDA_REQUIRED(cuMemsetD16Async, 3020, int, (CUdeviceptr, unsigned short, size_t, hipStream_t))
KILN_CUDA_REQUIRED(cuMemsetD32Async, 3020, int, (CUdeviceptr, unsigned int, size_t, hipStream_t))
KILN_CUDA_REQUIRED(cuModuleLoadData, 2000, int, (hipModule_t*, const void*))
KILN_CUDA_REQUIRED(cuModuleUnload, 2000, int, (hipModule_t))
KILN_CUDA_REQUIRED(cuModuleGetFunction, 2000, int, (hipFunction_t*, hipModule_t, const char*))
KILN_CUDA_REQUIRED(cuFuncGetAttribute, 2020, int, (int*, int, hipFunction_t))
KILN_CUDA_REQUIRED(cuFuncSetAttribute, 9000, int, (hipFunction_t, int, int))
KILN_CUDA_OPTIONAL(cuFuncLoad, 12040, int, (hipFunction_t))
KILN_CUDA_REQUIRED(cuLaunchKernel, 4000, int,
                   (hipFunction_t, unsigned int, unsigned int, unsigned int,
                    unsigned int, unsigned int, unsigned int, unsigned int,
                    hipStream_t, void**, void**))
KILN_CUDA_OPTIONAL(cuStreamBeginCapture, 10010, int, (hipStream_t, int))
KILN_CUDA_OPTIONAL(cuStreamEndCapture, 10000, int, (hipStream_t, hipGraph_t*))
KILN_CUDA_OPTIONAL(cuGraphInstantiateWithFlags, 11040, int,
                   (hipGraphExec_t*, hipGraph_t, unsigned long long))
KILN_CUDA_OPTIONAL(cuGraphLaunch, 10000, int, (hipGraphExec_t, hipStream_t))
KILN_CUDA_OPTIONAL(cuGraphExecDestroy, 10000, int, (hipGraphExec_t))
KILN_CUDA_OPTIONAL(cuGraphDestroy, 10000, int, (hipGraph_t))

//===----------------------------------------------------------------------===//
// Collectives: NCCL (NVIDIA) / RCCL (AMD)
//===----------------------------------------------------------------------===//

KILN_NCCL_REQUIRED(ncclGetVersion, int, (int*))
KILN_NCCL_REQUIRED(ncclGetErrorString, const char*, (int))
KILN_NCCL_REQUIRED(ncclGetUniqueId, int, (ncclUniqueId*))
KILN_NCCL_REQUIRED(ncclCommInitRank, int, (ncclComm_t*, int, ncclUniqueId, int))
KILN_NCCL_OPTIONAL(ncclCommSplit, int, (ncclComm_t, int, int, ncclComm_t*, void*))
KILN_NCCL_REQUIRED(ncclCommDestroy, int, (ncclComm_t))
KILN_NCCL_REQUIRED(ncclCommAbort, int, (ncclComm_t))
KILN_NCCL_REQUIRED(ncclCommGetAsyncError, int, (ncclComm_t, int*))
KILN_NCCL_REQUIRED(ncclCommCount, int, (ncclComm_t, int*))
KILN_NCCL_REQUIRED(ncclCommUserRank, int, (ncclComm_t, int*))
KILN_NCCL_REQUIRED(ncclGroupStart, int, ())
KILN_NCCL_REQUIRED(ncclGroupEnd, int, ())
KILN_NCCL_REQUIRED(ncclAllReduce, int, (const void*, void*, size_t, int, int,
                                   ncclComm_t, hipStream_t))
KILN_NCCL_REQUIRED(ncclAllGather, int, (const void*, void*, size_t, int,
                                   ncclComm_t, hipStream_t))
KILN_NCCL_REQUIRED(ncclReduceScatter, int, (const void*, void*, size_t, int, int,
                                       ncclComm_t, hipStream_t))
KILN_NCCL_REQUIRED(ncclBroadcast, int, (const void*, void*, size_t, int, int,
                                   ncclComm_t, hipStream_t))
KILN_NCCL_REQUIRED(ncclSend, int, (const void*, size_t, int, int, ncclComm_t,
                              hipStream_t))
KILN_NCCL_REQUIRED(ncclRecv, int, (void*, size_t, int, int, ncclComm_t,
                              hipStream_t))

#undef KILN_AMD_REQUIRED
#undef KILN_AMD_OPTIONAL
#undef KILN_CUDA_REQUIRED
#undef KILN_CUDA_OPTIONAL
#undef KILN_NCCL_REQUIRED
#undef KILN_NCCL_OPTIONAL
