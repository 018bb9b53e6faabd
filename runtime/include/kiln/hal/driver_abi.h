// The Kiln HAL driver ABI (versioned, plain C11): what a driver implements so
// that the HAL core (kiln/hal/hal.h) can use it. Drivers are either built into
// the runtime (the `local` CPU driver) or shared libraries loaded at run time
// (plugins); both register through the same entry point and vtables.
//
// How a driver is written:
//  - Each HAL object the driver creates is a C struct whose FIRST member is
//    the matching base struct below (kiln_hal_device_t, kiln_hal_buffer_t,
//    ...), which begins with kiln_hal_resource_t: a reference count and the
//    driver's vtable. The HAL core casts pointers to the base struct; the
//    driver casts them back (checking the vtable pointer when an object may
//    come from another driver).
//  - Initialize the base with the kiln_hal_*_initialize helpers below (they
//    set the reference count to 1). `destroy` in each vtable is called when
//    the count drops to zero and must free the object. It has the same type
//    in every vtable, void (*)(kiln_hal_resource_t*), so that the generic
//    release below calls it through a pointer of its own type (calling a
//    function through a pointer of another function type is undefined
//    behaviour, which clang's -fsanitize=function reports); it receives the
//    object's resource header, which is the first member of the base struct
//    and so has the object's address: cast it back.
//  - The HAL core validates arguments before calling a vtable function
//    (non-NULL pointers, command buffer states, buffer ranges of concrete
//    buffers, export ordinals and binding/push constant counts), so a vtable
//    function sees well-formed calls. Binding-table slots are resolved by the
//    driver at submission (it must check them: see queue_execute).
//  - Statuses: a plugin must create every status it returns through the
//    kiln_hal_host_api_t it is given (so that one implementation owns all
//    statuses of a process) and free statuses it receives through it.
//  - A plugin is a shared library exporting KILN_HAL_DRIVER_PLUGIN_QUERY_SYMBOL
//    with the type kiln_hal_driver_plugin_query_fn_t.
//
// Versioning: KILN_HAL_DRIVER_ABI_VERSION changes whenever a struct or vtable
// below changes layout; the loader refuses plugins built for another version
// with an INCOMPATIBLE status naming both versions.
#ifndef KILN_HAL_DRIVER_ABI_H_
#define KILN_HAL_DRIVER_ABI_H_

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln/hal/hal.h"
#include "kiln/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_HAL_DRIVER_ABI_VERSION 6u

//===----------------------------------------------------------------------===//
// Resources (reference counted objects)
//===----------------------------------------------------------------------===//

// Header of every HAL object. |ref_count| is only touched with atomic
// builtins (kiln_hal_resource_retain/release below). |vtable| points at the
// driver's vtable for the object kind; every vtable starts with the same
// `destroy` member as kiln_hal_resource_vtable_t.
typedef struct kiln_hal_resource_t {
  int32_t ref_count;
  uint32_t reserved;
  const void* vtable;
} kiln_hal_resource_t;

typedef struct kiln_hal_resource_vtable_t {
  void (*destroy)(kiln_hal_resource_t* resource);
} kiln_hal_resource_vtable_t;

static inline void kiln_hal_resource_initialize(const void* vtable,
                                                kiln_hal_resource_t* resource) {
  resource->ref_count = 1;
  resource->reserved = 0;
  resource->vtable = vtable;
}

static inline void kiln_hal_resource_retain(kiln_hal_resource_t* resource) {
  if (resource) __atomic_fetch_add(&resource->ref_count, 1, __ATOMIC_RELAXED);
}

static inline void kiln_hal_resource_release(kiln_hal_resource_t* resource) {
  if (resource &&
      __atomic_fetch_sub(&resource->ref_count, 1, __ATOMIC_ACQ_REL) == 1) {
    ((const kiln_hal_resource_vtable_t*)resource->vtable)->destroy(resource);
  }
}

//===----------------------------------------------------------------------===//
// Host services given to drivers
//===----------------------------------------------------------------------===//

// Functions of the runtime that a driver plugin may call. Valid for the life
// of the process. Same semantics as the kiln_status_* functions.
typedef struct kiln_hal_host_api_t {
  uint32_t abi_version;  // KILN_HAL_DRIVER_ABI_VERSION of the runtime
  uint32_t reserved;
  kiln_status_t (*status_make_v)(kiln_status_code_t code, const char* format,
                                 va_list args);
  kiln_status_t (*status_annotate_v)(kiln_status_t status, const char* format,
                                     va_list args);
  kiln_status_t (*status_clone)(kiln_status_t status);
  void (*status_free)(kiln_status_t status);
  kiln_status_code_t (*status_code)(kiln_status_t status);
  const char* (*status_message)(kiln_status_t status);
  kiln_time_t (*time_now)(void);
} kiln_hal_host_api_t;

