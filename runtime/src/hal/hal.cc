// The HAL core: the public functions of kiln/hal/hal.h. They validate their
// arguments (so drivers see well-formed calls, see driver_abi.h), track
// command buffer states and forward to the object's driver vtable.

#include <cstddef>
#include <cstring>
#include <type_traits>

#include "kiln/hal/driver_abi.h"
#include "kiln/hal/hal.h"

namespace {

template <typename VTable, typename Object>
const VTable* vtableOf(Object* object) {
  return static_cast<const VTable*>(object->resource.vtable);
}

#define KILN_VTABLE(kind, object) \
  vtableOf<kiln_hal_##kind##_vtable_t>(object)

kiln_status_t nullArgument(const char* function, const char* argument) {
  return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                          function, argument);
}

#define KILN_CHECK_ARG(arg)                                     \
  do {                                                          \
    if (!(arg)) return nullArgument(__func__, #arg);            \
  } while (0)

// Checks [offset, offset+length) against a buffer of |byteLength| bytes and
// resolves KILN_HAL_WHOLE_BUFFER.
kiln_status_t resolveRange(const char* what, kiln_device_size_t byteLength,
                           kiln_device_size_t offset,
                           kiln_device_size_t* length) {
  if (offset > byteLength)
    return kiln_make_status(KILN_STATUS_OUT_OF_RANGE,
                            "%s: offset %llu is past the end of a %llu-byte "
                            "buffer",
                            what, (unsigned long long)offset,
                            (unsigned long long)byteLength);
  if (*length == KILN_HAL_WHOLE_BUFFER) {
    *length = byteLength - offset;
  } else if (*length > byteLength - offset) {
    return kiln_make_status(KILN_STATUS_OUT_OF_RANGE,
                            "%s: range [%llu, %llu + %llu) exceeds a %llu-byte "
                            "buffer",
                            what, (unsigned long long)offset,
                            (unsigned long long)offset,
                            (unsigned long long)*length,
                            (unsigned long long)byteLength);
  }
  return nullptr;
}

// Validates a buffer ref recorded into |commandBuffer|: concrete buffers get
// their range checked and resolved, slot refs are checked against the
// binding capacity.
kiln_status_t resolveRef(kiln_hal_command_buffer_t* commandBuffer,
                         const char* what, kiln_hal_buffer_ref_t* ref) {
  if (ref->buffer)
    return resolveRange(what, ref->buffer->byte_length, ref->offset,
                        &ref->length);
  if (ref->slot >= commandBuffer->binding_capacity)
    return kiln_make_status(KILN_STATUS_OUT_OF_RANGE,
                            "%s: binding slot %u is outside the command "
                            "buffer's binding capacity %u",
                            what, ref->slot, commandBuffer->binding_capacity);
  if (ref->length != KILN_HAL_WHOLE_BUFFER &&
      ref->offset + ref->length < ref->offset)
    return kiln_make_status(KILN_STATUS_OUT_OF_RANGE,
                            "%s: range overflows", what);
  return nullptr;
}

kiln_status_t checkRecording(kiln_hal_command_buffer_t* commandBuffer,
                             const char* function) {
  uint32_t state = __atomic_load_n(&commandBuffer->state, __ATOMIC_ACQUIRE);
  if (state != KILN_HAL_COMMAND_BUFFER_STATE_RECORDING)
    return kiln_make_status(KILN_STATUS_FAILED_PRECONDITION,
                            "%s: the command buffer is not recording (call "
                            "kiln_hal_command_buffer_begin first; a command "
                            "buffer is recorded once)",
                            function);
  return nullptr;
}

const kiln_hal_semaphore_list_t kEmptySemaphoreList = {0, nullptr, nullptr};

kiln_status_t checkSemaphoreList(const char* function, const char* which,
                                 const kiln_hal_semaphore_list_t** list) {
  if (!*list) {
    *list = &kEmptySemaphoreList;
    return nullptr;
  }
  if ((*list)->count == 0) return nullptr;
  if (!(*list)->semaphores || !(*list)->payload_values)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: %s semaphore list has %u entries but no "
                            "arrays",
                            function, which, (*list)->count);
  for (uint32_t i = 0; i < (*list)->count; ++i) {
    if (!(*list)->semaphores[i])
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "%s: %s semaphore %u is NULL", function, which,
                              i);
  }
  return nullptr;
}

}  // namespace

