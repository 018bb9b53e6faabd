// Executables of the HIP driver: a code object loaded with hipModuleLoadData
// ("hsaco" on AMD, "ptx" on NVIDIA, which the CUDA driver JIT-compiles),
// with every export's kernel function resolved at prepare time.
//
// Kernel ABI (what compiled GPU kernels take): one device pointer per
// binding, in binding order, followed by the push constants as 32-bit
// integers. The launch uses the export's workgroup size; the dispatch's
// workgroup count is the grid. shared_memory_bytes is the kernel's static
// shared memory (reserved by the code object itself), so launches pass no
// dynamic shared memory; it is checked against the device's limit.
//
// The executable cache also answers target queries: can_prepare_format
// accepts the device's exact target ("cuda:sm_90", "rocm:gfx942") besides
// the binary format, so the module loader can prefer variants built for
// this very chip. A binary for a chip the device cannot run is
// INCOMPATIBLE, naming both: a params target ("cuda:sm_90", "rocm:gfx942")
// of another backend, a cuda sm above the device's or another gfx chip; a
// PTX .target above the device's sm; an HSACO for another gfx.
// Immutable after creation, so thread-safe.
#ifndef KILN_DRIVERS_HIP_HIP_EXECUTABLE_H_
#define KILN_DRIVERS_HIP_HIP_EXECUTABLE_H_

#include <memory>

#include "drivers/hip/hip_context.h"
#include "kiln/hal/driver_abi.h"

namespace kiln::hip {

kiln_status_t createExecutableCache(std::shared_ptr<const DeviceContext> context,
                                    kiln_hal_executable_cache_t** outCache);

struct KernelInfo {
  hipFunction_t function = nullptr;
  uint32_t blockSize[3] = {1, 1, 1};
  // Shared memory the export needs beyond what the code object reserves
  // statically, passed to every launch.
  uint32_t dynamicSharedBytes = 0;
};

// The kernel of export |ordinal|, or nullptr if |executable| was not made by
// the HIP driver (or the ordinal is out of range).
const KernelInfo* lookupKernel(kiln_hal_executable_t* executable,
                               uint32_t ordinal);

}  // namespace kiln::hip

#endif  // KILN_DRIVERS_HIP_HIP_EXECUTABLE_H_