//===----------------------------------------------------------------------===//
// Object base structs and vtables
//===----------------------------------------------------------------------===//

// Driver ---------------------------------------------------------------------

struct kiln_hal_driver_t {
  kiln_hal_resource_t resource;
  // Borrowed from the driver factory (static storage).
  const char* name;
};

typedef struct kiln_hal_driver_vtable_t {
  void (*destroy)(kiln_hal_resource_t* resource);
  kiln_status_t (*enumerate_devices)(kiln_hal_driver_t* driver,
                                     uint32_t capacity,
                                     kiln_hal_device_info_t* out_infos,
                                     uint32_t* out_count);
  // |options| is the query part of the device URI ("key=value&..."; "" for
  // none, never NULL). Reject unknown keys and bad values with
  // INVALID_ARGUMENT naming them and listing the accepted keys.
  kiln_status_t (*create_device)(kiln_hal_driver_t* driver, uint32_t ordinal,
                                 const char* options,
                                 kiln_hal_device_t** out_device);
} kiln_hal_driver_vtable_t;

// Device ---------------------------------------------------------------------

struct kiln_hal_device_t {
  kiln_hal_resource_t resource;
  const char* driver_name;  // borrowed, static storage
};

typedef struct kiln_hal_device_vtable_t {
  void (*destroy)(kiln_hal_resource_t* resource);
  kiln_status_t (*query_info)(kiln_hal_device_t* device,
                              kiln_hal_device_info_t* out_info);
  // Borrowed; lives as long as the device.
  kiln_hal_allocator_t* (*allocator)(kiln_hal_device_t* device);
  kiln_status_t (*create_semaphore)(kiln_hal_device_t* device,
                                    uint64_t initial_value,
                                    kiln_hal_semaphore_t** out_semaphore);
  kiln_status_t (*create_command_buffer)(
      kiln_hal_device_t* device, kiln_hal_command_buffer_mode_t mode,
      uint32_t binding_capacity, kiln_hal_command_buffer_t** out_command_buffer);
  kiln_status_t (*create_executable_cache)(
      kiln_hal_device_t* device, kiln_hal_executable_cache_t** out_cache);
  // May return UNIMPLEMENTED.
  kiln_status_t (*create_channel)(kiln_hal_device_t* device,
                                  const kiln_hal_channel_params_t* params,
                                  kiln_hal_channel_t** out_channel);
  // May return UNIMPLEMENTED. |capacity| >= KILN_HAL_CHANNEL_ID_MAX_LENGTH.
  kiln_status_t (*create_channel_id)(kiln_hal_device_t* device,
                                     uint8_t* out_id, size_t capacity,
                                     size_t* out_length);
  // Queue operations. |wait| and |signal| are never NULL (possibly empty).
  // The driver retains what it keeps. A failure returned here means nothing
  // was enqueued; asynchronous failures go to the signal semaphores.
  kiln_status_t (*queue_alloca)(kiln_hal_device_t* device,
                                kiln_hal_queue_affinity_t affinity,
                                const kiln_hal_semaphore_list_t* wait,
                                const kiln_hal_semaphore_list_t* signal,
                                const kiln_hal_buffer_params_t* params,
                                kiln_device_size_t size,
                                kiln_hal_buffer_t** out_buffer);
  kiln_status_t (*queue_dealloca)(kiln_hal_device_t* device,
                                  kiln_hal_queue_affinity_t affinity,
                                  const kiln_hal_semaphore_list_t* wait,
                                  const kiln_hal_semaphore_list_t* signal,
                                  kiln_hal_buffer_t* buffer);
  // |binding_tables| is never NULL when command_buffer_count > 0 (the core
  // substitutes empty tables). The driver checks that every slot a command
  // buffer uses is bound and in range (INVALID_ARGUMENT, nothing enqueued).
  kiln_status_t (*queue_execute)(
      kiln_hal_device_t* device, kiln_hal_queue_affinity_t affinity,
      const kiln_hal_semaphore_list_t* wait,
      const kiln_hal_semaphore_list_t* signal, uint32_t command_buffer_count,
      kiln_hal_command_buffer_t* const* command_buffers,
      const kiln_hal_binding_table_t* binding_tables);
  kiln_status_t (*queue_flush)(kiln_hal_device_t* device,
                               kiln_hal_queue_affinity_t affinity);
  // Optional (NULL: the core answers UNIMPLEMENTED). Memory statistics and
  // trimming of the device's buffer cache (hal.h, "Device memory").
  kiln_status_t (*query_memory_stats)(kiln_hal_device_t* device,
                                      kiln_hal_device_memory_stats_t* out_stats);
  kiln_status_t (*trim)(kiln_hal_device_t* device);
  // Optional (NULL: UNIMPLEMENTED). queue_execute that times each command
  // into |profile| (never NULL; timings zeroed by the core) before it
  // signals; same argument checks as queue_execute.
  kiln_status_t (*queue_execute_profiled)(
      kiln_hal_device_t* device, kiln_hal_queue_affinity_t affinity,
      const kiln_hal_semaphore_list_t* wait,
      const kiln_hal_semaphore_list_t* signal, uint32_t command_buffer_count,
      kiln_hal_command_buffer_t* const* command_buffers,
      const kiln_hal_binding_table_t* binding_tables,
      kiln_hal_execution_profile_t* profile);
  // Optional (NULL: UNIMPLEMENTED). What sharing memory with the device
  // takes, and a host wait on another library's stream (hal.h, "External
  // memory and streams").
  kiln_status_t (*query_external_info)(
      kiln_hal_device_t* device, kiln_hal_device_external_info_t* out_info);
  kiln_status_t (*wait_external_stream)(kiln_hal_device_t* device,
                                        uint64_t stream);
} kiln_hal_device_vtable_t;

