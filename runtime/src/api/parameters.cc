// Parameter sets of kiln/runtime.h (kiln_parameters_t): the C surface over
// kiln::module::ParameterSet.
#include <new>

#include "api/objects.h"

extern "C" {

kiln_status_t kiln_parameters_create(kiln_parameters_t** out_parameters) {
  if (!out_parameters) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_parameters_create: out_parameters is NULL");
  }
  *out_parameters = new (std::nothrow) kiln_parameters_t();
  if (!*out_parameters) {
    return kiln_make_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory for a parameter set");
  }
  return kiln_ok_status();
}

void kiln_parameters_retain(kiln_parameters_t* parameters) {
  if (parameters) parameters->ref_count.fetch_add(1, std::memory_order_relaxed);
}

void kiln_parameters_release(kiln_parameters_t* parameters) {
  if (parameters &&
      parameters->ref_count.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    delete parameters;
  }
}

kiln_status_t kiln_parameters_add_archive_file(kiln_parameters_t* parameters,
                                               const char* path) {
  if (!parameters || !path) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_parameters_add_archive_file: parameters and "
                            "path are required");
  }
  return parameters->set.AddArchiveFile(path);
}

kiln_status_t kiln_parameters_add_archive_memory(kiln_parameters_t* parameters,
                                                 const void* data, size_t size,
                                                 const char* name) {
  if (!parameters || (size && !data)) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_parameters_add_archive_memory: parameters "
                            "and data are required");
  }
  return parameters->set.AddArchiveMemory(data, size, name ? name : "<memory>");
}

kiln_status_t kiln_parameters_add_tensor(kiln_parameters_t* parameters,
                                         const char* name,
                                         kiln_element_type_t element_type,
                                         const int64_t* shape, size_t rank,
                                         const void* data, size_t byte_length) {
  if (!parameters || !name) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_parameters_add_tensor: parameters and name "
                            "are required");
  }
  // Out-of-range values become Invalid, which AddTensor refuses.
  auto type = element_type > KILN_ELEMENT_TYPE_INVALID &&
                      element_type <= KILN_ELEMENT_TYPE_F64
                  ? static_cast<kiln::schema::ElementType>(element_type)
                  : kiln::schema::ElementType::Invalid;
  return parameters->set.AddTensor(name, type, shape, rank, data, byte_length);
}

size_t kiln_parameters_count(const kiln_parameters_t* parameters) {
  return parameters ? parameters->set.size() : 0;
}

}  // extern "C"