extern "C" {

size_t kiln_hal_element_type_size(kiln_hal_element_type_t type) {
  switch (type) {
    case KILN_HAL_ELEMENT_TYPE_I1:
    case KILN_HAL_ELEMENT_TYPE_I8:
    case KILN_HAL_ELEMENT_TYPE_U8:
      return 1;
    case KILN_HAL_ELEMENT_TYPE_I16:
    case KILN_HAL_ELEMENT_TYPE_U16:
    case KILN_HAL_ELEMENT_TYPE_F16:
    case KILN_HAL_ELEMENT_TYPE_BF16:
      return 2;
    case KILN_HAL_ELEMENT_TYPE_I32:
    case KILN_HAL_ELEMENT_TYPE_U32:
    case KILN_HAL_ELEMENT_TYPE_F32:
      return 4;
    case KILN_HAL_ELEMENT_TYPE_I64:
    case KILN_HAL_ELEMENT_TYPE_U64:
    case KILN_HAL_ELEMENT_TYPE_F64:
      return 8;
    case KILN_HAL_ELEMENT_TYPE_INVALID:
      break;
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Retain / release
//===----------------------------------------------------------------------===//

#define KILN_DEFINE_RETAIN_RELEASE(kind)                                \
  void kiln_hal_##kind##_retain(kiln_hal_##kind##_t* object) {          \
    if (object) kiln_hal_resource_retain(&object->resource);            \
  }                                                                     \
  void kiln_hal_##kind##_release(kiln_hal_##kind##_t* object) {         \
    if (object) kiln_hal_resource_release(&object->resource);           \
  }

// kiln_hal_resource_release calls every object's destroy through
// kiln_hal_resource_vtable_t: each vtable must begin with exactly that
// member, or the call is undefined behaviour (clang -fsanitize=function).
#define KILN_CHECK_DESTROY(kind)                                               \
  static_assert(                                                               \
      std::is_same_v<decltype(kiln_hal_##kind##_vtable_t::destroy),            \
                     decltype(kiln_hal_resource_vtable_t::destroy)> &&         \
          offsetof(kiln_hal_##kind##_vtable_t, destroy) == 0,                  \
      "kiln_hal_" #kind "_vtable_t must begin with "                           \
      "kiln_hal_resource_vtable_t's destroy");
KILN_CHECK_DESTROY(driver)
KILN_CHECK_DESTROY(device)
KILN_CHECK_DESTROY(allocator)
KILN_CHECK_DESTROY(buffer)
KILN_CHECK_DESTROY(semaphore)
KILN_CHECK_DESTROY(command_buffer)
KILN_CHECK_DESTROY(executable_cache)
KILN_CHECK_DESTROY(executable)
KILN_CHECK_DESTROY(channel)
KILN_CHECK_DESTROY(window)

KILN_DEFINE_RETAIN_RELEASE(driver)
KILN_DEFINE_RETAIN_RELEASE(device)
KILN_DEFINE_RETAIN_RELEASE(buffer)
KILN_DEFINE_RETAIN_RELEASE(semaphore)
KILN_DEFINE_RETAIN_RELEASE(command_buffer)
KILN_DEFINE_RETAIN_RELEASE(executable_cache)
KILN_DEFINE_RETAIN_RELEASE(executable)
KILN_DEFINE_RETAIN_RELEASE(channel)
KILN_DEFINE_RETAIN_RELEASE(window)

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

const char* kiln_hal_driver_name(kiln_hal_driver_t* driver) {
  return driver && driver->name ? driver->name : "";
}

kiln_status_t kiln_hal_driver_enumerate_devices(
    kiln_hal_driver_t* driver, uint32_t capacity,
    kiln_hal_device_info_t* out_infos, uint32_t* out_count) {
  KILN_CHECK_ARG(driver);
  KILN_CHECK_ARG(out_count);
  if (capacity > 0 && !out_infos) return nullArgument(__func__, "out_infos");
  *out_count = 0;
  return KILN_VTABLE(driver, driver)
      ->enumerate_devices(driver, capacity, out_infos, out_count);
}

kiln_status_t kiln_hal_driver_create_device(kiln_hal_driver_t* driver,
                                            uint32_t ordinal,
                                            kiln_hal_device_t** out_device) {
  return kiln_hal_driver_create_device_with_options(driver, ordinal, "",
                                                    out_device);
}

kiln_status_t kiln_hal_driver_create_device_with_options(
    kiln_hal_driver_t* driver, uint32_t ordinal, const char* options,
    kiln_hal_device_t** out_device) {
  KILN_CHECK_ARG(out_device);
  *out_device = nullptr;
  KILN_CHECK_ARG(driver);
  KILN_CHECK_ARG(options);
  return KILN_VTABLE(driver, driver)->create_device(driver, ordinal, options,
                                                    out_device);
}

//===----------------------------------------------------------------------===//
// Device
//===----------------------------------------------------------------------===//

kiln_status_t kiln_hal_device_info(kiln_hal_device_t* device,
                                   kiln_hal_device_info_t* out_info) {
  KILN_CHECK_ARG(device);
  KILN_CHECK_ARG(out_info);
  std::memset(out_info, 0, sizeof(*out_info));
  return KILN_VTABLE(device, device)->query_info(device, out_info);
}

const char* kiln_hal_device_driver_name(kiln_hal_device_t* device) {
  return device && device->driver_name ? device->driver_name : "";
}

kiln_hal_allocator_t* kiln_hal_device_allocator(kiln_hal_device_t* device) {
  if (!device) return nullptr;
  return KILN_VTABLE(device, device)->allocator(device);
}

kiln_status_t kiln_hal_device_queue_alloca(
    kiln_hal_device_t* device, kiln_hal_queue_affinity_t affinity,
    const kiln_hal_semaphore_list_t* wait,
    const kiln_hal_semaphore_list_t* signal,
    const kiln_hal_buffer_params_t* params, kiln_device_size_t size,
    kiln_hal_buffer_t** out_buffer) {
  KILN_CHECK_ARG(out_buffer);
  *out_buffer = nullptr;
  KILN_CHECK_ARG(device);
  KILN_CHECK_ARG(params);
  if (size == 0)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: cannot allocate 0 bytes", __func__);
  KILN_RETURN_IF_ERROR(checkSemaphoreList(__func__, "wait", &wait));
  KILN_RETURN_IF_ERROR(checkSemaphoreList(__func__, "signal", &signal));
  return KILN_VTABLE(device, device)
      ->queue_alloca(device, affinity, wait, signal, params, size, out_buffer);
}

kiln_status_t kiln_hal_device_queue_dealloca(
    kiln_hal_device_t* device, kiln_hal_queue_affinity_t affinity,
    const kiln_hal_semaphore_list_t* wait,
    const kiln_hal_semaphore_list_t* signal, kiln_hal_buffer_t* buffer) {
  KILN_CHECK_ARG(device);
  KILN_CHECK_ARG(buffer);
  KILN_RETURN_IF_ERROR(checkSemaphoreList(__func__, "wait", &wait));
  KILN_RETURN_IF_ERROR(checkSemaphoreList(__func__, "signal", &signal));
  return KILN_VTABLE(device, device)
      ->queue_dealloca(device, affinity, wait, signal, buffer);
}

// queue_execute and queue_execute_profiled (|profile| non-NULL): the
// checks, then the driver. |caller| names the API function in messages.
static kiln_status_t queueExecute(
    const char* caller, kiln_hal_device_t* device,
    kiln_hal_queue_affinity_t affinity, const kiln_hal_semaphore_list_t* wait,
    const kiln_hal_semaphore_list_t* signal, uint32_t command_buffer_count,
    kiln_hal_command_buffer_t* const* command_buffers,
    const kiln_hal_binding_table_t* binding_tables,
    kiln_hal_execution_profile_t* profile) {
  if (!device) return nullArgument(caller, "device");
  const kiln_hal_device_vtable_t* vtable = KILN_VTABLE(device, device);
  if (profile) {
    if (!vtable->queue_execute_profiled)
      return kiln_make_status(KILN_STATUS_UNIMPLEMENTED,
                              "%s: the %s driver cannot time commands",
                              caller, device->driver_name);
    if (profile->timing_capacity > 0 && !profile->timings)
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "%s: profile has a timing capacity of %u but "
                              "no timings array",
                              caller, profile->timing_capacity);
  }
  if (command_buffer_count > 0 && !command_buffers)
    return nullArgument(caller, "command_buffers");
  KILN_RETURN_IF_ERROR(checkSemaphoreList(caller, "wait", &wait));
  KILN_RETURN_IF_ERROR(checkSemaphoreList(caller, "signal", &signal));
  for (uint32_t i = 0; i < command_buffer_count; ++i) {
    kiln_hal_command_buffer_t* commandBuffer = command_buffers[i];
    if (!commandBuffer)
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "%s: command buffer %u is NULL", caller, i);
    if (__atomic_load_n(&commandBuffer->state, __ATOMIC_ACQUIRE) !=
        KILN_HAL_COMMAND_BUFFER_STATE_EXECUTABLE)
      return kiln_make_status(KILN_STATUS_FAILED_PRECONDITION,
                              "%s: command buffer %u was not ended (call "
                              "kiln_hal_command_buffer_end before submitting)",
                              caller, i);
    const kiln_hal_binding_table_t* table =
        binding_tables ? &binding_tables[i] : nullptr;
    uint32_t tableCount = table ? table->count : 0;
    if (tableCount < commandBuffer->binding_capacity)
      return kiln_make_status(
          KILN_STATUS_INVALID_ARGUMENT,
          "%s: command buffer %u has binding capacity %u but its binding "
          "table has %u entries",
          caller, i, commandBuffer->binding_capacity, tableCount);
    if (tableCount > 0 && !table->bindings)
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "%s: binding table %u has %u entries but no "
                              "array",
                              caller, i, tableCount);
    for (uint32_t slot = 0; slot < tableCount; ++slot) {
      const kiln_hal_binding_t& binding = table->bindings[slot];
      if (!binding.buffer) continue;
      kiln_device_size_t length = binding.length;
      kiln_status_t status =
          resolveRange("binding table entry", binding.buffer->byte_length,
                       binding.offset, &length);
      if (status)
        return kiln_status_annotate(status, "command buffer %u, slot %u", i,
                                    slot);
    }
  }
  // One-shot command buffers may be submitted once. Claim them only after
  // every other check passed, and give the claims back if one of them was
  // taken already, so that a rejected call consumes nothing.
  for (uint32_t i = 0; i < command_buffer_count; ++i) {
    kiln_hal_command_buffer_t* commandBuffer = command_buffers[i];
    if (!(commandBuffer->mode & KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT))
      continue;
    if (__atomic_fetch_add(&commandBuffer->submit_count, 1,
                           __ATOMIC_ACQ_REL) == 0)
      continue;
    for (uint32_t j = 0; j <= i; ++j) {
      if (command_buffers[j]->mode & KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT)
        __atomic_fetch_sub(&command_buffers[j]->submit_count, 1,
                           __ATOMIC_ACQ_REL);
    }
    return kiln_make_status(KILN_STATUS_FAILED_PRECONDITION,
                            "%s: one-shot command buffer %u was already "
                            "submitted",
                            caller, i);
  }
  // Drivers always get a table per command buffer.
  const kiln_hal_binding_table_t kNoBindings = {0, nullptr};
  if (!binding_tables && command_buffer_count > 0) {
    kiln_hal_binding_table_t* tables = static_cast<kiln_hal_binding_table_t*>(
        __builtin_alloca(sizeof(kiln_hal_binding_table_t) *
                         command_buffer_count));
    for (uint32_t i = 0; i < command_buffer_count; ++i) tables[i] = kNoBindings;
    binding_tables = tables;
  }
  if (!profile)
    return vtable->queue_execute(device, affinity, wait, signal,
                                 command_buffer_count, command_buffers,
                                 binding_tables);
  profile->timing_count = 0;
  profile->span_ns = 0;
  for (uint32_t i = 0; i < profile->timing_capacity; ++i)
    profile->timings[i] = kiln_hal_command_timing_t{};
  return vtable->queue_execute_profiled(device, affinity, wait, signal,
                                        command_buffer_count, command_buffers,
                                        binding_tables, profile);
}

