// The Kiln HAL: the hardware abstraction every Kiln driver implements and the
// module executor and tools program against. Plain C11.
//
// Objects: driver registry -> driver -> device. A device owns an allocator,
// creates buffers, timeline semaphores, command buffers, executable caches
// (which prepare executables) and collective channels, and runs queue
// operations (alloca, dealloca, execute).
//
// Ownership: every object is reference counted. A create/prepare call returns
// an object with one reference owned by the caller; *_retain adds one,
// *_release drops one and destroys the object at zero. Functions that keep
// an object beyond the call (a command buffer recording a buffer, a queue
// submission waiting on a semaphore) retain it themselves. Functions named
// *_borrow / documented as "borrowed" return a pointer valid as long as the
// object they came from.
//
// Thread-safety: all functions are thread-safe except command buffer
// recording (begin .. end of one command buffer is single-threaded) and
// mapping overlapping ranges of one buffer for writing from several threads
// at once (the bytes race, the HAL does not). Queue operations never block the
// calling thread on semaphores: a submission whose waits are not satisfied
// yet is deferred and issued, in submission order, once they are.
//
// Errors: every fallible call returns a kiln_status_t (kiln/status.h); bad
// arguments are INVALID_ARGUMENT / OUT_OF_RANGE / FAILED_PRECONDITION, never a
// crash. Asynchronous failures (a kernel returned non-zero, a wait semaphore
// failed) are delivered by failing the submission's signal semaphores.
//
// The vtables that drivers implement are in kiln/hal/driver_abi.h.
#ifndef KILN_HAL_HAL_H_
#define KILN_HAL_HAL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln/status.h"

