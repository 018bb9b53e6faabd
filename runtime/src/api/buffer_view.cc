// Buffer views of kiln/runtime.h.
#include <string>

#include "api/objects.h"
#include "module/buffer_transfer.h"
#include "module/module_verifier.h"

namespace kiln {
namespace api {

kiln_buffer_view_t* WrapBuffer(kiln_device_t* device, kiln_hal_buffer_t* buffer,
                               kiln_element_type_t element_type,
                               const int64_t* shape, size_t rank,
                               uint64_t element_count, uint64_t byte_length) {
  kiln_buffer_view_t* view = new kiln_buffer_view_t();
  kiln_device_retain(device);
  view->device = device;
  view->buffer.reset(buffer);
  view->element_type = element_type;
  if (rank) view->shape.assign(shape, shape + rank);
  view->element_count = element_count;
  view->byte_length = byte_length;
  return view;
}

kiln_status_t CheckTensorType(const char* what,
                              kiln_element_type_t element_type, size_t rank,
                              const int64_t* shape, uint64_t* element_count,
                              uint64_t* byte_length) {
  size_t element_size = kiln_element_type_size(element_type);
  if (element_size == 0) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: invalid element type %d", what,
                            (int)element_type);
  }
  if (rank > KILN_MAX_RANK || (rank > 0 && !shape)) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: invalid shape: rank %zu (at most %d) with %s "
                            "dimensions",
                            what, rank, KILN_MAX_RANK,
                            shape ? "given" : "NULL");
  }
  if (!kiln::module::ComputeTensorByteSize(element_size, shape, rank,
                                           element_count, byte_length)) {
    std::string type = FormatTensorType(element_type, shape, rank);
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "%s: invalid tensor type %s: negative dimension or "
                            "too large",
                            what, type.c_str());
  }
  return kiln_ok_status();
}

}  // namespace api
}  // namespace kiln

extern "C" {

kiln_status_t kiln_buffer_view_create_from_host(
    kiln_device_t* device, kiln_element_type_t element_type, size_t rank,
    const int64_t* shape, const void* data, size_t data_length,
    kiln_buffer_view_t** out_view) {
  if (!device || !out_view) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_buffer_view_create_from_host: device and "
                            "out_view are required");
  }
  *out_view = nullptr;
  uint64_t element_count = 0, byte_length = 0;
  KILN_RETURN_IF_ERROR(kiln::api::CheckTensorType(
      "kiln_buffer_view_create_from_host", element_type, rank, shape,
      &element_count, &byte_length));
  if (data_length != byte_length || (byte_length && !data)) {
    std::string type = kiln::api::FormatTensorType(element_type, shape, rank);
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "a %s tensor needs %llu bytes of data, got %zu%s",
                            type.c_str(), (unsigned long long)byte_length,
                            data_length, data ? "" : " (NULL)");
  }
  kiln_hal_buffer_t* buffer = nullptr;
  KILN_RETURN_IF_ERROR(kiln::module::AllocateTensorBuffer(
      device->device.get(), byte_length, 0, &buffer));
  kiln_status_t status = kiln::module::WriteBufferFromHost(
      device->device.get(), buffer, 0, data, byte_length);
  if (!kiln_status_is_ok(status)) {
    kiln_hal_buffer_release(buffer);
    return status;
  }
  *out_view = kiln::api::WrapBuffer(device, buffer, element_type, shape, rank,
                                    element_count, byte_length);
  return kiln_ok_status();
}

void kiln_buffer_view_retain(kiln_buffer_view_t* view) {
  if (view) view->ref_count.fetch_add(1, std::memory_order_relaxed);
}

void kiln_buffer_view_release(kiln_buffer_view_t* view) {
  if (view && view->ref_count.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    kiln_device_t* device = view->device;
    delete view;
    kiln_device_release(device);
  }
}

kiln_element_type_t kiln_buffer_view_element_type(
    const kiln_buffer_view_t* view) {
  return view ? view->element_type : KILN_ELEMENT_TYPE_INVALID;
}

size_t kiln_buffer_view_rank(const kiln_buffer_view_t* view) {
  return view ? view->shape.size() : 0;
}

const int64_t* kiln_buffer_view_shape(const kiln_buffer_view_t* view) {
  return view ? view->shape.data() : nullptr;
}

uint64_t kiln_buffer_view_element_count(const kiln_buffer_view_t* view) {
  return view ? view->element_count : 0;
}

uint64_t kiln_buffer_view_byte_length(const kiln_buffer_view_t* view) {
  return view ? view->byte_length : 0;
}