kiln_status_t kiln_hal_device_queue_execute(
    kiln_hal_device_t* device, kiln_hal_queue_affinity_t affinity,
    const kiln_hal_semaphore_list_t* wait,
    const kiln_hal_semaphore_list_t* signal, uint32_t command_buffer_count,
    kiln_hal_command_buffer_t* const* command_buffers,
    const kiln_hal_binding_table_t* binding_tables) {
  return queueExecute(__func__, device, affinity, wait, signal,
                      command_buffer_count, command_buffers, binding_tables,
                      nullptr);
}

kiln_status_t kiln_hal_device_queue_execute_profiled(
    kiln_hal_device_t* device, kiln_hal_queue_affinity_t affinity,
    const kiln_hal_semaphore_list_t* wait,
    const kiln_hal_semaphore_list_t* signal, uint32_t command_buffer_count,
    kiln_hal_command_buffer_t* const* command_buffers,
    const kiln_hal_binding_table_t* binding_tables,
    kiln_hal_execution_profile_t* profile) {
  if (!profile) return nullArgument(__func__, "profile");
  if (profile->mode != KILN_HAL_PROFILE_COMMANDS &&
      profile->mode != KILN_HAL_PROFILE_SPAN)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: unknown profile mode %u", __func__,
                            profile->mode);
  return queueExecute(__func__, device, affinity, wait, signal,
                      command_buffer_count, command_buffers, binding_tables,
                      profile);
}

