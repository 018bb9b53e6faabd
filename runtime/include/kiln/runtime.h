// The Kiln runtime embedding API. Plain C11.
//
// Load a compiled module (.vmfb) on a device and call its functions:
//
//   kiln_instance_t* instance;   kiln_instance_create(NULL, &instance);
//   kiln_device_t* device;       kiln_device_create(instance, "local", &device);
//   kiln_module_t* module;       kiln_module_load_file(device, "m.vmfb", &module);
//   kiln_function_t* fn;         kiln_module_lookup_function(module, "main", &fn);
//   kiln_buffer_view_t* in[2];   kiln_buffer_view_create_from_host(device, ...);
//   kiln_buffer_view_t* out[1];  kiln_function_call(fn, 2, in, 1, out);
//   kiln_buffer_view_read(out[0], host_data, sizeof(host_data));
//   ... release everything (any order: objects retain what they depend on).
//
// Errors: every fallible call returns a kiln_status_t (kiln/status.h); NULL
// means OK. A non-OK status is owned by the caller (kiln_status_free).
// Invalid arguments (NULL handles, wrong counts, shapes or types) are
// INVALID_ARGUMENT statuses with a message naming what is wrong, never a crash.
//
// Ownership: objects are reference counted. *_create / *_load return one
// reference owned by the caller; *_retain adds one and *_release drops one
// (NULL is a no-op). An object keeps alive what it was created from (a module
// retains its device, a device its instance), so release order does not
// matter. Borrowed pointers (documented as such) live as long as their owner.
//
// Thread-safety: all functions are thread-safe. Functions may be called
// concurrently from many threads; a buffer view's contents must not be read
// while a call that writes it is still running (use fences or
// kiln_buffer_view_read, which waits for pending writes).
#ifndef KILN_RUNTIME_H_
#define KILN_RUNTIME_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln/status.h"

