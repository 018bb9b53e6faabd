/* embed_c: the smallest complete use of the Kiln runtime from C.
 *
 *   embed_c MODULE.vmfb [FUNCTION] [DEVICE]
 *
 * Loads the module on DEVICE (default "local"), calls FUNCTION (default: the
 * module's first function) with every input filled with 1, 2, 3, ... and
 * prints each output. Only kiln/runtime.h is used. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/runtime.h"

/* Prints a failing status and frees it; returns 1 for main. */
static int report(kiln_status_t status, const char* what) {
  fprintf(stderr, "error: %s: %s\n", what, kiln_status_message(status));
  kiln_status_free(status);
  return 1;
}

/* Fills element i of a |type| buffer with the value i + 1. */
static void fill_ramp(kiln_element_type_t type, void* data, uint64_t count) {
  for (uint64_t i = 0; i < count; ++i) {
    double v = (double)(i + 1);
    switch (type) {
      case KILN_ELEMENT_TYPE_F32: ((float*)data)[i] = (float)v; break;
      case KILN_ELEMENT_TYPE_F64: ((double*)data)[i] = v; break;
      case KILN_ELEMENT_TYPE_I32: ((int32_t*)data)[i] = (int32_t)v; break;
      case KILN_ELEMENT_TYPE_I64: ((int64_t*)data)[i] = (int64_t)v; break;
      default: memset(data, 0, count * kiln_element_type_size(type)); return;
    }
  }
}

static void print_element(kiln_element_type_t type, const void* data,
                          uint64_t i) {
  switch (type) {
    case KILN_ELEMENT_TYPE_F32: printf("%g", ((const float*)data)[i]); break;
    case KILN_ELEMENT_TYPE_F64: printf("%g", ((const double*)data)[i]); break;
    case KILN_ELEMENT_TYPE_I32: printf("%d", ((const int32_t*)data)[i]); break;
    case KILN_ELEMENT_TYPE_I64:
      printf("%lld", (long long)((const int64_t*)data)[i]);
      break;
    default: printf("?"); break;
  }
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODULE.vmfb [FUNCTION] [DEVICE]\n", argv[0]);
    return 2;
  }
  const char* device_uri = argc > 3 ? argv[3] : "local";
  int exit_code = 1;
  kiln_instance_t* instance = NULL;
  kiln_device_t* device = NULL;
  kiln_module_t* module = NULL;
  kiln_buffer_view_t* inputs[16] = {0};
  kiln_buffer_view_t* outputs[16] = {0};
  size_t input_count = 0, output_count = 0;
  kiln_status_t status;

  status = kiln_instance_create(NULL, &instance);
  if (status) return report(status, "creating the instance");
  status = kiln_device_create(instance, device_uri, &device);
  if (status) { exit_code = report(status, "creating the device"); goto done; }
  status = kiln_module_load_file(device, argv[1], &module);
  if (status) { exit_code = report(status, "loading the module"); goto done; }

  kiln_function_t* function = NULL;
  if (argc > 2) {
    status = kiln_module_lookup_function(module, argv[2], &function);
  } else {
    status = kiln_module_function_at(module, 0, &function);
  }
  if (status) { exit_code = report(status, "finding the function"); goto done; }

  char signature[256];
  kiln_function_format_signature(function, signature, sizeof(signature));
  printf("calling %s%s on %s\n", kiln_function_name(function), signature,
         kiln_device_uri(device));

  input_count = kiln_function_input_count(function);
  output_count = kiln_function_output_count(function);
  if (input_count > 16 || output_count > 16) {
    fprintf(stderr, "error: this sample handles at most 16 inputs/outputs\n");
    goto done;
  }
  for (size_t i = 0; i < input_count; ++i) {
    kiln_tensor_type_t type;
    status = kiln_function_input_type(function, i, &type);
    if (status) { exit_code = report(status, "reading the signature"); goto done; }
    uint64_t count = 1;
    for (size_t d = 0; d < type.rank; ++d) count *= (uint64_t)type.shape[d];
    size_t bytes = (size_t)count * kiln_element_type_size(type.element_type);
    void* data = malloc(bytes ? bytes : 1);
    if (!data) goto done;
    fill_ramp(type.element_type, data, count);
    status = kiln_buffer_view_create_from_host(device, type.element_type,
                                               type.rank, type.shape, data,
                                               bytes, &inputs[i]);
    free(data);
    if (status) { exit_code = report(status, "creating an input"); goto done; }
  }

  status = kiln_function_call(function, input_count, inputs, output_count,
                              outputs);
  if (status) { exit_code = report(status, "calling the function"); goto done; }

  for (size_t j = 0; j < output_count; ++j) {
    kiln_tensor_type_t type = kiln_buffer_view_type(outputs[j]);
    size_t bytes = (size_t)kiln_buffer_view_byte_length(outputs[j]);
    void* data = malloc(bytes ? bytes : 1);
    if (!data) goto done;
    status = kiln_buffer_view_read(outputs[j], data, bytes);
    if (status) {
      free(data);
      exit_code = report(status, "reading an output");
      goto done;
    }
    char type_text[128];
    kiln_tensor_type_format(&type, type_text, sizeof(type_text));
    printf("output %zu: %s =", j, type_text);
    uint64_t count = kiln_buffer_view_element_count(outputs[j]);
    for (uint64_t i = 0; i < count; ++i) {
      printf(" ");
      print_element(type.element_type, data, i);
    }
    printf("\n");
    free(data);
  }
  exit_code = 0;

done:
  for (size_t i = 0; i < 16; ++i) {
    kiln_buffer_view_release(inputs[i]);
    kiln_buffer_view_release(outputs[i]);
  }
  kiln_module_release(module);
  kiln_device_release(device);
  kiln_instance_release(instance);
  return exit_code;
}
