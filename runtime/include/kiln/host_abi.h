// The ABI between host (x86-64) executables emitted by kiln-compile
// (--target=host, format "elf-so-v1") and the `local` CPU driver.
//
// A host executable is an ELF shared object. For every ExecutableExport of its
// variant it defines a function with the export's name and this type:
//
//   int32_t name(const kiln_host_dispatch_state_t* state,
//                uint32_t workgroup_x, uint32_t workgroup_y,
//                uint32_t workgroup_z);
//
// The driver calls it once per workgroup of the export's workgroup_count grid,
// from any number of threads concurrently (workgroups are independent; a
// kernel must not assume an order). It returns 0 on success; any other value
// is a kernel failure that the driver reports as a dispatch error.
//
// Compiled collectives (kiln.window_collective) are the exception: workgroup
// w of every rank waits for workgroup w of its peers. A driver runs them
// correctly when it starts a dispatch's workgroups in increasing linear order
// (x fastest) and keeps every started workgroup running until it returns,
// with at least one thread per device (the local driver's parallelFor does:
// indices are claimed in order and the queue thread takes part). Their status
// codes: 2, the window's peer table does not hold the kernel's own signals
// (a driver bug); 3, a peer did not signal within 120 s (it failed, or the
// ranks run different programs); 4, a peer released its window (the group's
// abort word, hal.h) while this rank waited for it.
//
// Kernel bindings are raw pointers to the first byte of each bound range, in
// the order of the DispatchCommand's bindings. Pointers are aligned to at
// least 16 bytes when the bound offset is. Math functions may be imported
// from libm (resolved by the dynamic loader when the driver dlopens the
// object), and compiled collectives import sched_yield and time from libc;
// no other external symbol may be referenced.
#ifndef KILN_HOST_ABI_H_
#define KILN_HOST_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kiln_host_dispatch_state_t {
  // binding_count pointers, one per binding (offset already applied).
  void* const* bindings;
  // binding_count byte lengths of the bound ranges.
  const uint64_t* binding_lengths;
  // push_constant_count 32-bit values.
  const uint32_t* push_constants;
  uint32_t binding_count;
  uint32_t push_constant_count;
  uint32_t workgroup_count[3];
} kiln_host_dispatch_state_t;

typedef int32_t (*kiln_host_kernel_fn_t)(const kiln_host_dispatch_state_t* state,
                                         uint32_t workgroup_x,
                                         uint32_t workgroup_y,
                                         uint32_t workgroup_z);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // KILN_HOST_ABI_H_