kiln_status_t kiln_hal_device_query_memory_stats(
    kiln_hal_device_t* device, kiln_hal_device_memory_stats_t* out_stats) {
  KILN_CHECK_ARG(device);
  KILN_CHECK_ARG(out_stats);
  *out_stats = kiln_hal_device_memory_stats_t{};
  const kiln_hal_device_vtable_t* vtable = KILN_VTABLE(device, device);
  if (!vtable->query_memory_stats)
    return kiln_make_status(KILN_STATUS_UNIMPLEMENTED,
                            "%s: the %s driver keeps no memory statistics",
                            __func__, device->driver_name);
  return vtable->query_memory_stats(device, out_stats);
}

kiln_status_t kiln_hal_device_trim(kiln_hal_device_t* device) {
  KILN_CHECK_ARG(device);
  const kiln_hal_device_vtable_t* vtable = KILN_VTABLE(device, device);
  if (!vtable->trim)
    return kiln_make_status(KILN_STATUS_UNIMPLEMENTED,
                            "%s: the %s driver has no memory cache to trim",
                            __func__, device->driver_name);
  return vtable->trim(device);
}

kiln_status_t kiln_hal_device_query_external_info(
    kiln_hal_device_t* device, kiln_hal_device_external_info_t* out_info) {
  KILN_CHECK_ARG(out_info);
  *out_info = kiln_hal_device_external_info_t{};
  KILN_CHECK_ARG(device);
  const kiln_hal_device_vtable_t* vtable = KILN_VTABLE(device, device);
  if (!vtable->query_external_info)
    return kiln_make_status(KILN_STATUS_UNIMPLEMENTED,
                            "%s: the %s driver shares no memory", __func__,
                            device->driver_name);
  return vtable->query_external_info(device, out_info);
}

kiln_status_t kiln_hal_device_wait_external_stream(kiln_hal_device_t* device,
                                                   uint64_t stream) {
  KILN_CHECK_ARG(device);
  const kiln_hal_device_vtable_t* vtable = KILN_VTABLE(device, device);
  if (!vtable->wait_external_stream)
    return kiln_make_status(KILN_STATUS_UNIMPLEMENTED,
                            "%s: the %s driver runs no platform streams",
                            __func__, device->driver_name);
  return vtable->wait_external_stream(device, stream);
}

kiln_status_t kiln_hal_device_queue_flush(kiln_hal_device_t* device,
                                          kiln_hal_queue_affinity_t affinity) {
  KILN_CHECK_ARG(device);
  return KILN_VTABLE(device, device)->queue_flush(device, affinity);
}

//===----------------------------------------------------------------------===//
// Allocator and buffers
//===----------------------------------------------------------------------===//

kiln_status_t kiln_hal_allocator_allocate_buffer(
    kiln_hal_allocator_t* allocator, const kiln_hal_buffer_params_t* params,
    kiln_device_size_t size, kiln_hal_buffer_t** out_buffer) {
  KILN_CHECK_ARG(out_buffer);
  *out_buffer = nullptr;
  KILN_CHECK_ARG(allocator);
  KILN_CHECK_ARG(params);
  if (size == 0)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: cannot allocate 0 bytes", __func__);
  if (params->min_alignment & (params->min_alignment - 1))
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: alignment %llu is not a power of two",
                            __func__,
                            (unsigned long long)params->min_alignment);
  return KILN_VTABLE(allocator, allocator)
      ->allocate_buffer(allocator, params, size, out_buffer);
}

kiln_status_t kiln_hal_allocator_import_buffer(
    kiln_hal_allocator_t* allocator, const kiln_hal_buffer_params_t* params,
    const kiln_hal_external_memory_t* memory,
    const kiln_hal_external_release_t* release,
    kiln_hal_buffer_t** out_buffer) {
  KILN_CHECK_ARG(out_buffer);
  *out_buffer = nullptr;
  KILN_CHECK_ARG(allocator);
  KILN_CHECK_ARG(params);
  KILN_CHECK_ARG(memory);
  KILN_CHECK_ARG(release);
  if (memory->type != KILN_HAL_EXTERNAL_MEMORY_HOST &&
      memory->type != KILN_HAL_EXTERNAL_MEMORY_CUDA &&
      memory->type != KILN_HAL_EXTERNAL_MEMORY_ROCM)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: unknown external memory type %d", __func__,
                            (int)memory->type);
  if (!memory->data || memory->byte_length == 0)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: external memory needs an address and a "
                            "length (got %p, %llu bytes)",
                            __func__, memory->data,
                            (unsigned long long)memory->byte_length);
  if (reinterpret_cast<uintptr_t>(memory->data) %
      KILN_HAL_EXTERNAL_MEMORY_ALIGNMENT)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: external memory at %p is not %u-byte aligned "
                            "(kernels read bindings with %u-byte accesses)",
                            __func__, memory->data,
                            KILN_HAL_EXTERNAL_MEMORY_ALIGNMENT,
                            KILN_HAL_EXTERNAL_MEMORY_ALIGNMENT);
  const kiln_hal_allocator_vtable_t* vtable = KILN_VTABLE(allocator, allocator);
  if (!vtable->import_buffer)
    return kiln_make_status(KILN_STATUS_UNIMPLEMENTED,
                            "%s: the device's driver cannot use external "
                            "memory",
                            __func__);
  return vtable->import_buffer(allocator, params, memory, release, out_buffer);
}

kiln_status_t kiln_hal_buffer_export_memory(
    kiln_hal_buffer_t* buffer, kiln_hal_external_memory_t* out_memory) {
  KILN_CHECK_ARG(out_memory);
  *out_memory = kiln_hal_external_memory_t{};
  KILN_CHECK_ARG(buffer);
  const kiln_hal_buffer_vtable_t* vtable = KILN_VTABLE(buffer, buffer);
  if (!vtable->export_memory)
    return kiln_make_status(KILN_STATUS_UNIMPLEMENTED,
                            "%s: the buffer's driver does not expose memory "
                            "addresses",
                            __func__);
  return vtable->export_memory(buffer, out_memory);
}