#ifdef __cplusplus
extern "C" {
#endif

//===----------------------------------------------------------------------===//
// Element types and tensor types
//===----------------------------------------------------------------------===//

// Element types of tensors at function boundaries; the values match the
// module schema (kiln.schema.ElementType) and the HAL.
typedef enum kiln_element_type_e {
  KILN_ELEMENT_TYPE_INVALID = 0,
  KILN_ELEMENT_TYPE_I1,  // stored as one byte, 0 or 1
  KILN_ELEMENT_TYPE_I8,
  KILN_ELEMENT_TYPE_I16,
  KILN_ELEMENT_TYPE_I32,
  KILN_ELEMENT_TYPE_I64,
  KILN_ELEMENT_TYPE_U8,
  KILN_ELEMENT_TYPE_U16,
  KILN_ELEMENT_TYPE_U32,
  KILN_ELEMENT_TYPE_U64,
  KILN_ELEMENT_TYPE_F16,   // IEEE binary16
  KILN_ELEMENT_TYPE_BF16,  // bfloat16
  KILN_ELEMENT_TYPE_F32,
  KILN_ELEMENT_TYPE_F64,
} kiln_element_type_t;

// Bytes per element; 0 for INVALID or unknown values.
size_t kiln_element_type_size(kiln_element_type_t type);
// "i1", "f32", ... (static string); "invalid" for unknown values.
const char* kiln_element_type_name(kiln_element_type_t type);
// Parses a name as printed by kiln_element_type_name ("f32"); INVALID if
// |name| is not one.
kiln_element_type_t kiln_element_type_from_name(
    const char* name);

// Maximum rank of tensors the runtime accepts.
#define KILN_MAX_RANK 16

// A dense row-major tensor type. |shape| is borrowed (see the function that
// returned it for its lifetime).
typedef struct kiln_tensor_type_t {
  kiln_element_type_t element_type;
  size_t rank;
  const int64_t* shape;
} kiln_tensor_type_t;

// Writes "2x3xf32" ("f32" for rank 0) into |buffer| like snprintf: always
// NUL terminated when |capacity| > 0; returns the full length needed.
size_t kiln_tensor_type_format(const kiln_tensor_type_t* type,
                                               char* buffer, size_t capacity);

//===----------------------------------------------------------------------===//
// Instance
//===----------------------------------------------------------------------===//
// The root object: holds the HAL driver registry (the built-in `local` driver
// and any plugins). Usually one per process.

typedef struct kiln_instance_t kiln_instance_t;

typedef struct kiln_instance_options_t {
  // Driver plugins (shared library paths) to load, in addition to those in
  // $KILN_HAL_DRIVER_PLUGINS. Borrowed for the call.
  const char* const* plugin_paths;
  size_t plugin_path_count;
  // Skip $KILN_HAL_DRIVER_PLUGINS (tests that want a controlled set).
  bool ignore_plugin_environment;
} kiln_instance_options_t;

// Creates an instance. |options| may be NULL (defaults: built-in drivers plus
// $KILN_HAL_DRIVER_PLUGINS). A plugin that fails to load fails the call with
// a status naming it.
KILN_MUST_USE_RESULT kiln_status_t kiln_instance_create(
    const kiln_instance_options_t* options, kiln_instance_t** out_instance);
void kiln_instance_retain(kiln_instance_t* instance);
void kiln_instance_release(kiln_instance_t* instance);

// Loads one more driver plugin by path.
KILN_MUST_USE_RESULT kiln_status_t
kiln_instance_load_plugin(kiln_instance_t* instance, const char* path);

// Writes the URIs of all available devices ("local://0\nlocal://1\n...", one
// per line) into |buffer| like snprintf and returns the full length needed.
// Drivers that fail to enumerate are skipped.
size_t kiln_instance_list_devices(kiln_instance_t* instance,
                                                  char* buffer,
                                                  size_t capacity);

// Writes the folder where installed driver plugins live (the folder of
// libkiln_runtime.so; kiln_device_create loads libkiln_hal_<driver>.so from
// there on demand) into |buffer| like snprintf and returns the full length
// needed; 0 (and "") if it cannot be told.
size_t kiln_plugin_directory(char* buffer, size_t capacity);

//===----------------------------------------------------------------------===//
// Device
//===----------------------------------------------------------------------===//

typedef struct kiln_device_t kiln_device_t;

// Creates the device named by |uri|: "<driver>" (device 0) or
// "<driver>://<N>", e.g. "local", "local://1". NOT_FOUND names the available
// drivers and devices.
KILN_MUST_USE_RESULT kiln_status_t kiln_device_create(
    kiln_instance_t* instance, const char* uri, kiln_device_t** out_device);
void kiln_device_retain(kiln_device_t* device);
void kiln_device_release(kiln_device_t* device);
// Borrowed URI the device was created with.
const char* kiln_device_uri(const kiln_device_t* device);

// Device memory. A device keeps the storage of released buffers (outputs
// of earlier calls, transient arenas) cached for the next allocation of the
// same size, so that calls do not pay the system allocator. The URI option
// memory_limit caps what a device reserves, in use plus cached, e.g.
// "hip://0?memory_limit=16G" or "local?memory_limit=512M"; an allocation
// past it fails with RESOURCE_EXHAUSTED. Thread-safe.
typedef struct kiln_device_memory_stats_t {
  uint64_t bytes_in_use;         // storage of live buffers
  uint64_t bytes_cached;         // released storage kept for reuse
  uint64_t bytes_limit;          // the memory_limit option; 0 when none
  uint64_t peak_bytes_reserved;  // highest in use + cached so far
  uint64_t system_allocations;   // blocks asked of the system
  uint64_t system_frees;         // blocks given back to it
  uint64_t cache_hits;           // allocations served from the cache
} kiln_device_memory_stats_t;

// UNIMPLEMENTED for drivers without a buffer cache.
KILN_MUST_USE_RESULT kiln_status_t kiln_device_query_memory_stats(
    kiln_device_t* device, kiln_device_memory_stats_t* out_stats);
// Gives the cached storage back to the system (buffers in use stay).
// UNIMPLEMENTED for drivers without a buffer cache.
KILN_MUST_USE_RESULT kiln_status_t kiln_device_trim(kiln_device_t* device);

//===----------------------------------------------------------------------===//
// Collective groups (SPMD programs)
//===----------------------------------------------------------------------===//
// A function compiled for a device grid (its module has channels) runs as one
// program per rank: the same call on every rank of the group at once, each
// with its own inputs, exchanging data through collectives. A collective
// group makes |world_size| ranks out of devices, possibly of several
// processes: this process owns ranks first_rank .. first_rank +
// device_count - 1, one per device, in order. The ranks form the function's
// grid in row-major order.
//
// Every rank must take part in the same group operations at the same time:
// create the group, load each module, and call each SPMD function on all
// ranks concurrently (one thread per device of this process; collectives
// block until all ranks arrive). A module is loaded on a group device like
// any other (kiln_module_load_*); the load derives each of its channels from
// the group's world channel (kiln_hal_channel_split, collective over all
// ranks), so load modules on every rank in the same order. A rank that fails
// before a collective leaves its peers waiting in that collective: report the
// error and release the devices (the local driver then aborts the waiting
// collectives), or end the process.

typedef struct kiln_collective_group_t kiln_collective_group_t;

typedef struct kiln_collective_group_params_t {
  // Ranks in the whole group (all processes); at most 65536.
  int32_t world_size;
  // The rank of devices[0]; this process owns the next device_count ranks.
  int32_t first_rank;
  // How the processes find each other when this process does not own every
  // rank: "file:DIR" (a directory all processes see; it must not hold files
  // of an earlier run) or "tcp://HOST:PORT" (the process of rank 0 listens
  // there, the others connect). NULL or "" when device_count == world_size.
  const char* rendezvous;
  // How long to wait for the other processes at the rendezvous, in
  // nanoseconds; 0 means 5 minutes.
  int64_t rendezvous_timeout_ns;
} kiln_collective_group_params_t;

// Creates the group and its world channel on each device (in one thread per
// device: drivers may block until every rank joined). The process of rank 0
// makes the channel id and publishes it; the others wait for it
// (DEADLINE_EXCEEDED naming the rendezvous and what was awaited). A device
// belongs to at most one group (FAILED_PRECONDITION otherwise); the group
// retains its devices until it is released. INVALID_ARGUMENT for bad ranks,
// or a missing rendezvous when device_count < world_size; FAILED_PRECONDITION
// when the devices' driver cannot connect ranks of several processes (the
// local driver).
KILN_MUST_USE_RESULT kiln_status_t
kiln_collective_group_create(kiln_device_t* const* devices, size_t device_count,
                             const kiln_collective_group_params_t* params,
                             kiln_collective_group_t** out_group);
void kiln_collective_group_retain(kiln_collective_group_t* group);
// Releasing the last reference removes the devices from the group: modules
// loaded afterwards on them get no channels (loaded ones keep theirs).
void kiln_collective_group_release(kiln_collective_group_t* group);
int32_t kiln_collective_group_world_size(
    const kiln_collective_group_t* group);
// Rank of |device| in its collective group, or -1 if it is in none.
int32_t kiln_device_collective_rank(const kiln_device_t* device);
// World size of |device|'s collective group, or 0 if it is in none.
int32_t kiln_device_collective_world_size(const kiln_device_t* device);

//===----------------------------------------------------------------------===//
// Module and functions
//===----------------------------------------------------------------------===//
// A module is a .vmfb loaded on one device: verified, its executables
// prepared and its constant data uploaded once, and each function's command
// program recorded once for replay by every call.

typedef struct kiln_module_t kiln_module_t;
// Named tensors given when a module is loaded (Parameters below).
typedef struct kiln_parameters_t kiln_parameters_t;
// A function of a module; borrowed from the module (valid while it lives).
typedef struct kiln_function_t kiln_function_t;

// Loads the module file at |path| on |device|. NOT_FOUND for a missing file;
// DATA_LOSS / INVALID_ARGUMENT for a corrupt, truncated or foreign file;
// INCOMPATIBLE for another module version or when no executable variant can
// run on the device (naming the variants). On a device of a collective group
// the load also creates the channels of the module's SPMD functions (see
// Collective groups): FAILED_PRECONDITION when a function's grid size is not
// the group's world size. On a device of no group, SPMD functions load but
// calling them is FAILED_PRECONDITION.
KILN_MUST_USE_RESULT kiln_status_t kiln_module_load_file(
    kiln_device_t* device, const char* path, kiln_module_t** out_module);
// Same from |size| bytes at |data|, which are copied (the caller may free
// them after the call).
KILN_MUST_USE_RESULT kiln_status_t
kiln_module_load_memory(kiln_device_t* device, const void* data, size_t size,
                        kiln_module_t** out_module);
// A module compiled with load-time parameters (kiln-compile
// --parameter-mode=load) names tensors it does not hold; loading it without
// parameters is FAILED_PRECONDITION naming the first one. These load it with
// |parameters| (see Parameters below; NULL is the same as the plain loads):
// each parameter the module names is looked up by name and uploaded to the
// device with the module's other read-only data. NOT_FOUND names a parameter
// that |parameters| lacks and lists what it has; INVALID_ARGUMENT names a
// parameter whose element type or shape differs from the module's (expected
// and found). Tensors the module does not name are ignored. |parameters| is
// only read during the call (it may be released or reused afterwards).
KILN_MUST_USE_RESULT kiln_status_t kiln_module_load_file_with_parameters(
    kiln_device_t* device, const char* path,
    const kiln_parameters_t* parameters, kiln_module_t** out_module);
KILN_MUST_USE_RESULT kiln_status_t kiln_module_load_memory_with_parameters(
    kiln_device_t* device, const void* data, size_t size,
    const kiln_parameters_t* parameters, kiln_module_t** out_module);
void kiln_module_retain(kiln_module_t* module);
void kiln_module_release(kiln_module_t* module);

// Borrowed module name ("" if it has none).
const char* kiln_module_name(const kiln_module_t* module);
// Borrowed device the module was loaded on.
kiln_device_t* kiln_module_device(const kiln_module_t* module);
size_t kiln_module_function_count(const kiln_module_t* module);
// Function |index| (borrowed); OUT_OF_RANGE for a bad index.
KILN_MUST_USE_RESULT kiln_status_t kiln_module_function_at(
    const kiln_module_t* module, size_t index, kiln_function_t** out_function);
// Function called |name| (borrowed). NOT_FOUND lists the module's functions.
KILN_MUST_USE_RESULT kiln_status_t
kiln_module_lookup_function(const kiln_module_t* module, const char* name,
                            kiln_function_t** out_function);

// Reflection. Names and shapes are borrowed from the module.
const char* kiln_function_name(const kiln_function_t* function);
size_t kiln_function_input_count(
    const kiln_function_t* function);
size_t kiln_function_output_count(
    const kiln_function_t* function);
// Type of input/output |index|; OUT_OF_RANGE for a bad index.
KILN_MUST_USE_RESULT kiln_status_t
kiln_function_input_type(const kiln_function_t* function, size_t index,
                         kiln_tensor_type_t* out_type);
KILN_MUST_USE_RESULT kiln_status_t
kiln_function_output_type(const kiln_function_t* function, size_t index,
                          kiln_tensor_type_t* out_type);
// Ranks |function| runs on: 1 for an ordinary function, the product of its
// grid shape for an SPMD function (one that has channels); 0 for NULL.
int32_t kiln_function_world_size(const kiln_function_t* function);
// Writes "(2x3xf32, f32) -> (2x3xf32)" like snprintf.
size_t kiln_function_format_signature(
    const kiln_function_t* function, char* buffer, size_t capacity);

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//
// Weights outside the module: a set of named host tensors that
// kiln_module_load_*_with_parameters binds to the module's load-time
// parameters. Tensors come from parameter archives (safetensors files, or
// numpy .npz archives as np.savez / np.savez_compressed write them) and from
// host memory. The set holds copies of everything added (an archive is read
// whole when added), so callers may free their buffers after each call.
// Archives are untrusted input: a malformed one is an error of the add,
// never a crash. Every name may be given once across the set.
//
// Ownership: reference counted (create returns the first reference).
// Thread-safety: adds must not race with each other or with loads; a set
// that is no longer changed may be used by loads on many threads at once.

KILN_MUST_USE_RESULT kiln_status_t
kiln_parameters_create(kiln_parameters_t** out_parameters);
void kiln_parameters_retain(kiln_parameters_t* parameters);
void kiln_parameters_release(kiln_parameters_t* parameters);
// Reads the archive at |path| (a safetensors or .npz regular file, told apart
// by content) and adds its tensors. NOT_FOUND / PERMISSION_DENIED /
// INVALID_ARGUMENT when the file cannot be read; DATA_LOSS naming the file
// and what is wrong for a malformed archive (bad header, offsets outside the
// file, CRC mismatch, Fortran order, ...); ALREADY_EXISTS for a tensor name
// the set already has. On error the set is unchanged.
KILN_MUST_USE_RESULT kiln_status_t kiln_parameters_add_archive_file(
    kiln_parameters_t* parameters, const char* path);
// The same for an archive of |size| bytes at |data| (copied), called |name|
// in messages.
KILN_MUST_USE_RESULT kiln_status_t kiln_parameters_add_archive_memory(
    kiln_parameters_t* parameters, const void* data, size_t size,
    const char* name);
// Adds tensor |name|: |element_type|, |shape| (|rank| dimensions) and its
// dense row-major bytes, |byte_length| of them at |data| (copied).
// INVALID_ARGUMENT for an empty name, a bad type or a byte length other than
// the type's; ALREADY_EXISTS for a name the set has.
KILN_MUST_USE_RESULT kiln_status_t kiln_parameters_add_tensor(
    kiln_parameters_t* parameters, const char* name,
    kiln_element_type_t element_type, const int64_t* shape, size_t rank,
    const void* data, size_t byte_length);
// The number of tensors in the set (0 for NULL).
size_t kiln_parameters_count(const kiln_parameters_t* parameters);

//===----------------------------------------------------------------------===//
// Buffer views
//===----------------------------------------------------------------------===//
// A dense row-major tensor (element type + shape) in a buffer of one device.
// Views returned by calls may still be being written by the device; reading
// them waits for that (kiln_buffer_view_read) or use the call's fence.

typedef struct kiln_buffer_view_t kiln_buffer_view_t;

// Creates a view on |device| holding a copy of |data|, which must be exactly
// element size x element count bytes (INVALID_ARGUMENT otherwise; NULL data is
// allowed only for an empty tensor). |shape| has |rank| entries (may be NULL
// for rank 0).
KILN_MUST_USE_RESULT kiln_status_t kiln_buffer_view_create_from_host(
    kiln_device_t* device, kiln_element_type_t element_type, size_t rank,
    const int64_t* shape, const void* data, size_t data_length,
    kiln_buffer_view_t** out_view);
void kiln_buffer_view_retain(kiln_buffer_view_t* view);
void kiln_buffer_view_release(kiln_buffer_view_t* view);

kiln_element_type_t kiln_buffer_view_element_type(
    const kiln_buffer_view_t* view);
size_t kiln_buffer_view_rank(const kiln_buffer_view_t* view);
// Borrowed shape (rank entries) valid while the view lives.
const int64_t* kiln_buffer_view_shape(
    const kiln_buffer_view_t* view);
uint64_t kiln_buffer_view_element_count(
    const kiln_buffer_view_t* view);
uint64_t kiln_buffer_view_byte_length(
    const kiln_buffer_view_t* view);
// The view's type; |shape| is borrowed from the view.
kiln_tensor_type_t kiln_buffer_view_type(
    const kiln_buffer_view_t* view);
// Borrowed device holding the view's data.
kiln_device_t* kiln_buffer_view_device(
    const kiln_buffer_view_t* view);

// Copies the view's contents to |data| (|data_length| must equal the byte
// length). Waits first for the call that produced the view, if any; returns
// that call's failure if it failed.
KILN_MUST_USE_RESULT kiln_status_t kiln_buffer_view_read(
    const kiln_buffer_view_t* view, void* data, size_t data_length);

// External memory (zero-copy exchange, e.g. DLPack) --------------------------
// A view can use memory that another library owns (a PyTorch tensor on the
// same GPU, a numpy array for the local device) in place, and another
// library can use a view's memory in place.

// Where memory lives (DLPack's device types kDLCPU, kDLCUDA, kDLROCM); a
// plain integer, checked by the runtime.
typedef uint32_t kiln_external_memory_type_t;
enum kiln_external_memory_type_e {
  // Host memory of this process: what local devices compute on.
  KILN_EXTERNAL_MEMORY_HOST = 1,
  // Device memory of a CUDA GPU (hip devices on NVIDIA).
  KILN_EXTERNAL_MEMORY_CUDA = 2,
  // Device memory of a ROCm GPU (hip devices on AMD).
  KILN_EXTERNAL_MEMORY_ROCM = 3,
};

typedef struct kiln_external_memory_t {
  kiln_external_memory_type_t type;
  // The tensor's first byte, 16-byte aligned (kernels read with 16-byte
  // accesses), dense row-major.
  void* data;
  uint64_t byte_length;
  // Called exactly once when the runtime no longer uses the memory: after
  // the last view over it is released and every call that used it completed;
  // on any thread (often a driver thread), so it must not wait for the
  // device. NULL for none. Never called when the import fails.
  void (*release)(void* user_data);
  void* user_data;
} kiln_external_memory_t;

// Creates a view over |memory| on |device| without copying: the tensor's
// bytes (element size x element count) must be |memory|'s byte_length, and
// the memory of the type the device computes on
// (kiln_device_query_external_info). Calls read inputs in place, so the
// owner must not write the memory while a call that takes the view may run;
// the owner's pending writes must be ordered before the device's work (on
// GPUs: make the device's stream wait for them). INVALID_ARGUMENT for a bad
// type, length or alignment, another memory type, or device memory of
// another GPU; UNIMPLEMENTED when |device|'s driver shares no memory.
KILN_MUST_USE_RESULT kiln_status_t kiln_buffer_view_import(
    kiln_device_t* device, kiln_element_type_t element_type, size_t rank,
    const int64_t* shape, const kiln_external_memory_t* memory,
    kiln_buffer_view_t** out_view);

// The memory behind |view| for another library to use in place: its type,
// address and byte length (|release| and |user_data| are set to NULL). Waits
// first for the call that produced the view, if any (its failure is
// returned). The memory stays valid while the caller holds a reference to
// the view; the caller must not write it while calls that take the view may
// run, and must have finished using it (on GPUs: synchronized its streams,
// kiln_device_wait_external_stream) before releasing the view, since the
// device reuses the memory at once. UNIMPLEMENTED for drivers that do not
// expose addresses.
KILN_MUST_USE_RESULT kiln_status_t kiln_buffer_view_export(
    kiln_buffer_view_t* view, kiln_external_memory_t* out_memory);

// What sharing memory with |device| takes: the memory type and GPU ordinal
// of its buffers (DLPack's __dlpack_device__), and the GPU runtime stream its
// work runs on (hip: a hipStream_t on AMD, a CUstream on NVIDIA, as an
// integer; 0 for local devices, whose work needs no ordering beyond the
// caller's program order): DLPack's __dlpack__(stream=) value for a producer
// to order its writes before the device's reads. UNIMPLEMENTED for drivers
// that share no memory.
typedef struct kiln_device_external_info_t {
  kiln_external_memory_type_t memory_type;
  int32_t device_ordinal;
  uint64_t stream;
} kiln_device_external_info_t;
KILN_MUST_USE_RESULT kiln_status_t kiln_device_query_external_info(
    kiln_device_t* device, kiln_device_external_info_t* out_info);

// Blocks until the work enqueued so far on |stream| (a stream of the same GPU
// runtime and device; DLPack's values: 1 the legacy default stream, 2 the
// per-thread default stream on NVIDIA) completed: how a consumer of exported
// memory is finished with it before the view is released. UNIMPLEMENTED for
// devices without streams.
KILN_MUST_USE_RESULT kiln_status_t
kiln_device_wait_external_stream(kiln_device_t* device, uint64_t stream);

//===----------------------------------------------------------------------===//
// Fences
//===----------------------------------------------------------------------===//
// A fence is a point on a device timeline (a HAL timeline semaphore and a
// value). It is signaled once (by the host or by a call), or failed, which is
// sticky: waits and queries return the failure.

typedef struct kiln_fence_t kiln_fence_t;

// Creates an unsignaled fence on |device|.
KILN_MUST_USE_RESULT kiln_status_t kiln_fence_create(kiln_device_t* device,
                                                     kiln_fence_t** out_fence);
void kiln_fence_retain(kiln_fence_t* fence);
void kiln_fence_release(kiln_fence_t* fence);

// Signals the fence from the host. FAILED_PRECONDITION if already signaled;
// the failure if it failed.
KILN_MUST_USE_RESULT kiln_status_t kiln_fence_signal(kiln_fence_t* fence);
// Fails the fence with a copy of |status| (not taken; must be non-OK).
void kiln_fence_fail(kiln_fence_t* fence, kiln_status_t status);
// Waits until the fence is signaled (OK), failed (the failure) or
// |timeout_ns| passes (DEADLINE_EXCEEDED). 0 polls; INT64_MAX waits forever.
KILN_MUST_USE_RESULT kiln_status_t kiln_fence_wait(kiln_fence_t* fence,
                                                   int64_t timeout_ns);
// Sets *out_signaled without waiting; returns the failure if the fence failed.
KILN_MUST_USE_RESULT kiln_status_t kiln_fence_query(kiln_fence_t* fence,
                                                    bool* out_signaled);

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

// Calls |function| synchronously: checks the inputs against the signature
// (count, element type, shape: INVALID_ARGUMENT naming the function, input
// index, expected and actual type), runs the function on the module's device
// and writes |output_count| (must equal the function's output count) new
// views to |out_outputs|, each owned by the caller. Inputs must live on the
// module's device. On failure no outputs are returned.
KILN_MUST_USE_RESULT kiln_status_t
kiln_function_call(kiln_function_t* function, size_t input_count,
                   kiln_buffer_view_t* const* inputs, size_t output_count,
                   kiln_buffer_view_t** out_outputs);

// Like kiln_function_call but returns once the work is submitted: it starts
// after |wait_fence| (NULL: no wait) is signaled and signals |signal_fence|
// (NULL: none) when done, or fails it with the error. The outputs are
// returned at once; reading them waits for the call. A call whose
// wait_fence fails fails too, without running. Argument errors are returned
// synchronously and submit nothing.
KILN_MUST_USE_RESULT kiln_status_t
kiln_function_call_async(kiln_function_t* function, size_t input_count,
                         kiln_buffer_view_t* const* inputs,
                         kiln_fence_t* wait_fence, kiln_fence_t* signal_fence,
                         size_t output_count, kiln_buffer_view_t** out_outputs);

// Where the time of a call goes. kiln_function_profile runs one synchronous
// call like kiln_function_call and times each command of the function's
// command program on the device (dispatches, copies, fills, collectives),
// besides the call's host time. Profiled calls are issued command by command
// with timing events (a driver that replays functions as graphs does not
// here), so time ordinary calls for latency and profile to see the split.
typedef struct kiln_command_profile_t {
  uint32_t index;    // of the command in the function's command program
  const char* kind;  // "dispatch", "copy", "fill", "update", "collective"
  // Dispatches: the kernel's export name; collectives: the operation
  // ("all_reduce"); others: the kind. Borrowed from the module.
  const char* name;
  uint64_t device_ns;  // the command's time on the device
} kiln_command_profile_t;

typedef struct kiln_call_profile_t {
  uint64_t host_ns;    // submission until the outputs were ready
  uint64_t device_ns;  // first command's start to last command's end
  size_t command_count;
  kiln_command_profile_t* commands;  // owned by the profile
} kiln_call_profile_t;

// kiln_function_call that also returns a profile of the call (free it with
// kiln_call_profile_free). UNIMPLEMENTED for drivers that cannot time
// commands. The function's module must stay loaded while the profile's
// names are used.
KILN_MUST_USE_RESULT kiln_status_t kiln_function_profile(
    kiln_function_t* function, size_t input_count,
    kiln_buffer_view_t* const* inputs, size_t output_count,
    kiln_buffer_view_t** out_outputs, kiln_call_profile_t** out_profile);
void kiln_call_profile_free(kiln_call_profile_t* profile);

// Host and device time of one call.
typedef struct kiln_call_timing_t {
  uint64_t host_ns;    // submission until the outputs were ready
  uint64_t device_ns;  // first command's start to last command's end
} kiln_call_timing_t;

// kiln_function_call issued exactly as kiln_function_call issues it (graphs
// stay graphs) with one pair of device timing marks around the whole
// submission: host_ns - device_ns is what the call costs beyond its device
// work, measured on the same call. UNIMPLEMENTED for drivers that cannot
// time submissions.
KILN_MUST_USE_RESULT kiln_status_t kiln_function_call_timed(
    kiln_function_t* function, size_t input_count,
    kiln_buffer_view_t* const* inputs, size_t output_count,
    kiln_buffer_view_t** out_outputs, kiln_call_timing_t* out_timing);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // KILN_RUNTIME_H_