// Allocator ------------------------------------------------------------------

struct kiln_hal_allocator_t {
  kiln_hal_resource_t resource;
};

typedef struct kiln_hal_allocator_vtable_t {
  void (*destroy)(kiln_hal_resource_t* resource);
  kiln_status_t (*allocate_buffer)(kiln_hal_allocator_t* allocator,
                                   const kiln_hal_buffer_params_t* params,
                                   kiln_device_size_t size,
                                   kiln_hal_buffer_t** out_buffer);
  // Optional (NULL: UNIMPLEMENTED). hal.h's kiln_hal_allocator_import_buffer;
  // |memory| is non-NULL with a non-NULL, aligned pointer and a non-zero
  // length, |release| non-NULL (its fn may be NULL). The driver calls
  // release->fn exactly once, when the buffer is destroyed, and only when it
  // returned OK.
  kiln_status_t (*import_buffer)(kiln_hal_allocator_t* allocator,
                                 const kiln_hal_buffer_params_t* params,
                                 const kiln_hal_external_memory_t* memory,
                                 const kiln_hal_external_release_t* release,
                                 kiln_hal_buffer_t** out_buffer);
} kiln_hal_allocator_vtable_t;

// Buffer ---------------------------------------------------------------------

struct kiln_hal_buffer_t {
  kiln_hal_resource_t resource;
  kiln_device_size_t byte_length;
  kiln_hal_memory_type_t memory_type;
  kiln_hal_buffer_usage_t usage;
};

typedef struct kiln_hal_buffer_vtable_t {
  void (*destroy)(kiln_hal_resource_t* resource);
  // Range already validated against byte_length and HOST_VISIBLE. Returns
  // FAILED_PRECONDITION if the storage does not exist (queue_alloca).
  kiln_status_t (*map_range)(kiln_hal_buffer_t* buffer,
                             kiln_hal_memory_access_t access,
                             kiln_device_size_t offset,
                             kiln_device_size_t length, void** out_contents);
  kiln_status_t (*unmap_range)(kiln_hal_buffer_t* buffer,
                               kiln_device_size_t offset,
                               kiln_device_size_t length, void* contents);
  // Optional (NULL: UNIMPLEMENTED). hal.h's kiln_hal_buffer_export_memory.
  kiln_status_t (*export_memory)(kiln_hal_buffer_t* buffer,
                                 kiln_hal_external_memory_t* out_memory);
} kiln_hal_buffer_vtable_t;

static inline void kiln_hal_buffer_initialize(
    const kiln_hal_buffer_vtable_t* vtable, kiln_device_size_t byte_length,
    kiln_hal_memory_type_t memory_type, kiln_hal_buffer_usage_t usage,
    kiln_hal_buffer_t* buffer) {
  kiln_hal_resource_initialize(vtable, &buffer->resource);
  buffer->byte_length = byte_length;
  buffer->memory_type = memory_type;
  buffer->usage = usage;
}