kiln_device_size_t kiln_hal_buffer_byte_length(const kiln_hal_buffer_t* buffer) {
  return buffer ? buffer->byte_length : 0;
}

kiln_hal_memory_type_t kiln_hal_buffer_memory_type(
    const kiln_hal_buffer_t* buffer) {
  return buffer ? buffer->memory_type : 0;
}

kiln_hal_buffer_usage_t kiln_hal_buffer_usage(const kiln_hal_buffer_t* buffer) {
  return buffer ? buffer->usage : 0;
}

kiln_status_t kiln_hal_buffer_map_range(kiln_hal_buffer_t* buffer,
                                        kiln_hal_memory_access_t access,
                                        kiln_device_size_t offset,
                                        kiln_device_size_t length,
                                        kiln_hal_buffer_mapping_t* out_mapping) {
  KILN_CHECK_ARG(out_mapping);
  std::memset(out_mapping, 0, sizeof(*out_mapping));
  KILN_CHECK_ARG(buffer);
  if (!(buffer->memory_type & KILN_HAL_MEMORY_TYPE_HOST_VISIBLE))
    return kiln_make_status(KILN_STATUS_FAILED_PRECONDITION,
                            "%s: the buffer is not host visible (allocate it "
                            "with KILN_HAL_MEMORY_TYPE_HOST_VISIBLE)",
                            __func__);
  if (access == 0)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: no memory access requested", __func__);
  KILN_RETURN_IF_ERROR(
      resolveRange(__func__, buffer->byte_length, offset, &length));
  void* contents = nullptr;
  KILN_RETURN_IF_ERROR(KILN_VTABLE(buffer, buffer)
                           ->map_range(buffer, access, offset, length,
                                       &contents));
  out_mapping->contents = contents;
  out_mapping->offset = offset;
  out_mapping->length = length;
  out_mapping->access = access;
  return nullptr;
}

kiln_status_t kiln_hal_buffer_unmap_range(kiln_hal_buffer_t* buffer,
                                          kiln_hal_buffer_mapping_t* mapping) {
  KILN_CHECK_ARG(buffer);
  KILN_CHECK_ARG(mapping);
  if (!mapping->contents) return nullptr;  // never mapped or already unmapped
  kiln_status_t status =
      KILN_VTABLE(buffer, buffer)
          ->unmap_range(buffer, mapping->offset, mapping->length,
                        mapping->contents);
  std::memset(mapping, 0, sizeof(*mapping));
  return status;
}

kiln_status_t kiln_hal_buffer_read(kiln_hal_buffer_t* buffer,
                                   kiln_device_size_t offset, void* target,
                                   kiln_device_size_t length) {
  if (length == 0) return nullptr;
  KILN_CHECK_ARG(target);
  kiln_hal_buffer_mapping_t mapping;
  KILN_RETURN_IF_ERROR(kiln_hal_buffer_map_range(
      buffer, KILN_HAL_MEMORY_ACCESS_READ, offset, length, &mapping));
  std::memcpy(target, mapping.contents, size_t(length));
  return kiln_hal_buffer_unmap_range(buffer, &mapping);
}

kiln_status_t kiln_hal_buffer_write(kiln_hal_buffer_t* buffer,
                                    kiln_device_size_t offset,
                                    const void* source,
                                    kiln_device_size_t length) {
  if (length == 0) return nullptr;
  KILN_CHECK_ARG(source);
  kiln_hal_buffer_mapping_t mapping;
  KILN_RETURN_IF_ERROR(kiln_hal_buffer_map_range(
      buffer, KILN_HAL_MEMORY_ACCESS_WRITE, offset, length, &mapping));
  std::memcpy(mapping.contents, source, size_t(length));
  return kiln_hal_buffer_unmap_range(buffer, &mapping);
}

//===----------------------------------------------------------------------===//
// Semaphores
//===----------------------------------------------------------------------===//

kiln_status_t kiln_hal_semaphore_create(kiln_hal_device_t* device,
                                        uint64_t initial_value,
                                        kiln_hal_semaphore_t** out_semaphore) {
  KILN_CHECK_ARG(out_semaphore);
  *out_semaphore = nullptr;
  KILN_CHECK_ARG(device);
  if (initial_value == KILN_HAL_SEMAPHORE_FAILURE_VALUE)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: the initial value is the failure value",
                            __func__);
  return KILN_VTABLE(device, device)
      ->create_semaphore(device, initial_value, out_semaphore);
}

kiln_status_t kiln_hal_semaphore_query(kiln_hal_semaphore_t* semaphore,
                                       uint64_t* out_value) {
  KILN_CHECK_ARG(out_value);
  *out_value = 0;
  KILN_CHECK_ARG(semaphore);
  return KILN_VTABLE(semaphore, semaphore)->query(semaphore, out_value);
}

kiln_status_t kiln_hal_semaphore_signal(kiln_hal_semaphore_t* semaphore,
                                        uint64_t value) {
  KILN_CHECK_ARG(semaphore);
  if (value == KILN_HAL_SEMAPHORE_FAILURE_VALUE)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: cannot signal the failure value; use "
                            "kiln_hal_semaphore_fail",
                            __func__);
  return KILN_VTABLE(semaphore, semaphore)->signal(semaphore, value);
}

void kiln_hal_semaphore_fail(kiln_hal_semaphore_t* semaphore,
                             kiln_status_t status) {
  if (!semaphore) {
    kiln_status_free(status);
    return;
  }
  if (!status)
    status = kiln_make_status(KILN_STATUS_INTERNAL,
                              "semaphore failed with an OK status");
  KILN_VTABLE(semaphore, semaphore)->fail(semaphore, status);
}

kiln_status_t kiln_hal_semaphore_wait(kiln_hal_semaphore_t* semaphore,
                                      uint64_t value,
                                      kiln_duration_t timeout_ns) {
  KILN_CHECK_ARG(semaphore);
  return KILN_VTABLE(semaphore, semaphore)
      ->wait(semaphore, value, kiln_deadline_from_timeout(timeout_ns));
}