#ifdef __cplusplus
extern "C" {
#endif

//===----------------------------------------------------------------------===//
// Basic types
//===----------------------------------------------------------------------===//

typedef uint64_t kiln_device_size_t;

// Means "from the offset to the end of the buffer" where a length is taken.
#define KILN_HAL_WHOLE_BUFFER ((kiln_device_size_t)-1)

// Nanoseconds on CLOCK_MONOTONIC (absolute) and nanosecond durations.
typedef int64_t kiln_time_t;
typedef int64_t kiln_duration_t;
#define KILN_TIME_INFINITE_FUTURE INT64_MAX
#define KILN_DURATION_INFINITE INT64_MAX
#define KILN_DURATION_ZERO 0

// Now, in nanoseconds on CLOCK_MONOTONIC.
kiln_time_t kiln_time_now(void);
// now + timeout, saturating (INFINITE stays INFINITE_FUTURE; <= 0 is now).
kiln_time_t kiln_deadline_from_timeout(kiln_duration_t timeout_ns);

// Bitmask of queues of a device; drivers with one queue ignore it.
typedef uint64_t kiln_hal_queue_affinity_t;
#define KILN_HAL_QUEUE_AFFINITY_ANY ((kiln_hal_queue_affinity_t)-1)

// Element types, numerically identical to kiln.schema.ElementType in
// runtime/schemas/module.fbs so the executor can convert with a cast.
typedef enum kiln_hal_element_type_e {
  KILN_HAL_ELEMENT_TYPE_INVALID = 0,
  KILN_HAL_ELEMENT_TYPE_I1,
  KILN_HAL_ELEMENT_TYPE_I8,
  KILN_HAL_ELEMENT_TYPE_I16,
  KILN_HAL_ELEMENT_TYPE_I32,
  KILN_HAL_ELEMENT_TYPE_I64,
  KILN_HAL_ELEMENT_TYPE_U8,
  KILN_HAL_ELEMENT_TYPE_U16,
  KILN_HAL_ELEMENT_TYPE_U32,
  KILN_HAL_ELEMENT_TYPE_U64,
  KILN_HAL_ELEMENT_TYPE_F16,
  KILN_HAL_ELEMENT_TYPE_BF16,
  KILN_HAL_ELEMENT_TYPE_F32,
  KILN_HAL_ELEMENT_TYPE_F64,
} kiln_hal_element_type_t;

// Size in bytes of one element (i1 is stored as one byte); 0 for INVALID or
// an unknown value.
size_t kiln_hal_element_type_size(kiln_hal_element_type_t type);

//===----------------------------------------------------------------------===//
// Object types (layouts in driver_abi.h; opaque to HAL users)
//===----------------------------------------------------------------------===//

typedef struct kiln_hal_driver_registry_t kiln_hal_driver_registry_t;
typedef struct kiln_hal_driver_t kiln_hal_driver_t;
typedef struct kiln_hal_device_t kiln_hal_device_t;
typedef struct kiln_hal_allocator_t kiln_hal_allocator_t;
typedef struct kiln_hal_buffer_t kiln_hal_buffer_t;
typedef struct kiln_hal_semaphore_t kiln_hal_semaphore_t;
typedef struct kiln_hal_command_buffer_t kiln_hal_command_buffer_t;
typedef struct kiln_hal_executable_cache_t kiln_hal_executable_cache_t;
typedef struct kiln_hal_executable_t kiln_hal_executable_t;
typedef struct kiln_hal_channel_t kiln_hal_channel_t;
typedef struct kiln_hal_window_t kiln_hal_window_t;

//===----------------------------------------------------------------------===//
// Driver registry
//===----------------------------------------------------------------------===//
// A registry holds driver factories (built in or from plugins) and the
// drivers it created from them. Thread-safe. The runtime instance owns one;
// tools and tests may create their own.

#define KILN_HAL_MAX_NAME_LENGTH 64
#define KILN_HAL_MAX_DESCRIPTION_LENGTH 256

typedef struct kiln_hal_driver_info_t {
  char name[KILN_HAL_MAX_NAME_LENGTH];  // URI scheme: "local", "hip"
  char description[KILN_HAL_MAX_DESCRIPTION_LENGTH];
  // Path of the plugin that provided the driver; "" for built-in drivers.
  char plugin_path[KILN_HAL_MAX_DESCRIPTION_LENGTH];
} kiln_hal_driver_info_t;

// Name of the environment variable listing driver plugins to load
// (colon-separated shared library paths).
#define KILN_HAL_DRIVER_PLUGINS_ENV "KILN_HAL_DRIVER_PLUGINS"

// Creates an empty registry.
KILN_MUST_USE_RESULT kiln_status_t
kiln_hal_driver_registry_create(kiln_hal_driver_registry_t** out_registry);
void kiln_hal_driver_registry_retain(kiln_hal_driver_registry_t* registry);
void kiln_hal_driver_registry_release(kiln_hal_driver_registry_t* registry);

// Registers the drivers compiled into the runtime (today: "local"). They go
// through the same plugin ABI as external plugins. Idempotent.
KILN_MUST_USE_RESULT kiln_status_t
kiln_hal_driver_registry_register_builtin_drivers(
    kiln_hal_driver_registry_t* registry);

// Loads the driver plugin at |path| (dlopen + the entry symbol
// KILN_HAL_DRIVER_PLUGIN_QUERY_SYMBOL, see driver_abi.h) and registers its
// drivers. Errors: NOT_FOUND (file cannot be loaded or lacks the entry
// symbol), INCOMPATIBLE (ABI version mismatch), ALREADY_EXISTS (a driver of
// that name is registered). The library stays loaded until the process exits
// (objects it created may outlive the registry).
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_driver_registry_load_plugin(
    kiln_hal_driver_registry_t* registry, const char* path);

// Loads every plugin listed in $KILN_HAL_DRIVER_PLUGINS (colon-separated;
// empty entries skipped). Unset or empty variable: OK, nothing loaded. Stops
// at the first failing plugin, naming it.
KILN_MUST_USE_RESULT kiln_status_t
kiln_hal_driver_registry_load_plugins_from_env(
    kiln_hal_driver_registry_t* registry);

// Number of registered drivers and their info by index (registration order).
uint32_t kiln_hal_driver_registry_driver_count(
    kiln_hal_driver_registry_t* registry);
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_driver_registry_driver_info(
    kiln_hal_driver_registry_t* registry, uint32_t index,
    kiln_hal_driver_info_t* out_info);

// Returns the driver named |name| (creating it on first use; later calls
// return the same driver), retained for the caller. NOT_FOUND lists the
// registered drivers.
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_driver_registry_get_driver(
    kiln_hal_driver_registry_t* registry, const char* name,
    kiln_hal_driver_t** out_driver);

// Creates a device from a URI: "<driver>" (device 0) or "<driver>://<N>"
// (device ordinal N), e.g. "local", "local://1", "hip://0". Unknown driver
// or ordinal: NOT_FOUND naming what exists.
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_driver_registry_create_device(
    kiln_hal_driver_registry_t* registry, const char* uri,
    kiln_hal_device_t** out_device);

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//
// A driver enumerates and creates the devices of one device API. Thread-safe.

typedef struct kiln_hal_device_info_t {
  uint32_t ordinal;                               // N in "<driver>://N"
  char name[KILN_HAL_MAX_DESCRIPTION_LENGTH];     // e.g. "local CPU device 0"
} kiln_hal_device_info_t;

void kiln_hal_driver_retain(kiln_hal_driver_t* driver);
void kiln_hal_driver_release(kiln_hal_driver_t* driver);

// Borrowed name of the driver ("local").
const char* kiln_hal_driver_name(kiln_hal_driver_t* driver);

// Writes up to |capacity| device infos into |out_infos| (may be NULL when
// capacity is 0) and the total number of devices into |out_count|.
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_driver_enumerate_devices(
    kiln_hal_driver_t* driver, uint32_t capacity,
    kiln_hal_device_info_t* out_infos, uint32_t* out_count);

// Creates device |ordinal|. NOT_FOUND if it does not exist.
KILN_MUST_USE_RESULT kiln_status_t
kiln_hal_driver_create_device(kiln_hal_driver_t* driver, uint32_t ordinal,
                              kiln_hal_device_t** out_device);

// Same, with driver options: the query part of a device URI
// ("key=value&key=value", without the '?'; "" for none). A driver rejects
// keys and values it does not know with INVALID_ARGUMENT naming them.
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_driver_create_device_with_options(
    kiln_hal_driver_t* driver, uint32_t ordinal, const char* options,
    kiln_hal_device_t** out_device);

//===----------------------------------------------------------------------===//
// Buffers and the allocator
//===----------------------------------------------------------------------===//

typedef uint32_t kiln_hal_memory_type_t;
enum kiln_hal_memory_type_bits_e {
  // Fast for the device to access.
  KILN_HAL_MEMORY_TYPE_DEVICE_LOCAL = 1u << 0,
  // Mappable by the host (map_range / read / write work).
  KILN_HAL_MEMORY_TYPE_HOST_VISIBLE = 1u << 1,
  // Host writes are visible to the device without flushes, and vice versa.
  KILN_HAL_MEMORY_TYPE_HOST_COHERENT = 1u << 2,
};

typedef uint32_t kiln_hal_buffer_usage_t;
enum kiln_hal_buffer_usage_bits_e {
  KILN_HAL_BUFFER_USAGE_TRANSFER = 1u << 0,          // copy/fill/update
  KILN_HAL_BUFFER_USAGE_DISPATCH_STORAGE = 1u << 1,  // kernel binding
  KILN_HAL_BUFFER_USAGE_MAPPING = 1u << 2,           // host map
  KILN_HAL_BUFFER_USAGE_COLLECTIVE = 1u << 3,        // collective send/recv
  KILN_HAL_BUFFER_USAGE_DEFAULT = KILN_HAL_BUFFER_USAGE_TRANSFER |
                                  KILN_HAL_BUFFER_USAGE_DISPATCH_STORAGE |
                                  KILN_HAL_BUFFER_USAGE_COLLECTIVE,
};

typedef uint32_t kiln_hal_memory_access_t;
enum kiln_hal_memory_access_bits_e {
  KILN_HAL_MEMORY_ACCESS_READ = 1u << 0,
  KILN_HAL_MEMORY_ACCESS_WRITE = 1u << 1,
  // The previous contents may be discarded (write-only mapping).
  KILN_HAL_MEMORY_ACCESS_DISCARD = 1u << 2,
};

typedef struct kiln_hal_buffer_params_t {
  // Required memory type bits; the buffer may have more (see
  // kiln_hal_buffer_memory_type).
  kiln_hal_memory_type_t memory_type;
  kiln_hal_buffer_usage_t usage;
  // Minimum alignment of the base address in bytes (power of two); 0 means
  // the driver's default (at least 64).
  kiln_device_size_t min_alignment;
} kiln_hal_buffer_params_t;

// Borrowed allocator of |device| (lives as long as the device).
kiln_hal_allocator_t* kiln_hal_device_allocator(kiln_hal_device_t* device);

// Allocates a buffer of |size| bytes (> 0) whose storage is usable
// immediately. RESOURCE_EXHAUSTED when memory runs out; INVALID_ARGUMENT for
// a size of 0 or an unsupported memory type/usage.
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_allocator_allocate_buffer(
    kiln_hal_allocator_t* allocator, const kiln_hal_buffer_params_t* params,
    kiln_device_size_t size, kiln_hal_buffer_t** out_buffer);

void kiln_hal_buffer_retain(kiln_hal_buffer_t* buffer);
void kiln_hal_buffer_release(kiln_hal_buffer_t* buffer);
kiln_device_size_t kiln_hal_buffer_byte_length(const kiln_hal_buffer_t* buffer);
kiln_hal_memory_type_t kiln_hal_buffer_memory_type(
    const kiln_hal_buffer_t* buffer);
kiln_hal_buffer_usage_t kiln_hal_buffer_usage(const kiln_hal_buffer_t* buffer);

// A host view of a buffer range, returned by kiln_hal_buffer_map_range.
typedef struct kiln_hal_buffer_mapping_t {
  void* contents;
  kiln_device_size_t offset;  // range mapped, relative to the buffer
  kiln_device_size_t length;
  kiln_hal_memory_access_t access;
} kiln_hal_buffer_mapping_t;

// Maps [offset, offset+length) of a HOST_VISIBLE buffer (|length| may be
// KILN_HAL_WHOLE_BUFFER). OUT_OF_RANGE for a range outside the buffer,
// FAILED_PRECONDITION for a buffer that is not host visible or whose storage
// does not exist (a queue_alloca'd buffer before its alloca ran or after its
// dealloca). The caller must not access the memory while the device may
// write it (synchronize with semaphores).
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_buffer_map_range(
    kiln_hal_buffer_t* buffer, kiln_hal_memory_access_t access,
    kiln_device_size_t offset, kiln_device_size_t length,
    kiln_hal_buffer_mapping_t* out_mapping);
// Ends a mapping made by kiln_hal_buffer_map_range (flushes if needed).
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_buffer_unmap_range(
    kiln_hal_buffer_t* buffer, kiln_hal_buffer_mapping_t* mapping);

// External memory ------------------------------------------------------------
// Memory that another library owns (a PyTorch or CuPy tensor, a numpy array:
// what DLPack hands over), used by a device in place, without a copy.

// Where memory lives, as DLPack's device types say it (a plain integer, so
// that drivers may check values from any caller).
typedef uint32_t kiln_hal_external_memory_type_t;
enum kiln_hal_external_memory_type_e {
  // Host memory of this process (for drivers whose kernels run on the host).
  KILN_HAL_EXTERNAL_MEMORY_HOST = 1,
  // Device memory of a CUDA GPU (a CUdeviceptr / CUDA runtime pointer).
  KILN_HAL_EXTERNAL_MEMORY_CUDA = 2,
  // Device memory of a ROCm GPU (a HIP device pointer).
  KILN_HAL_EXTERNAL_MEMORY_ROCM = 3,
};

// Bytes [data, data + byte_length) of external memory. Kernels read buffer
// bindings with 16-byte vector accesses, so |data| must be 16-byte aligned.
typedef struct kiln_hal_external_memory_t {
  kiln_hal_external_memory_type_t type;
  void* data;
  kiln_device_size_t byte_length;
} kiln_hal_external_memory_t;

#define KILN_HAL_EXTERNAL_MEMORY_ALIGNMENT 16u

// Called once when a buffer made by kiln_hal_allocator_import_buffer is
// destroyed, after every queue operation that used it completed; on any
// thread (often the device's completion thread), so it must not block on
// the device.
typedef struct kiln_hal_external_release_t {
  void (*fn)(void* user_data);
  void* user_data;
} kiln_hal_external_release_t;

// Wraps |memory| in a buffer without copying it. The buffer is DEVICE_LOCAL
// (plus HOST_VISIBLE and HOST_COHERENT where host memory is the device's
// memory) with |params|' usage. |release| (its fn may be NULL) runs when the
// buffer is destroyed; on failure it is not called (the caller keeps the
// memory). Drivers import the memory type of their devices
// (kiln_hal_device_query_external_info). INVALID_ARGUMENT for a NULL or
// misaligned pointer, a length of 0, another memory type, or memory the
// device cannot address as its own (hip checks that a device pointer
// belongs to its GPU and that the range lies in one allocation);
// UNIMPLEMENTED for drivers that import nothing.
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_allocator_import_buffer(
    kiln_hal_allocator_t* allocator, const kiln_hal_buffer_params_t* params,
    const kiln_hal_external_memory_t* memory,
    const kiln_hal_external_release_t* release, kiln_hal_buffer_t** out_buffer);

// The memory behind |buffer|, for another library to use in place (DLPack
// export): its type and address, valid while the buffer lives and keeps its
// storage. The caller orders its accesses after the device's (wait on the
// semaphores of the work that writes it first). FAILED_PRECONDITION when the
// buffer has no storage (queue_alloca not run yet, or dealloca'd);
// UNIMPLEMENTED for drivers that do not expose addresses.
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_buffer_export_memory(
    kiln_hal_buffer_t* buffer, kiln_hal_external_memory_t* out_memory);

// Synchronous host copies through a mapping (same errors as map_range).
KILN_MUST_USE_RESULT kiln_status_t
kiln_hal_buffer_read(kiln_hal_buffer_t* buffer, kiln_device_size_t offset,
                     void* target, kiln_device_size_t length);
KILN_MUST_USE_RESULT kiln_status_t
kiln_hal_buffer_write(kiln_hal_buffer_t* buffer, kiln_device_size_t offset,
                      const void* source, kiln_device_size_t length);

//===----------------------------------------------------------------------===//
// Timeline semaphores
//===----------------------------------------------------------------------===//
// A semaphore holds a monotonically increasing uint64 payload. Waiters wait
// for payload >= a value. A semaphore may be failed with a status: the
// failure is sticky, every current and future wait/query returns a clone of
// it, and queue operations waiting on it fail their own signal semaphores.
// Thread-safe.

// The payload reported by a failed semaphore.
#define KILN_HAL_SEMAPHORE_FAILURE_VALUE ((uint64_t)-1)

KILN_MUST_USE_RESULT kiln_status_t
kiln_hal_semaphore_create(kiln_hal_device_t* device, uint64_t initial_value,
                          kiln_hal_semaphore_t** out_semaphore);
void kiln_hal_semaphore_retain(kiln_hal_semaphore_t* semaphore);
void kiln_hal_semaphore_release(kiln_hal_semaphore_t* semaphore);

// Current payload. If the semaphore failed: *out_value is
// KILN_HAL_SEMAPHORE_FAILURE_VALUE and a clone of the failure is returned.
KILN_MUST_USE_RESULT kiln_status_t
kiln_hal_semaphore_query(kiln_hal_semaphore_t* semaphore, uint64_t* out_value);

// Sets the payload to |value| from the host and wakes waiters.
// OUT_OF_RANGE if |value| is not greater than the current payload (timelines
// only move forward); the failure status if the semaphore failed.
KILN_MUST_USE_RESULT kiln_status_t
kiln_hal_semaphore_signal(kiln_hal_semaphore_t* semaphore, uint64_t value);

// Fails the semaphore with |status| (ownership taken; an OK status becomes
// an INTERNAL one). Later failures keep the first status.
void kiln_hal_semaphore_fail(kiln_hal_semaphore_t* semaphore,
                             kiln_status_t status);

// Blocks until payload >= |value|, the semaphore fails (returns a clone of
// the failure), or |timeout_ns| passes (DEADLINE_EXCEEDED; a timeout of 0
// polls). KILN_DURATION_INFINITE waits forever.
KILN_MUST_USE_RESULT kiln_status_t
kiln_hal_semaphore_wait(kiln_hal_semaphore_t* semaphore, uint64_t value,
                        kiln_duration_t timeout_ns);

// A list of (semaphore, value) pairs: the waits or signals of an operation.
// Arrays are borrowed for the duration of a call.
typedef struct kiln_hal_semaphore_list_t {
  uint32_t count;
  kiln_hal_semaphore_t* const* semaphores;
  const uint64_t* payload_values;
} kiln_hal_semaphore_list_t;

// Waits until every semaphore of |list| reaches its value, one shared
// deadline for all (first failure or DEADLINE_EXCEEDED is returned).
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_semaphore_list_wait(
    const kiln_hal_semaphore_list_t* list, kiln_duration_t timeout_ns);

//===----------------------------------------------------------------------===//
// Executables
//===----------------------------------------------------------------------===//

// Describes one kernel entry point of an executable; mirrors
// kiln.schema.ExecutableExport.
typedef struct kiln_hal_executable_export_t {
  const char* name;  // symbol in the binary
  uint32_t workgroup_count[3];
  uint32_t workgroup_size[3];
  uint32_t binding_count;
  uint32_t push_constant_count;
  // Workgroup shared memory the kernel uses in all: what the binary does not
  // declare statically is dynamic shared memory, passed at launch.
  uint32_t shared_memory_bytes;
} kiln_hal_executable_export_t;

typedef struct kiln_hal_executable_params_t {
  // Binary format, e.g. "elf-so-v1" (KILN_HOST_FORMAT), "hsaco", "ptx".
  const char* format;
  const void* data;  // borrowed for the call; the executable copies what it needs
  size_t data_length;
  uint32_t export_count;
  const kiln_hal_executable_export_t* exports;
  // Target the binary was built for ("cuda:sm_90", "rocm:gfx942",
  // "host:x86_64"; the module variant's key), or NULL when unknown. Drivers
  // refuse a binary for a target their device cannot run (INCOMPATIBLE).
  const char* target;
} kiln_hal_executable_params_t;

// An executable cache prepares executables for one device (and may cache
// them). Thread-safe.
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_executable_cache_create(
    kiln_hal_device_t* device, kiln_hal_executable_cache_t** out_cache);
void kiln_hal_executable_cache_retain(kiln_hal_executable_cache_t* cache);
void kiln_hal_executable_cache_release(kiln_hal_executable_cache_t* cache);

// Whether the device can run binaries of |format|; lets the module loader
// pick a variant before trying.
bool kiln_hal_executable_cache_can_prepare_format(
    kiln_hal_executable_cache_t* cache, const char* format);

// Loads a binary. INCOMPATIBLE for a format the device cannot run;
// INVALID_ARGUMENT for a binary that does not load (corrupt) or lacks an
// export (naming it).
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_executable_cache_prepare_executable(
    kiln_hal_executable_cache_t* cache,
    const kiln_hal_executable_params_t* params,
    kiln_hal_executable_t** out_executable);

void kiln_hal_executable_retain(kiln_hal_executable_t* executable);
void kiln_hal_executable_release(kiln_hal_executable_t* executable);
uint32_t kiln_hal_executable_export_count(
    const kiln_hal_executable_t* executable);
// Borrowed descriptor of export |ordinal| (NULL if out of range).
const kiln_hal_executable_export_t* kiln_hal_executable_export(
    const kiln_hal_executable_t* executable, uint32_t ordinal);

//===----------------------------------------------------------------------===//
// Collective channels
//===----------------------------------------------------------------------===//
// A channel is one rank's membership in a group of |count| ranks that run
// collectives together (one channel per participating device). Thread-safe.

typedef struct kiln_hal_channel_params_t {
  int32_t rank;
  int32_t count;
  // Rendezvous key shared by all ranks of the group (e.g. an NCCL unique id,
  // or any bytes that name the group for in-process devices). Borrowed.
  const void* id;
  size_t id_length;
} kiln_hal_channel_params_t;

// The longest channel id any driver produces (an NCCL/RCCL unique id is 128
// bytes).
#define KILN_HAL_CHANNEL_ID_MAX_LENGTH 128u

// Makes a fresh rendezvous id for a new group on |device|'s driver (e.g.
// ncclGetUniqueId). One rank makes it and hands the bytes to the others (in
// process, or through a rendezvous between processes); every rank then calls
// kiln_hal_channel_create with it. Writes at most |capacity| bytes.
// UNIMPLEMENTED where the driver has no collectives.
KILN_MUST_USE_RESULT kiln_status_t
kiln_hal_channel_id_create(kiln_hal_device_t* device, uint8_t* out_id,
                           size_t capacity, size_t* out_length);

// Joins rank |params->rank| of the group named by |params->id|. May block
// until all |params->count| ranks joined (NCCL/RCCL do): create the channels
// of one process's ranks from separate threads. UNIMPLEMENTED where the
// driver has no collectives.
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_channel_create(
    kiln_hal_device_t* device, const kiln_hal_channel_params_t* params,
    kiln_hal_channel_t** out_channel);
void kiln_hal_channel_retain(kiln_hal_channel_t* channel);
void kiln_hal_channel_release(kiln_hal_channel_t* channel);
int32_t kiln_hal_channel_rank(const kiln_hal_channel_t* channel);
int32_t kiln_hal_channel_count(const kiln_hal_channel_t* channel);
// Splits |channel| into sub-groups: ranks with the same |color| form a new
// channel, ordered by |key| (MPI_Comm_split semantics).
KILN_MUST_USE_RESULT kiln_status_t
kiln_hal_channel_split(kiln_hal_channel_t* channel, int32_t color, int32_t key,
                       kiln_hal_channel_t** out_channel);

//===----------------------------------------------------------------------===//
// Symmetric windows
//===----------------------------------------------------------------------===//
// A window is, on every rank of a channel, a buffer of the same size (the
// data), an array of 64-bit signal slots that peers write (the signals), and
// a table of every rank's data and signal addresses as this rank's kernels
// address them (the peer table): what compiled collectives use to read the
// peers' data and to signal them directly, without a library call.
//
// Creation is collective: every rank of the channel calls
// kiln_hal_window_create with the same parameters, in the same order
// relative to the channel's other window creations, each from its own thread
// (it blocks until every rank has called it, like kiln_hal_channel_create).
// Data and signals start zeroed. Each rank's memory lives until every rank
// has released its window, so a rank's kernels may address a peer whose
// window is already released by its owner. Windows are meant to be created
// once (per function and channel) and reused by every call. Thread-safe.
// Drivers without them return UNIMPLEMENTED.

typedef struct kiln_hal_window_params_t {
  uint64_t size;          // data bytes per rank, 1 .. 2^40
  uint32_t signal_count;  // 64-bit signal slots per rank, 0 .. 2^20
} kiln_hal_window_params_t;

KILN_MUST_USE_RESULT kiln_status_t kiln_hal_window_create(
    kiln_hal_channel_t* channel, const kiln_hal_window_params_t* params,
    kiln_hal_window_t** out_window);
void kiln_hal_window_retain(kiln_hal_window_t* window);
void kiln_hal_window_release(kiln_hal_window_t* window);
uint64_t kiln_hal_window_size(const kiln_hal_window_t* window);
uint32_t kiln_hal_window_signal_count(const kiln_hal_window_t* window);
// This rank's data (size bytes) and signals (8 x signal_count bytes, at
// least 8), and the peer table: 2 x count + 1 64-bit device addresses, rank
// i's data at entry i and its signals at entry count + i, and at entry
// 2 x count the group's abort word: a 64-bit word that is zero until any rank
// releases its window, then nonzero, so that a kernel waiting for a peer that
// left can stop (compiled collectives fail instead of waiting for their
// timeout). Borrowed (valid while the window is); bind them to dispatches
// like any device-local buffer.
kiln_hal_buffer_t* kiln_hal_window_data(const kiln_hal_window_t* window);
kiln_hal_buffer_t* kiln_hal_window_signals(const kiln_hal_window_t* window);
kiln_hal_buffer_t* kiln_hal_window_peer_table(const kiln_hal_window_t* window);

typedef enum kiln_hal_collective_kind_e {
  KILN_HAL_COLLECTIVE_ALL_REDUCE = 0,
  KILN_HAL_COLLECTIVE_ALL_GATHER,
  KILN_HAL_COLLECTIVE_REDUCE_SCATTER,
  KILN_HAL_COLLECTIVE_ALL_TO_ALL,
  KILN_HAL_COLLECTIVE_BROADCAST,
} kiln_hal_collective_kind_t;

typedef enum kiln_hal_reduction_e {
  KILN_HAL_REDUCTION_NONE = 0,
  KILN_HAL_REDUCTION_SUM,
  KILN_HAL_REDUCTION_PROD,
  KILN_HAL_REDUCTION_MIN,
  KILN_HAL_REDUCTION_MAX,
  KILN_HAL_REDUCTION_AVG,
} kiln_hal_reduction_t;

typedef struct kiln_hal_collective_op_t {
  kiln_hal_collective_kind_t kind;
  kiln_hal_reduction_t reduction;
  kiln_hal_element_type_t element_type;
  uint64_t element_count;  // per-rank send count
  int32_t root;            // broadcast root rank
} kiln_hal_collective_op_t;

//===----------------------------------------------------------------------===//
// Command buffers
//===----------------------------------------------------------------------===//
// A recorded list of device commands. Recording (begin .. end) is
// single-threaded; a finished command buffer is immutable and may be
// submitted from any thread. Commands run in order: each command completes
// (and its writes are visible) before the next starts; the execution barrier
// makes that explicit for drivers that could overlap.

typedef uint32_t kiln_hal_command_buffer_mode_t;
enum kiln_hal_command_buffer_mode_bits_e {
  // Reusable: may be submitted any number of times, concurrently too.
  KILN_HAL_COMMAND_BUFFER_MODE_REUSABLE = 0,
  // Submitted at most once; drivers may consume it.
  KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT = 1u << 0,
};

// A buffer range used by a command. Either a concrete |buffer| (retained by
// the command buffer) or, when |buffer| is NULL, slot |slot| of the binding
// table supplied at submission (kiln_hal_binding_table_t); the range is then
// [binding.offset + offset, ... + length) of that binding's buffer.
// |length| may be KILN_HAL_WHOLE_BUFFER (rest of the buffer / binding).
typedef struct kiln_hal_buffer_ref_t {
  kiln_hal_buffer_t* buffer;
  uint32_t slot;
  kiln_device_size_t offset;
  kiln_device_size_t length;
} kiln_hal_buffer_ref_t;

// One entry of a binding table: a concrete buffer range.
typedef struct kiln_hal_binding_t {
  kiln_hal_buffer_t* buffer;  // NULL for a slot the command buffer never uses
  kiln_device_size_t offset;
  kiln_device_size_t length;  // may be KILN_HAL_WHOLE_BUFFER
} kiln_hal_binding_t;

// The buffers bound to slots 0..count-1 for one submission of a command
// buffer. Borrowed for the call; queue_execute retains the buffers.
typedef struct kiln_hal_binding_table_t {
  uint32_t count;
  const kiln_hal_binding_t* bindings;
} kiln_hal_binding_table_t;

// Creates a command buffer that may reference binding-table slots
// [0, binding_capacity).
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_command_buffer_create(
    kiln_hal_device_t* device, kiln_hal_command_buffer_mode_t mode,
    uint32_t binding_capacity, kiln_hal_command_buffer_t** out_command_buffer);
void kiln_hal_command_buffer_retain(kiln_hal_command_buffer_t* command_buffer);
void kiln_hal_command_buffer_release(kiln_hal_command_buffer_t* command_buffer);
kiln_hal_command_buffer_mode_t kiln_hal_command_buffer_mode(
    const kiln_hal_command_buffer_t* command_buffer);
uint32_t kiln_hal_command_buffer_binding_capacity(
    const kiln_hal_command_buffer_t* command_buffer);

// Recording. begin once, record, end once; FAILED_PRECONDITION otherwise.
// A command with invalid arguments returns an error and is not recorded
// (the command buffer stays usable).
KILN_MUST_USE_RESULT kiln_status_t
kiln_hal_command_buffer_begin(kiln_hal_command_buffer_t* command_buffer);
KILN_MUST_USE_RESULT kiln_status_t
kiln_hal_command_buffer_end(kiln_hal_command_buffer_t* command_buffer);

KILN_MUST_USE_RESULT kiln_status_t kiln_hal_command_buffer_execution_barrier(
    kiln_hal_command_buffer_t* command_buffer);

// Fills |target| with a repeating |pattern| of 1, 2, 4 or 8 bytes; the
// target offset and length must be multiples of the pattern length.
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_command_buffer_fill_buffer(
    kiln_hal_command_buffer_t* command_buffer, kiln_hal_buffer_ref_t target,
    const void* pattern, size_t pattern_length);

// Copies |source_length| bytes of host data, captured at record time, into
// |target| (target.length must equal source_length or be WHOLE_BUFFER).
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_command_buffer_update_buffer(
    kiln_hal_command_buffer_t* command_buffer, const void* source,
    size_t source_length, kiln_hal_buffer_ref_t target);

// Copies between buffers (equal lengths; ranges may not overlap when they
// are in the same buffer).
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_command_buffer_copy_buffer(
    kiln_hal_command_buffer_t* command_buffer, kiln_hal_buffer_ref_t source,
    kiln_hal_buffer_ref_t target);

// Runs export |export_ordinal| of |executable| over a grid of workgroups:
// |workgroup_count| (NULL: the export's declared count). |bindings| must have
// the export's binding_count entries and |push_constants| its
// push_constant_count values (both copied at record time).
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_command_buffer_dispatch(
    kiln_hal_command_buffer_t* command_buffer,
    kiln_hal_executable_t* executable, uint32_t export_ordinal,
    const uint32_t workgroup_count[3], uint32_t push_constant_count,
    const uint32_t* push_constants, uint32_t binding_count,
    const kiln_hal_buffer_ref_t* bindings);

// Runs a collective over |channel| (retained). UNIMPLEMENTED where the
// driver has no collectives.
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_command_buffer_collective(
    kiln_hal_command_buffer_t* command_buffer, kiln_hal_channel_t* channel,
    const kiln_hal_collective_op_t* op, kiln_hal_buffer_ref_t send,
    kiln_hal_buffer_ref_t recv);

//===----------------------------------------------------------------------===//
// Devices and queue operations
//===----------------------------------------------------------------------===//
// A device executes queue operations in submission order (per queue). All
// queue operations return as soon as the operation is enqueued; they wait on
// |wait| semaphores (deferred, never blocking the caller) and, when done,
// signal |signal| semaphores to their values. If a wait semaphore fails or
// the operation fails, every |signal| semaphore is failed with the status.
// Thread-safe.

void kiln_hal_device_retain(kiln_hal_device_t* device);
void kiln_hal_device_release(kiln_hal_device_t* device);
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_device_info(
    kiln_hal_device_t* device, kiln_hal_device_info_t* out_info);
// Borrowed name of the driver that created the device ("local").
const char* kiln_hal_device_driver_name(kiln_hal_device_t* device);

// Stream-ordered allocation: returns a buffer object immediately whose
// storage exists once the signal semaphores are reached (until a dealloca).
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_device_queue_alloca(
    kiln_hal_device_t* device, kiln_hal_queue_affinity_t affinity,
    const kiln_hal_semaphore_list_t* wait,
    const kiln_hal_semaphore_list_t* signal,
    const kiln_hal_buffer_params_t* params, kiln_device_size_t size,
    kiln_hal_buffer_t** out_buffer);

// Stream-ordered release of a queue_alloca'd buffer's storage (the buffer
// object itself lives until its last release).
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_device_queue_dealloca(
    kiln_hal_device_t* device, kiln_hal_queue_affinity_t affinity,
    const kiln_hal_semaphore_list_t* wait,
    const kiln_hal_semaphore_list_t* signal, kiln_hal_buffer_t* buffer);

// Executes |command_buffer_count| command buffers in order. |binding_tables|
// may be NULL (no command buffer uses slots) or hold one table per command
// buffer; a table must have at least the command buffer's binding_capacity
// entries and bind every slot the command buffer uses. With zero command
// buffers this is a queue barrier (waits, then signals).
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_device_queue_execute(
    kiln_hal_device_t* device, kiln_hal_queue_affinity_t affinity,
    const kiln_hal_semaphore_list_t* wait,
    const kiln_hal_semaphore_list_t* signal, uint32_t command_buffer_count,
    kiln_hal_command_buffer_t* const* command_buffers,
    const kiln_hal_binding_table_t* binding_tables);

// Makes sure enqueued work will make progress without further submissions
// (drivers that batch); a no-op on drivers that issue eagerly.
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_device_queue_flush(
    kiln_hal_device_t* device, kiln_hal_queue_affinity_t affinity);

//===----------------------------------------------------------------------===//
// Device memory
//===----------------------------------------------------------------------===//
// Drivers keep the storage of released buffers in a per-device cache and
// hand it to the next allocation of the same size class, so that repeated
// calls do not pay the system allocator (hipMalloc/hipFree, fresh host
// pages). The device option `memory_limit=BYTES` (e.g. "local?memory_limit=1G",
// "hip://0?memory_limit=512M") caps the bytes a device reserves, in use plus
// cached; an allocation past it is RESOURCE_EXHAUSTED. Cached memory is freed
// by kiln_hal_device_trim, when the limit needs room, when the system runs
// out, and when the device is destroyed.

typedef struct kiln_hal_device_memory_stats_t {
  uint64_t bytes_in_use;         // storage of live buffers (whole blocks)
  uint64_t bytes_cached;         // released storage kept for reuse
  uint64_t bytes_limit;          // the memory_limit option; 0 when none
  uint64_t peak_bytes_reserved;  // highest in use + cached so far
  uint64_t system_allocations;   // blocks asked of the system
  uint64_t system_frees;         // blocks given back to it
  uint64_t cache_hits;           // allocations served from the cache
} kiln_hal_device_memory_stats_t;

// Statistics of the memory the device's allocator manages (buffers of the
// device's own memory kind; drivers may leave out special kinds such as
// managed memory). UNIMPLEMENTED for drivers without a cache.
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_device_query_memory_stats(
    kiln_hal_device_t* device, kiln_hal_device_memory_stats_t* out_stats);

// Gives every cached block back to the system. Buffers in use are not
// affected. UNIMPLEMENTED for drivers without a cache.
KILN_MUST_USE_RESULT kiln_status_t
kiln_hal_device_trim(kiln_hal_device_t* device);

// External memory and streams (DLPack's device and stream exchange) ---------
// What another library needs to share memory with a device: the memory type
// and device ordinal its buffers have (DLPack's device), and for drivers over
// a GPU runtime with streams (hip: a hipStream_t on AMD, a CUstream on
// NVIDIA) the stream their queue runs on, so that the other library can order
// its work against the device's (DLPack's __dlpack__(stream=...) value).
typedef struct kiln_hal_device_external_info_t {
  kiln_hal_external_memory_type_t memory_type;
  int32_t device_ordinal;  // in its GPU runtime; 0 for host memory
  uint64_t stream;         // the queue's stream as an integer; 0 for none
} kiln_hal_device_external_info_t;

// UNIMPLEMENTED for drivers that share no memory.
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_device_query_external_info(
    kiln_hal_device_t* device, kiln_hal_device_external_info_t* out_info);

// Blocks until the work enqueued on |stream|, a stream of the same GPU
// runtime and device (DLPack's values: 1 the legacy default stream, 2 the
// per-thread default stream on NVIDIA, else a handle), before this call has
// completed. UNIMPLEMENTED for drivers without streams.
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_device_wait_external_stream(
    kiln_hal_device_t* device, uint64_t stream);

//===----------------------------------------------------------------------===//
// Profiling
//===----------------------------------------------------------------------===//

typedef enum kiln_hal_command_kind_e {
  KILN_HAL_COMMAND_KIND_FILL = 0,
  KILN_HAL_COMMAND_KIND_UPDATE,
  KILN_HAL_COMMAND_KIND_COPY,
  KILN_HAL_COMMAND_KIND_DISPATCH,
  KILN_HAL_COMMAND_KIND_COLLECTIVE,
} kiln_hal_command_kind_t;

// How long one command of a profiled submission ran on the device.
typedef struct kiln_hal_command_timing_t {
  uint32_t command_buffer;  // index in the submission
  // Index of the command in its command buffer, in recording order
  // (barriers count but are never timed).
  uint32_t command;
  kiln_hal_command_kind_t kind;
  uint32_t reserved;
  uint64_t device_ns;  // from the command's start to its end on the device
} kiln_hal_command_timing_t;

// What a profiled submission times.
typedef enum kiln_hal_profile_mode_e {
  // Every command (fill, update, copy, dispatch, collective) and the span.
  KILN_HAL_PROFILE_COMMANDS = 0,
  // The span only: the submission is issued exactly as
  // kiln_hal_device_queue_execute issues it (a driver that replays command
  // buffers as graphs still does), with one pair of timing marks around it,
  // so that its host time and device time can be compared call by call.
  // timing_count stays 0.
  KILN_HAL_PROFILE_SPAN = 1,
} kiln_hal_profile_mode_t;

// Filled by a profiled submission before its signal semaphores are
// signalled. The caller owns it and keeps it alive until then.
typedef struct kiln_hal_execution_profile_t {
  // A kiln_hal_profile_mode_t (kept as an integer: any value a caller
  // stores is checked, none is undefined behaviour).
  uint32_t mode;
  uint32_t timing_capacity;             // entries |timings| can hold
  uint32_t timing_count;                // commands timed (may exceed capacity)
  kiln_hal_command_timing_t* timings;   // the first min(capacity, count)
  // Device time of the whole submission: from the start of its first
  // command to the end of its last (gaps between commands included).
  uint64_t span_ns;
} kiln_hal_execution_profile_t;

// kiln_hal_device_queue_execute that also times the submission on the device
// into |profile|: with KILN_HAL_PROFILE_COMMANDS every command (fill, update,
// copy, dispatch, collective) and the span, which may change how the work is
// issued (a driver that replays command buffers as graphs issues them
// command by command, with events around each), so use it to see where the
// time goes, not as the fast path; with KILN_HAL_PROFILE_SPAN the span of a
// submission issued as usual. UNIMPLEMENTED for drivers that cannot time
// commands; INVALID_ARGUMENT for another mode.
KILN_MUST_USE_RESULT kiln_status_t kiln_hal_device_queue_execute_profiled(
    kiln_hal_device_t* device, kiln_hal_queue_affinity_t affinity,
    const kiln_hal_semaphore_list_t* wait,
    const kiln_hal_semaphore_list_t* signal, uint32_t command_buffer_count,
    kiln_hal_command_buffer_t* const* command_buffers,
    const kiln_hal_binding_table_t* binding_tables,
    kiln_hal_execution_profile_t* profile);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // KILN_HAL_HAL_H_