// Semaphore ------------------------------------------------------------------

struct kiln_hal_semaphore_t {
  kiln_hal_resource_t resource;
};

// Semaphores must support waits from any thread and from other drivers'
// queues (through this vtable), so that work can be chained across devices.
typedef struct kiln_hal_semaphore_vtable_t {
  void (*destroy)(kiln_hal_resource_t* resource);
  kiln_status_t (*query)(kiln_hal_semaphore_t* semaphore, uint64_t* out_value);
  kiln_status_t (*signal)(kiln_hal_semaphore_t* semaphore, uint64_t value);
  // Takes ownership of |status| (never OK).
  void (*fail)(kiln_hal_semaphore_t* semaphore, kiln_status_t status);
  // |deadline| is absolute CLOCK_MONOTONIC nanoseconds.
  kiln_status_t (*wait)(kiln_hal_semaphore_t* semaphore, uint64_t value,
                        kiln_time_t deadline);
} kiln_hal_semaphore_vtable_t;

// Command buffer -------------------------------------------------------------

// States tracked by the HAL core (drivers only initialize them).
enum kiln_hal_command_buffer_state_e {
  KILN_HAL_COMMAND_BUFFER_STATE_INITIAL = 0,
  KILN_HAL_COMMAND_BUFFER_STATE_RECORDING = 1,
  KILN_HAL_COMMAND_BUFFER_STATE_EXECUTABLE = 2,
};

struct kiln_hal_command_buffer_t {
  kiln_hal_resource_t resource;
  kiln_hal_command_buffer_mode_t mode;
  uint32_t binding_capacity;
  // Core-managed: a kiln_hal_command_buffer_state_e value.
  uint32_t state;
  // Core-managed: number of submissions (atomic), to refuse a second
  // submission of a one-shot command buffer.
  uint32_t submit_count;
};

static inline void kiln_hal_command_buffer_initialize(
    const void* vtable, kiln_hal_command_buffer_mode_t mode,
    uint32_t binding_capacity, kiln_hal_command_buffer_t* command_buffer) {
  kiln_hal_resource_initialize(vtable, &command_buffer->resource);
  command_buffer->mode = mode;
  command_buffer->binding_capacity = binding_capacity;
  command_buffer->state = KILN_HAL_COMMAND_BUFFER_STATE_INITIAL;
  command_buffer->submit_count = 0;
}

// Buffer refs reaching the driver have |length| resolved (never
// WHOLE_BUFFER) when |buffer| is concrete; slot refs keep the caller's
// length (WHOLE_BUFFER meaning the rest of the binding).
typedef struct kiln_hal_command_buffer_vtable_t {
  void (*destroy)(kiln_hal_resource_t* resource);
  kiln_status_t (*begin)(kiln_hal_command_buffer_t* command_buffer);
  kiln_status_t (*end)(kiln_hal_command_buffer_t* command_buffer);
  kiln_status_t (*execution_barrier)(kiln_hal_command_buffer_t* command_buffer);
  kiln_status_t (*fill_buffer)(kiln_hal_command_buffer_t* command_buffer,
                               kiln_hal_buffer_ref_t target,
                               const void* pattern, size_t pattern_length);
  kiln_status_t (*update_buffer)(kiln_hal_command_buffer_t* command_buffer,
                                 const void* source, size_t source_length,
                                 kiln_hal_buffer_ref_t target);
  kiln_status_t (*copy_buffer)(kiln_hal_command_buffer_t* command_buffer,
                               kiln_hal_buffer_ref_t source,
                               kiln_hal_buffer_ref_t target);
  // |workgroup_count| is resolved (never NULL).
  kiln_status_t (*dispatch)(kiln_hal_command_buffer_t* command_buffer,
                            kiln_hal_executable_t* executable,
                            uint32_t export_ordinal,
                            const uint32_t workgroup_count[3],
                            uint32_t push_constant_count,
                            const uint32_t* push_constants,
                            uint32_t binding_count,
                            const kiln_hal_buffer_ref_t* bindings);
  kiln_status_t (*collective)(kiln_hal_command_buffer_t* command_buffer,
                              kiln_hal_channel_t* channel,
                              const kiln_hal_collective_op_t* op,
                              kiln_hal_buffer_ref_t send,
                              kiln_hal_buffer_ref_t recv);
} kiln_hal_command_buffer_vtable_t;

// Executable cache and executable ---------------------------------------------

