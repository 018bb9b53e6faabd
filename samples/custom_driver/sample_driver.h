// Internal interfaces of the `sample` HAL driver plugin (not installed; the
// plugin's only public face is the kiln_hal_driver_plugin_query symbol).
//
// The sample driver is a teaching example of an out-of-tree Kiln driver: a
// "device" that runs host executables (format "elf-so-v1", kiln/host_abi.h)
// one workgroup at a time on a single queue thread, with host memory as
// device memory. It uses only the installed public headers. Each object kind
// lives in its own file:
//
//   sample_driver.c          plugin entry point, host API (statuses), driver
//   sample_device.c          device and its queue (the in-order executor)
//   sample_buffer.c          allocator and buffers
//   sample_semaphore.c       timeline semaphores
//   sample_command_buffer.c  command recording and execution
//   sample_executable.c      executable cache and executables (dlopen)
//
// Objects follow the ABI's pattern: a struct whose first member is the HAL
// base struct, with a static vtable; `sample_*_cast` checks the vtable so that
// an object of another driver is refused with a status instead of being
// misread.
#ifndef KILN_SAMPLES_CUSTOM_DRIVER_SAMPLE_DRIVER_H_
#define KILN_SAMPLES_CUSTOM_DRIVER_SAMPLE_DRIVER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln/hal/driver_abi.h"
#include "kiln/host_abi.h"

// The URI scheme: `--device=sample` or `sample://0`.
#define SAMPLE_DRIVER_NAME "sample"

//===----------------------------------------------------------------------===//
// Statuses (sample_driver.c)
//===----------------------------------------------------------------------===//
// Every status goes through the kiln_hal_host_api_t the runtime handed to the
// plugin: the runtime frees the statuses we return, so they must come from
// its allocator. These wrappers are the only place that touches the host API.

void sample_set_host_api(const kiln_hal_host_api_t* host);

kiln_status_t sample_status(kiln_status_code_t code, const char* format, ...)
    KILN_PRINTF_FORMAT(2, 3);
// Appends "; <annotation>" to a failing |status| (takes ownership).
kiln_status_t sample_annotate(kiln_status_t status, const char* format, ...)
    KILN_PRINTF_FORMAT(2, 3);
kiln_status_t sample_status_clone(kiln_status_t status);
void sample_status_free(kiln_status_t status);
kiln_status_code_t sample_status_code(kiln_status_t status);
// Now on CLOCK_MONOTONIC, in nanoseconds (the clock of HAL deadlines).
kiln_time_t sample_time_now(void);

//===----------------------------------------------------------------------===//
// Objects
//===----------------------------------------------------------------------===//

// sample_device.c
kiln_status_t sample_device_create(kiln_hal_driver_t* driver, uint32_t ordinal,
                                   kiln_hal_device_t** out_device);

// sample_buffer.c. The allocator is embedded in the device.
typedef struct sample_allocator_t {
  kiln_hal_allocator_t base;
} sample_allocator_t;
void sample_allocator_initialize(sample_allocator_t* allocator);

// Creates a buffer; |allocate_now| false leaves it without storage until
// sample_buffer_allocate_storage (queue_alloca runs it on the queue).
kiln_status_t sample_buffer_create(const kiln_hal_buffer_params_t* params,
                                   kiln_device_size_t size, bool allocate_now,
                                   kiln_hal_buffer_t** out_buffer);
// True if |buffer| was made by this driver.
bool sample_buffer_isa(const kiln_hal_buffer_t* buffer);
// Host address of the buffer's first byte, or NULL while it has no storage.
uint8_t* sample_buffer_storage(kiln_hal_buffer_t* buffer);
kiln_status_t sample_buffer_allocate_storage(kiln_hal_buffer_t* buffer);
// Frees the storage of a queue_alloca'd buffer (a no-op for others, whose
// storage lives as long as the buffer object).
void sample_buffer_deallocate_storage(kiln_hal_buffer_t* buffer);

// sample_semaphore.c
kiln_status_t sample_semaphore_create(uint64_t initial_value,
                                      kiln_hal_semaphore_t** out_semaphore);

// sample_command_buffer.c
kiln_status_t sample_command_buffer_create(
    kiln_hal_command_buffer_mode_t mode, uint32_t binding_capacity,
    kiln_hal_command_buffer_t** out_command_buffer);
// Checks, at submission, that |command_buffer| is ours and that |table|
// (lengths resolved, never WHOLE_BUFFER) binds every slot it uses to a
// sample buffer range large enough.
kiln_status_t sample_command_buffer_validate(
    kiln_hal_command_buffer_t* command_buffer,
    const kiln_hal_binding_table_t* table);
// Runs the commands in order on the calling thread (the queue thread).
kiln_status_t sample_command_buffer_execute(
    kiln_hal_command_buffer_t* command_buffer,
    const kiln_hal_binding_table_t* table);

// sample_executable.c
kiln_status_t sample_executable_cache_create(
    kiln_hal_executable_cache_t** out_cache);
// The kernel of export |ordinal|, or NULL if |executable| is not ours.
kiln_host_kernel_fn_t sample_executable_kernel(kiln_hal_executable_t* executable,
                                               uint32_t ordinal);

#endif  // KILN_SAMPLES_CUSTOM_DRIVER_SAMPLE_DRIVER_H_