kiln_tensor_type_t kiln_buffer_view_type(const kiln_buffer_view_t* view) {
  kiln_tensor_type_t type = {KILN_ELEMENT_TYPE_INVALID, 0, nullptr};
  if (view) {
    type.element_type = view->element_type;
    type.rank = view->shape.size();
    type.shape = view->shape.data();
  }
  return type;
}

kiln_device_t* kiln_buffer_view_device(const kiln_buffer_view_t* view) {
  return view ? view->device : nullptr;
}

kiln_status_t kiln_buffer_view_read(const kiln_buffer_view_t* view, void* data,
                                    size_t data_length) {
  if (!view || (!data && data_length)) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_buffer_view_read: view and data are "
                            "required");
  }
  if (data_length != view->byte_length) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_buffer_view_read: the view holds %llu bytes "
                            "but the destination has %zu",
                            (unsigned long long)view->byte_length, data_length);
  }
  if (view->ready_semaphore) {
    KILN_RETURN_IF_ERROR(kiln_hal_semaphore_wait(
        view->ready_semaphore.get(), view->ready_value, KILN_DURATION_INFINITE));
  }
  return kiln::module::ReadBufferToHost(view->device->device.get(),
                                        view->buffer.get(), 0, data,
                                        data_length);
}

kiln_status_t kiln_buffer_view_import(kiln_device_t* device,
                                      kiln_element_type_t element_type,
                                      size_t rank, const int64_t* shape,
                                      const kiln_external_memory_t* memory,
                                      kiln_buffer_view_t** out_view) {
  if (!device || !memory || !out_view) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_buffer_view_import: device, memory and "
                            "out_view are required");
  }
  *out_view = nullptr;
  uint64_t element_count = 0, byte_length = 0;
  KILN_RETURN_IF_ERROR(
      kiln::api::CheckTensorType("kiln_buffer_view_import", element_type, rank,
                                 shape, &element_count, &byte_length));
  if (memory->byte_length != byte_length) {
    std::string type = kiln::api::FormatTensorType(element_type, shape, rank);
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_buffer_view_import: a %s tensor has %llu "
                            "bytes, the external memory %llu",
                            type.c_str(), (unsigned long long)byte_length,
                            (unsigned long long)memory->byte_length);
  }
  kiln_hal_buffer_t* buffer = nullptr;
  if (byte_length == 0) {
    // Nothing to share: an empty tensor gets a buffer of its own, and the
    // owner's memory is not needed past this call.
    KILN_RETURN_IF_ERROR(kiln::module::AllocateTensorBuffer(
        device->device.get(), 0, 0, &buffer));
    if (memory->release) memory->release(memory->user_data);
  } else {
    kiln_hal_buffer_params_t params = {};
    params.memory_type = KILN_HAL_MEMORY_TYPE_DEVICE_LOCAL;
    params.usage = KILN_HAL_BUFFER_USAGE_DEFAULT;
    kiln_hal_external_memory_t external = {
        kiln::api::ToHalExternalMemoryType(memory->type), memory->data,
        memory->byte_length};
    kiln_hal_external_release_t release = {memory->release, memory->user_data};
    kiln_status_t status = kiln_hal_allocator_import_buffer(
        kiln_hal_device_allocator(device->device.get()), &params, &external,
        &release, &buffer);
    if (!kiln_status_is_ok(status))
      return kiln_status_annotate(status, "importing memory into '%s'",
                                  device->uri.c_str());
  }
  *out_view = kiln::api::WrapBuffer(device, buffer, element_type, shape, rank,
                                    element_count, byte_length);
  return kiln_ok_status();
}

kiln_status_t kiln_buffer_view_export(kiln_buffer_view_t* view,
                                      kiln_external_memory_t* out_memory) {
  if (!view || !out_memory) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_buffer_view_export: view and out_memory are "
                            "required");
  }
  *out_memory = kiln_external_memory_t{};
  if (view->ready_semaphore) {
    KILN_RETURN_IF_ERROR(kiln_hal_semaphore_wait(view->ready_semaphore.get(),
                                                 view->ready_value,
                                                 KILN_DURATION_INFINITE));
  }
  kiln_hal_external_memory_t memory = {};
  kiln_status_t status =
      kiln_hal_buffer_export_memory(view->buffer.get(), &memory);
  if (!kiln_status_is_ok(status))
    return kiln_status_annotate(status, "exporting a view of '%s'",
                                view->device->uri.c_str());
  out_memory->type = kiln::api::ToExternalMemoryType(memory.type);
  out_memory->data = memory.data;
  out_memory->byte_length = view->byte_length;
  return kiln_ok_status();
}

}  // extern "C"