kiln_status_t kiln_hal_semaphore_list_wait(
    const kiln_hal_semaphore_list_t* list, kiln_duration_t timeout_ns) {
  KILN_RETURN_IF_ERROR(checkSemaphoreList(__func__, "wait", &list));
  kiln_time_t deadline = kiln_deadline_from_timeout(timeout_ns);
  for (uint32_t i = 0; i < list->count; ++i) {
    kiln_hal_semaphore_t* semaphore = list->semaphores[i];
    KILN_RETURN_IF_ERROR(KILN_VTABLE(semaphore, semaphore)
                             ->wait(semaphore, list->payload_values[i],
                                    deadline));
  }
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Executables
//===----------------------------------------------------------------------===//

kiln_status_t kiln_hal_executable_cache_create(
    kiln_hal_device_t* device, kiln_hal_executable_cache_t** out_cache) {
  KILN_CHECK_ARG(out_cache);
  *out_cache = nullptr;
  KILN_CHECK_ARG(device);
  return KILN_VTABLE(device, device)->create_executable_cache(device, out_cache);
}

bool kiln_hal_executable_cache_can_prepare_format(
    kiln_hal_executable_cache_t* cache, const char* format) {
  if (!cache || !format) return false;
  return KILN_VTABLE(executable_cache, cache)->can_prepare_format(cache, format);
}

kiln_status_t kiln_hal_executable_cache_prepare_executable(
    kiln_hal_executable_cache_t* cache,
    const kiln_hal_executable_params_t* params,
    kiln_hal_executable_t** out_executable) {
  KILN_CHECK_ARG(out_executable);
  *out_executable = nullptr;
  KILN_CHECK_ARG(cache);
  KILN_CHECK_ARG(params);
  if (!params->format || !*params->format)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: no executable format given", __func__);
  if (!params->data || params->data_length == 0)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: executable binary of format '%s' is empty",
                            __func__, params->format);
  if (params->export_count > 0 && !params->exports)
    return nullArgument(__func__, "params->exports");
  for (uint32_t i = 0; i < params->export_count; ++i) {
    const kiln_hal_executable_export_t& exp = params->exports[i];
    if (!exp.name || !*exp.name)
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "%s: export %u has no name", __func__, i);
  }
  if (!KILN_VTABLE(executable_cache, cache)
           ->can_prepare_format(cache, params->format))
    return kiln_make_status(KILN_STATUS_INCOMPATIBLE,
                            "executable format '%s' cannot run on this "
                            "device; pick a variant compiled for it",
                            params->format);
  return KILN_VTABLE(executable_cache, cache)
      ->prepare_executable(cache, params, out_executable);
}

uint32_t kiln_hal_executable_export_count(
    const kiln_hal_executable_t* executable) {
  return executable ? executable->export_count : 0;
}

const kiln_hal_executable_export_t* kiln_hal_executable_export(
    const kiln_hal_executable_t* executable, uint32_t ordinal) {
  if (!executable || ordinal >= executable->export_count) return nullptr;
  return &executable->exports[ordinal];
}

//===----------------------------------------------------------------------===//
// Channels
//===----------------------------------------------------------------------===//

kiln_status_t kiln_hal_channel_id_create(kiln_hal_device_t* device,
                                         uint8_t* out_id, size_t capacity,
                                         size_t* out_length) {
  KILN_CHECK_ARG(out_length);
  *out_length = 0;
  KILN_CHECK_ARG(device);
  KILN_CHECK_ARG(out_id);
  if (capacity < KILN_HAL_CHANNEL_ID_MAX_LENGTH)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: capacity %zu is below "
                            "KILN_HAL_CHANNEL_ID_MAX_LENGTH (%u)",
                            __func__, capacity,
                            KILN_HAL_CHANNEL_ID_MAX_LENGTH);
  return KILN_VTABLE(device, device)->create_channel_id(device, out_id,
                                                        capacity, out_length);
}

kiln_status_t kiln_hal_channel_create(kiln_hal_device_t* device,
                                      const kiln_hal_channel_params_t* params,
                                      kiln_hal_channel_t** out_channel) {
  KILN_CHECK_ARG(out_channel);
  *out_channel = nullptr;
  KILN_CHECK_ARG(device);
  KILN_CHECK_ARG(params);
  if (params->count <= 0 || params->rank < 0 || params->rank >= params->count)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: rank %d is not in a group of %d ranks",
                            __func__, params->rank, params->count);
  if (params->id_length > 0 && !params->id)
    return nullArgument(__func__, "params->id");
  return KILN_VTABLE(device, device)->create_channel(device, params,
                                                     out_channel);
}

int32_t kiln_hal_channel_rank(const kiln_hal_channel_t* channel) {
  return channel ? channel->rank : -1;
}

int32_t kiln_hal_channel_count(const kiln_hal_channel_t* channel) {
  return channel ? channel->count : 0;
}

kiln_status_t kiln_hal_channel_split(kiln_hal_channel_t* channel,
                                     int32_t color, int32_t key,
                                     kiln_hal_channel_t** out_channel) {
  KILN_CHECK_ARG(out_channel);
  *out_channel = nullptr;
  KILN_CHECK_ARG(channel);
  return KILN_VTABLE(channel, channel)->split(channel, color, key, out_channel);
}

//===----------------------------------------------------------------------===//
// Symmetric windows
//===----------------------------------------------------------------------===//

kiln_status_t kiln_hal_window_create(kiln_hal_channel_t* channel,
                                     const kiln_hal_window_params_t* params,
                                     kiln_hal_window_t** out_window) {
  KILN_CHECK_ARG(out_window);
  *out_window = nullptr;
  KILN_CHECK_ARG(channel);
  KILN_CHECK_ARG(params);
  constexpr uint64_t kMaxSize = uint64_t(1) << 40;
  constexpr uint32_t kMaxSignals = uint32_t(1) << 20;
  if (params->size == 0 || params->size > kMaxSize)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: window size %llu is not in 1 .. 2^40 bytes",
                            __func__, (unsigned long long)params->size);
  if (params->signal_count > kMaxSignals)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: %u signal slots, more than 2^20", __func__,
                            params->signal_count);
  auto createWindow = KILN_VTABLE(channel, channel)->create_window;
  if (!createWindow)
    return kiln_make_status(KILN_STATUS_UNIMPLEMENTED,
                            "%s: this driver's channels have no symmetric "
                            "windows",
                            __func__);
  return createWindow(channel, params, out_window);
}