struct kiln_hal_executable_cache_t {
  kiln_hal_resource_t resource;
};

typedef struct kiln_hal_executable_cache_vtable_t {
  void (*destroy)(kiln_hal_resource_t* resource);
  bool (*can_prepare_format)(kiln_hal_executable_cache_t* cache,
                             const char* format);
  // Params validated by the core (non-NULL format/data, export names).
  kiln_status_t (*prepare_executable)(kiln_hal_executable_cache_t* cache,
                                      const kiln_hal_executable_params_t* params,
                                      kiln_hal_executable_t** out_executable);
} kiln_hal_executable_cache_vtable_t;

struct kiln_hal_executable_t {
  kiln_hal_resource_t resource;
  // Owned by the driver's executable (including the name strings); the core
  // reads them to validate dispatches.
  uint32_t export_count;
  const kiln_hal_executable_export_t* exports;
};

typedef struct kiln_hal_executable_vtable_t {
  void (*destroy)(kiln_hal_resource_t* resource);
} kiln_hal_executable_vtable_t;

// Channel --------------------------------------------------------------------

struct kiln_hal_channel_t {
  kiln_hal_resource_t resource;
  int32_t rank;
  int32_t count;
};

typedef struct kiln_hal_channel_vtable_t {
  void (*destroy)(kiln_hal_resource_t* resource);
  kiln_status_t (*split)(kiln_hal_channel_t* channel, int32_t color,
                         int32_t key, kiln_hal_channel_t** out_channel);
  // NULL (UNIMPLEMENTED) where the driver has no symmetric windows. The core
  // checked |params| (size 1 .. 2^40, signal_count <= 2^20).
  kiln_status_t (*create_window)(kiln_hal_channel_t* channel,
                                 const kiln_hal_window_params_t* params,
                                 kiln_hal_window_t** out_window);
} kiln_hal_channel_vtable_t;

// Window ---------------------------------------------------------------------

// The buffers are the driver's (alive while the window is); the core hands
// them out borrowed.
struct kiln_hal_window_t {
  kiln_hal_resource_t resource;
  uint64_t size;
  uint32_t signal_count;
  kiln_hal_buffer_t* data;
  kiln_hal_buffer_t* signals;
  kiln_hal_buffer_t* peer_table;
};

typedef struct kiln_hal_window_vtable_t {
  void (*destroy)(kiln_hal_resource_t* resource);
} kiln_hal_window_vtable_t;

//===----------------------------------------------------------------------===//
// Plugin entry point
//===----------------------------------------------------------------------===//

// One driver a plugin provides. All pointers have static storage duration.
typedef struct kiln_hal_driver_factory_t {
  const char* name;         // URI scheme, [a-z0-9_-]+, e.g. "hip"
  const char* description;  // one line for users
  // Creates the driver. |host| stays valid for the process's life.
  kiln_status_t (*create_driver)(const struct kiln_hal_driver_factory_t* factory,
                                 const kiln_hal_host_api_t* host,
                                 kiln_hal_driver_t** out_driver);
  void* user_data;
} kiln_hal_driver_factory_t;

// What a plugin reports to the runtime.
typedef struct kiln_hal_driver_plugin_t {
  uint32_t factory_count;
  const kiln_hal_driver_factory_t* factories;  // static storage
} kiln_hal_driver_plugin_t;

#define KILN_HAL_DRIVER_PLUGIN_QUERY_SYMBOL "kiln_hal_driver_plugin_query"

// The symbol a plugin exports. The runtime passes its ABI version and host
// services; the plugin returns the ABI version it was built for
// (KILN_HAL_DRIVER_ABI_VERSION of its headers) and, only when the two are
// equal, fills |out_plugin|. Must be cheap and side-effect free (no device
// API calls): drivers initialize in create_driver.
typedef uint32_t (*kiln_hal_driver_plugin_query_fn_t)(
    uint32_t runtime_abi_version, const kiln_hal_host_api_t* host,
    kiln_hal_driver_plugin_t* out_plugin);

// Registers an in-process plugin (how built-in drivers register; also handy
// for embedders that link a driver statically). Same checks as loading a
// plugin from a file.
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_driver_registry_register_plugin(
    kiln_hal_driver_registry_t* registry,
    kiln_hal_driver_plugin_query_fn_t query_fn);

// The host API of this runtime (what plugins receive).
const kiln_hal_host_api_t* kiln_hal_host_api(void);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // KILN_HAL_DRIVER_ABI_H_
