// Host executables of the local driver: ELF shared objects following
// kiln/host_abi.h (format "elf-so-v1"), loaded from memory through a memfd,
// with every export's kernel function resolved at prepare time.
// Immutable after creation, so thread-safe.
#ifndef KILN_DRIVERS_LOCAL_LOCAL_EXECUTABLE_H_
#define KILN_DRIVERS_LOCAL_LOCAL_EXECUTABLE_H_

#include "kiln/hal/driver_abi.h"
#include "kiln/host_abi.h"

namespace kiln::local {

kiln_status_t createExecutableCache(kiln_hal_executable_cache_t** outCache);

// The kernel of export |ordinal| of a local executable, or nullptr if
// |executable| was not made by the local driver.
kiln_host_kernel_fn_t lookupKernel(kiln_hal_executable_t* executable,
                                   uint32_t ordinal);

}  // namespace kiln::local

#endif  // KILN_DRIVERS_LOCAL_LOCAL_EXECUTABLE_H_