uint64_t kiln_hal_window_size(const kiln_hal_window_t* window) {
  return window ? window->size : 0;
}

uint32_t kiln_hal_window_signal_count(const kiln_hal_window_t* window) {
  return window ? window->signal_count : 0;
}

kiln_hal_buffer_t* kiln_hal_window_data(const kiln_hal_window_t* window) {
  return window ? window->data : nullptr;
}

kiln_hal_buffer_t* kiln_hal_window_signals(const kiln_hal_window_t* window) {
  return window ? window->signals : nullptr;
}

kiln_hal_buffer_t* kiln_hal_window_peer_table(const kiln_hal_window_t* window) {
  return window ? window->peer_table : nullptr;
}

//===----------------------------------------------------------------------===//
// Command buffers
//===----------------------------------------------------------------------===//

kiln_status_t kiln_hal_command_buffer_create(
    kiln_hal_device_t* device, kiln_hal_command_buffer_mode_t mode,
    uint32_t binding_capacity,
    kiln_hal_command_buffer_t** out_command_buffer) {
  KILN_CHECK_ARG(out_command_buffer);
  *out_command_buffer = nullptr;
  KILN_CHECK_ARG(device);
  if (mode & ~KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: unknown mode bits 0x%x", __func__, mode);
  return KILN_VTABLE(device, device)
      ->create_command_buffer(device, mode, binding_capacity,
                              out_command_buffer);
}

kiln_hal_command_buffer_mode_t kiln_hal_command_buffer_mode(
    const kiln_hal_command_buffer_t* command_buffer) {
  return command_buffer ? command_buffer->mode : 0;
}

uint32_t kiln_hal_command_buffer_binding_capacity(
    const kiln_hal_command_buffer_t* command_buffer) {
  return command_buffer ? command_buffer->binding_capacity : 0;
}

kiln_status_t kiln_hal_command_buffer_begin(
    kiln_hal_command_buffer_t* command_buffer) {
  KILN_CHECK_ARG(command_buffer);
  if (command_buffer->state != KILN_HAL_COMMAND_BUFFER_STATE_INITIAL)
    return kiln_make_status(KILN_STATUS_FAILED_PRECONDITION,
                            "%s: the command buffer was already begun (a "
                            "command buffer is recorded once)",
                            __func__);
  KILN_RETURN_IF_ERROR(
      KILN_VTABLE(command_buffer, command_buffer)->begin(command_buffer));
  __atomic_store_n(&command_buffer->state,
                   uint32_t(KILN_HAL_COMMAND_BUFFER_STATE_RECORDING),
                   __ATOMIC_RELEASE);
  return nullptr;
}

kiln_status_t kiln_hal_command_buffer_end(
    kiln_hal_command_buffer_t* command_buffer) {
  KILN_CHECK_ARG(command_buffer);
  KILN_RETURN_IF_ERROR(checkRecording(command_buffer, __func__));
  KILN_RETURN_IF_ERROR(
      KILN_VTABLE(command_buffer, command_buffer)->end(command_buffer));
  __atomic_store_n(&command_buffer->state,
                   uint32_t(KILN_HAL_COMMAND_BUFFER_STATE_EXECUTABLE),
                   __ATOMIC_RELEASE);
  return nullptr;
}

kiln_status_t kiln_hal_command_buffer_execution_barrier(
    kiln_hal_command_buffer_t* command_buffer) {
  KILN_CHECK_ARG(command_buffer);
  KILN_RETURN_IF_ERROR(checkRecording(command_buffer, __func__));
  return KILN_VTABLE(command_buffer, command_buffer)
      ->execution_barrier(command_buffer);
}

kiln_status_t kiln_hal_command_buffer_fill_buffer(
    kiln_hal_command_buffer_t* command_buffer, kiln_hal_buffer_ref_t target,
    const void* pattern, size_t pattern_length) {
  KILN_CHECK_ARG(command_buffer);
  KILN_CHECK_ARG(pattern);
  KILN_RETURN_IF_ERROR(checkRecording(command_buffer, __func__));
  if (pattern_length != 1 && pattern_length != 2 && pattern_length != 4 &&
      pattern_length != 8)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: pattern length %zu is not 1, 2, 4 or 8",
                            __func__, pattern_length);
  KILN_RETURN_IF_ERROR(resolveRef(command_buffer, "fill target", &target));
  if (target.offset % pattern_length != 0 ||
      (target.length != KILN_HAL_WHOLE_BUFFER &&
       target.length % pattern_length != 0))
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: offset %llu and length %llu must be "
                            "multiples of the %zu-byte pattern",
                            __func__, (unsigned long long)target.offset,
                            (unsigned long long)target.length, pattern_length);
  return KILN_VTABLE(command_buffer, command_buffer)
      ->fill_buffer(command_buffer, target, pattern, pattern_length);
}

kiln_status_t kiln_hal_command_buffer_update_buffer(
    kiln_hal_command_buffer_t* command_buffer, const void* source,
    size_t source_length, kiln_hal_buffer_ref_t target) {
  KILN_CHECK_ARG(command_buffer);
  KILN_RETURN_IF_ERROR(checkRecording(command_buffer, __func__));
  if (source_length > 0 && !source) return nullArgument(__func__, "source");
  if (!target.buffer && target.length == KILN_HAL_WHOLE_BUFFER)
    target.length = source_length;
  KILN_RETURN_IF_ERROR(resolveRef(command_buffer, "update target", &target));
  if (target.length != source_length)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: %zu source bytes for a %llu-byte target",
                            __func__, source_length,
                            (unsigned long long)target.length);
  return KILN_VTABLE(command_buffer, command_buffer)
      ->update_buffer(command_buffer, source, source_length, target);
}

