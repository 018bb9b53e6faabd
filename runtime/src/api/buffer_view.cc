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
  size_t element_size = kiln_element_type_size(element_type);
  if (element_size == 0) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "invalid element type %d", (int)element_type);
  }
  if (rank > KILN_MAX_RANK || (rank > 0 && !shape)) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "invalid shape: rank %zu (at most %d) with %s "
                            "dimensions", rank, KILN_MAX_RANK,
                            shape ? "given" : "NULL");
  }
  uint64_t element_count = 0, byte_length = 0;
  if (!kiln::module::ComputeTensorByteSize(element_size, shape, rank,
                                           &element_count, &byte_length)) {
    std::string type = kiln::api::FormatTensorType(element_type, shape, rank);
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "invalid tensor type %s: negative dimension or "
                            "too large", type.c_str());
  }
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

}  // extern "C"