kiln_status_t kiln_hal_command_buffer_copy_buffer(
    kiln_hal_command_buffer_t* command_buffer, kiln_hal_buffer_ref_t source,
    kiln_hal_buffer_ref_t target) {
  KILN_CHECK_ARG(command_buffer);
  KILN_RETURN_IF_ERROR(checkRecording(command_buffer, __func__));
  KILN_RETURN_IF_ERROR(resolveRef(command_buffer, "copy source", &source));
  KILN_RETURN_IF_ERROR(resolveRef(command_buffer, "copy target", &target));
  // A slot ref with an open length takes the other side's known length.
  if (source.length == KILN_HAL_WHOLE_BUFFER) source.length = target.length;
  if (target.length == KILN_HAL_WHOLE_BUFFER) target.length = source.length;
  if (source.length != target.length)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: source length %llu != target length %llu",
                            __func__, (unsigned long long)source.length,
                            (unsigned long long)target.length);
  if (source.buffer && source.buffer == target.buffer &&
      source.length != KILN_HAL_WHOLE_BUFFER &&
      source.offset < target.offset + target.length &&
      target.offset < source.offset + source.length)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: source and target ranges overlap", __func__);
  return KILN_VTABLE(command_buffer, command_buffer)
      ->copy_buffer(command_buffer, source, target);
}

kiln_status_t kiln_hal_command_buffer_dispatch(
    kiln_hal_command_buffer_t* command_buffer,
    kiln_hal_executable_t* executable, uint32_t export_ordinal,
    const uint32_t workgroup_count[3], uint32_t push_constant_count,
    const uint32_t* push_constants, uint32_t binding_count,
    const kiln_hal_buffer_ref_t* bindings) {
  KILN_CHECK_ARG(command_buffer);
  KILN_CHECK_ARG(executable);
  KILN_RETURN_IF_ERROR(checkRecording(command_buffer, __func__));
  if (export_ordinal >= executable->export_count)
    return kiln_make_status(KILN_STATUS_OUT_OF_RANGE,
                            "%s: export ordinal %u out of range (the "
                            "executable has %u exports)",
                            __func__, export_ordinal,
                            executable->export_count);
  const kiln_hal_executable_export_t& exp = executable->exports[export_ordinal];
  if (binding_count != exp.binding_count)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: export '%s' takes %u bindings, %u given",
                            __func__, exp.name, exp.binding_count,
                            binding_count);
  if (push_constant_count != exp.push_constant_count)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: export '%s' takes %u push constants, %u "
                            "given",
                            __func__, exp.name, exp.push_constant_count,
                            push_constant_count);
  if (binding_count > 0 && !bindings) return nullArgument(__func__, "bindings");
  if (push_constant_count > 0 && !push_constants)
    return nullArgument(__func__, "push_constants");
  const uint32_t* counts = workgroup_count ? workgroup_count
                                           : exp.workgroup_count;
  // Grids are bounded so that x*y*z and per-workgroup indexing never
  // overflow 64 bits in any driver.
  const uint64_t kMaxWorkgroups = uint64_t(1) << 40;
  uint64_t planeCount = uint64_t(counts[0]) * counts[1];  // < 2^64
  if (planeCount > kMaxWorkgroups ||
      (counts[2] != 0 && planeCount > kMaxWorkgroups / counts[2]))
    return kiln_make_status(KILN_STATUS_OUT_OF_RANGE,
                            "%s: workgroup grid %ux%ux%u of export '%s' is too "
                            "large",
                            __func__, counts[0], counts[1], counts[2],
                            exp.name);
  // Resolved copies of the bindings (a small dispatch has a few).
  kiln_hal_buffer_ref_t* resolved = nullptr;
  if (binding_count > 0) {
    resolved = static_cast<kiln_hal_buffer_ref_t*>(
        __builtin_alloca(sizeof(kiln_hal_buffer_ref_t) * binding_count));
    for (uint32_t i = 0; i < binding_count; ++i) {
      resolved[i] = bindings[i];
      kiln_status_t status = resolveRef(command_buffer, "dispatch binding",
                                        &resolved[i]);
      if (status)
        return kiln_status_annotate(status, "binding %u of export '%s'", i,
                                    exp.name);
    }
  }
  return KILN_VTABLE(command_buffer, command_buffer)
      ->dispatch(command_buffer, executable, export_ordinal, counts,
                 push_constant_count, push_constants, binding_count, resolved);
}

kiln_status_t kiln_hal_command_buffer_collective(
    kiln_hal_command_buffer_t* command_buffer, kiln_hal_channel_t* channel,
    const kiln_hal_collective_op_t* op, kiln_hal_buffer_ref_t send,
    kiln_hal_buffer_ref_t recv) {
  KILN_CHECK_ARG(command_buffer);
  KILN_CHECK_ARG(channel);
  KILN_CHECK_ARG(op);
  KILN_RETURN_IF_ERROR(checkRecording(command_buffer, __func__));
  if (op->kind < KILN_HAL_COLLECTIVE_ALL_REDUCE ||
      op->kind > KILN_HAL_COLLECTIVE_BROADCAST)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: unknown collective kind %d", __func__,
                            int(op->kind));
  if (op->reduction < KILN_HAL_REDUCTION_NONE ||
      op->reduction > KILN_HAL_REDUCTION_AVG)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: unknown reduction %d", __func__,
                            int(op->reduction));
  if (kiln_hal_element_type_size(op->element_type) == 0)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: invalid element type %d", __func__,
                            int(op->element_type));
  KILN_RETURN_IF_ERROR(resolveRef(command_buffer, "collective send", &send));
  KILN_RETURN_IF_ERROR(resolveRef(command_buffer, "collective recv", &recv));
  return KILN_VTABLE(command_buffer, command_buffer)
      ->collective(command_buffer, channel, op, send, recv);
}

}  // extern "C"
