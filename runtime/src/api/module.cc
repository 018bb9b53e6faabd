// Module, function reflection and calls of kiln/runtime.h.
#include <algorithm>
#include <cstdio>
#include <new>
#include <string>
#include <vector>

#include "api/objects.h"

namespace {

using kiln::module::FunctionLayout;
using kiln::module::TensorLayout;

kiln_status_t FinishLoad(kiln_device_t* device,
                         std::shared_ptr<const kiln::module::ModuleImage> image,
                         const kiln_parameters_t* parameters,
                         kiln_module_t** out_module) {
  // Parameters first: a missing one is the caller's error, found before any
  // collective work (channel splits) starts.
  std::vector<kiln::module::RodataBytes> rodata;
  KILN_RETURN_IF_ERROR(kiln::module::ResolveRodata(
      *image, parameters ? &parameters->set : nullptr, &rodata));
  std::vector<kiln::module::FunctionChannels> channels;
  KILN_RETURN_IF_ERROR(
      kiln::api::ResolveModuleChannels(device, *image, &channels));
  std::unique_ptr<kiln::module::ModuleExecutor> executor;
  KILN_RETURN_IF_ERROR(kiln::module::ModuleExecutor::Create(
      image, device->device.get(), channels, rodata, &executor));
  kiln_module_t* module = new kiln_module_t();
  kiln_device_retain(device);
  module->device = device;
  module->image = std::move(image);
  module->executor = std::move(executor);
  module->functions.resize(module->image->functions().size());
  for (size_t i = 0; i < module->functions.size(); ++i) {
    module->functions[i].module = module;
    module->functions[i].index = i;
  }
  *out_module = module;
  return kiln_ok_status();
}

const FunctionLayout* Layout(const kiln_function_t* function) {
  return &function->module->image->functions()[function->index];
}

kiln_tensor_type_t ToTensorType(const TensorLayout& layout) {
  kiln_tensor_type_t type;
  type.element_type = static_cast<kiln_element_type_t>(layout.element_type);
  type.rank = layout.shape.size();
  type.shape = layout.shape.data();
  return type;
}

std::string TypeString(const TensorLayout& layout) {
  return kiln::api::FormatTensorType(
      static_cast<kiln_element_type_t>(layout.element_type),
      layout.shape.data(), layout.shape.size());
}

bool SameType(const TensorLayout& layout, const kiln_buffer_view_t* view) {
  return static_cast<int>(layout.element_type) ==
             static_cast<int>(view->element_type) &&
         layout.shape == view->shape;
}

// Checks the arguments of a call; the message names the function and the
// offending input.
kiln_status_t CheckCallArguments(kiln_function_t* function, size_t input_count,
                                 kiln_buffer_view_t* const* inputs,
                                 size_t output_count,
                                 kiln_buffer_view_t** out_outputs) {
  if (!function) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT, "function is NULL");
  }
  const FunctionLayout& layout = *Layout(function);
  const char* name = layout.name.c_str();
  if (input_count != layout.inputs.size()) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "function '%s' expects %zu inputs, got %zu", name,
                            layout.inputs.size(), input_count);
  }
  if (output_count != layout.outputs.size()) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "function '%s' has %zu outputs, but room for %zu "
                            "was given", name, layout.outputs.size(),
                            output_count);
  }
  if ((input_count && !inputs) || (output_count && !out_outputs)) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "function '%s': inputs/outputs array is NULL",
                            name);
  }
  kiln_hal_device_t* device = function->module->device->device.get();
  for (size_t i = 0; i < input_count; ++i) {
    const kiln_buffer_view_t* view = inputs[i];
    if (!view) {
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "function '%s' input %zu is NULL", name, i);
    }
    if (!SameType(layout.inputs[i], view)) {
      std::string expected = TypeString(layout.inputs[i]);
      std::string actual = kiln::api::FormatTensorType(
          view->element_type, view->shape.data(), view->shape.size());
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "function '%s' input %zu: expected %s, got %s",
                              name, i, expected.c_str(), actual.c_str());
    }
    if (view->device->device.get() != device) {
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "function '%s' input %zu lives on device '%s' "
                              "but the module is loaded on '%s'", name, i,
                              view->device->uri.c_str(),
                              function->module->device->uri.c_str());
    }
  }
  return kiln_ok_status();
}

}  // namespace

extern "C" {

kiln_status_t kiln_module_load_file_with_parameters(
    kiln_device_t* device, const char* path,
    const kiln_parameters_t* parameters, kiln_module_t** out_module) {
  if (!device || !path || !out_module) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_module_load_file: device, path and "
                            "out_module are required");
  }
  *out_module = nullptr;
  std::shared_ptr<const kiln::module::ModuleImage> image;
  KILN_RETURN_IF_ERROR(kiln::module::ModuleImage::CreateFromFile(path, &image));
  return FinishLoad(device, std::move(image), parameters, out_module);
}

kiln_status_t kiln_module_load_file(kiln_device_t* device, const char* path,
                                    kiln_module_t** out_module) {
  return kiln_module_load_file_with_parameters(device, path, nullptr,
                                               out_module);
}

kiln_status_t kiln_module_load_memory_with_parameters(
    kiln_device_t* device, const void* data, size_t size,
    const kiln_parameters_t* parameters, kiln_module_t** out_module) {
  if (!device || !out_module) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_module_load_memory: device and out_module "
                            "are required");
  }
  *out_module = nullptr;
  std::shared_ptr<const kiln::module::ModuleImage> image;
  KILN_RETURN_IF_ERROR(kiln::module::ModuleImage::CreateFromMemory(
      data, size, "<memory>", &image));
  return FinishLoad(device, std::move(image), parameters, out_module);
}

kiln_status_t kiln_module_load_memory(kiln_device_t* device, const void* data,
                                      size_t size, kiln_module_t** out_module) {
  return kiln_module_load_memory_with_parameters(device, data, size, nullptr,
                                                 out_module);
}

void kiln_module_retain(kiln_module_t* module) {
  if (module) module->ref_count.fetch_add(1, std::memory_order_relaxed);
}

void kiln_module_release(kiln_module_t* module) {
  if (module && module->ref_count.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    kiln_device_t* device = module->device;
    delete module;
    kiln_device_release(device);
  }
}

const char* kiln_module_name(const kiln_module_t* module) {
  if (!module || !module->image->module().name()) return "";
  return module->image->module().name()->c_str();
}

kiln_device_t* kiln_module_device(const kiln_module_t* module) {
  return module ? module->device : nullptr;
}

size_t kiln_module_function_count(const kiln_module_t* module) {
  return module ? module->functions.size() : 0;
}

kiln_status_t kiln_module_function_at(const kiln_module_t* module,
                                      size_t index,
                                      kiln_function_t** out_function) {
  if (!module || !out_function) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_module_function_at: module and out_function "
                            "are required");
  }
  *out_function = nullptr;
  if (index >= module->functions.size()) {
    return kiln_make_status(KILN_STATUS_OUT_OF_RANGE,
                            "function index %zu out of range (module has %zu)",
                            index, module->functions.size());
  }
  *out_function = const_cast<kiln_function_t*>(&module->functions[index]);
  return kiln_ok_status();
}

kiln_status_t kiln_module_lookup_function(const kiln_module_t* module,
                                          const char* name,
                                          kiln_function_t** out_function) {
  if (!module || !name || !out_function) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_module_lookup_function: module, name and "
                            "out_function are required");
  }
  *out_function = nullptr;
  int index = module->image->FindFunction(name);
  if (index < 0) {
    std::string names;
    for (const FunctionLayout& layout : module->image->functions()) {
      if (!names.empty()) names += ", ";
      names += layout.name;
    }
    return kiln_make_status(KILN_STATUS_NOT_FOUND,
                            "function '%s' not found in module '%s'; it has: "
                            "%s", name, module->image->source().c_str(),
                            names.empty() ? "(no functions)" : names.c_str());
  }
  *out_function = const_cast<kiln_function_t*>(&module->functions[index]);
  return kiln_ok_status();
}

const char* kiln_function_name(const kiln_function_t* function) {
  return function ? Layout(function)->name.c_str() : "";
}

size_t kiln_function_input_count(const kiln_function_t* function) {
  return function ? Layout(function)->inputs.size() : 0;
}

size_t kiln_function_output_count(const kiln_function_t* function) {
  return function ? Layout(function)->outputs.size() : 0;
}

int32_t kiln_function_world_size(const kiln_function_t* function) {
  if (!function) return 0;
  const auto* channels = Layout(function)->function->channels();
  if (!channels || channels->size() == 0) return 1;
  // The verifier checked that the grid is positive, at most 65536 ranks and
  // shared by the function's channels.
  int64_t size = 1;
  for (int64_t extent : *channels->Get(0)->grid_shape()) size *= extent;
  return int32_t(size);
}

static kiln_status_t GetType(const kiln_function_t* function, size_t index,
                             bool input, kiln_tensor_type_t* out_type) {
  if (!function || !out_type) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "function and out_type are required");
  }
  const FunctionLayout& layout = *Layout(function);
  const auto& list = input ? layout.inputs : layout.outputs;
  if (index >= list.size()) {
    return kiln_make_status(KILN_STATUS_OUT_OF_RANGE,
                            "function '%s' has %zu %s; index %zu is out of "
                            "range", layout.name.c_str(), list.size(),
                            input ? "inputs" : "outputs", index);
  }
  *out_type = ToTensorType(list[index]);
  return kiln_ok_status();
}

kiln_status_t kiln_function_input_type(const kiln_function_t* function,
                                       size_t index,
                                       kiln_tensor_type_t* out_type) {
  return GetType(function, index, /*input=*/true, out_type);
}

kiln_status_t kiln_function_output_type(const kiln_function_t* function,
                                        size_t index,
                                        kiln_tensor_type_t* out_type) {
  return GetType(function, index, /*input=*/false, out_type);
}

size_t kiln_function_format_signature(const kiln_function_t* function,
                                      char* buffer, size_t capacity) {
  std::string text;
  if (function) {
    const FunctionLayout& layout = *Layout(function);
    auto join = [](const std::vector<TensorLayout>& list) {
      std::string joined = "(";
      for (size_t i = 0; i < list.size(); ++i) {
        if (i) joined += ", ";
        joined += TypeString(list[i]);
      }
      return joined + ")";
    };
    text = join(layout.inputs) + " -> " + join(layout.outputs);
  }
  if (capacity > 0) std::snprintf(buffer, capacity, "%s", text.c_str());
  return text.size();
}

}  // extern "C"

namespace {

// Submits one call of |function| (arguments already checked) and returns,
// besides the outputs, the semaphore that reaches 1 when the call is done.
kiln_status_t SubmitCall(kiln_function_t* function, size_t input_count,
                         kiln_buffer_view_t* const* inputs,
                         kiln_fence_t* wait_fence, kiln_fence_t* signal_fence,
                         size_t output_count, kiln_buffer_view_t** out_outputs,
                         kiln::module::HalSemaphorePtr* out_done,
                         kiln_hal_execution_profile_t* profile = nullptr) {
  for (size_t j = 0; j < output_count; ++j) out_outputs[j] = nullptr;
  const FunctionLayout& layout = *Layout(function);
  kiln_module_t* module = function->module;
  kiln_device_t* device = module->device;

  // Waits: the caller's fence and the calls still producing the inputs.
  std::vector<kiln_hal_semaphore_t*> wait_semaphores;
  std::vector<uint64_t> wait_values;
  if (wait_fence) {
    wait_semaphores.push_back(wait_fence->semaphore.get());
    wait_values.push_back(wait_fence->value);
  }
  std::vector<kiln_hal_binding_t> bindings(input_count);
  for (size_t i = 0; i < input_count; ++i) {
    const kiln_buffer_view_t* view = inputs[i];
    bindings[i] = {view->buffer.get(), 0, view->byte_length};
    if (view->ready_semaphore) {
      wait_semaphores.push_back(view->ready_semaphore.get());
      wait_values.push_back(view->ready_value);
    }
  }

  // Signals: this call's own completion semaphore (outputs wait on it when
  // read) and the caller's fence.
  kiln_hal_semaphore_t* done = nullptr;
  KILN_RETURN_IF_ERROR(kiln_hal_semaphore_create(device->device.get(), 0, &done));
  kiln::module::HalSemaphorePtr done_ptr(done);
  std::vector<kiln_hal_semaphore_t*> signal_semaphores = {done};
  std::vector<uint64_t> signal_values = {1};
  if (signal_fence) {
    signal_semaphores.push_back(signal_fence->semaphore.get());
    signal_values.push_back(signal_fence->value);
  }
  kiln_hal_semaphore_list_t wait = {
      static_cast<uint32_t>(wait_semaphores.size()), wait_semaphores.data(),
      wait_values.data()};
  kiln_hal_semaphore_list_t signal = {
      static_cast<uint32_t>(signal_semaphores.size()), signal_semaphores.data(),
      signal_values.data()};

  std::vector<kiln_hal_buffer_t*> buffers(output_count, nullptr);
  kiln_status_t status = module->executor->Submit(
      function->index, bindings.data(), wait, signal, buffers.data(), profile);
  if (!kiln_status_is_ok(status)) {
    // Whoever waits on the caller's fence must learn that nothing will run.
    if (signal_fence) {
      kiln_hal_semaphore_fail(signal_fence->semaphore.get(),
                              kiln_status_clone(status));
    }
    return status;
  }
  for (size_t j = 0; j < output_count; ++j) {
    const TensorLayout& type = layout.outputs[j];
    kiln_buffer_view_t* view = kiln::api::WrapBuffer(
        device, buffers[j], static_cast<kiln_element_type_t>(type.element_type),
        type.shape.data(), type.shape.size(), type.element_count,
        type.byte_size);
    kiln_hal_semaphore_retain(done);
    view->ready_semaphore.reset(done);
    view->ready_value = 1;
    out_outputs[j] = view;
  }
  *out_done = std::move(done_ptr);
  return kiln_ok_status();
}

}  // namespace

extern "C" {

kiln_status_t kiln_function_call_async(kiln_function_t* function,
                                       size_t input_count,
                                       kiln_buffer_view_t* const* inputs,
                                       kiln_fence_t* wait_fence,
                                       kiln_fence_t* signal_fence,
                                       size_t output_count,
                                       kiln_buffer_view_t** out_outputs) {
  KILN_RETURN_IF_ERROR(CheckCallArguments(function, input_count, inputs,
                                          output_count, out_outputs));
  kiln::module::HalSemaphorePtr done;
  return SubmitCall(function, input_count, inputs, wait_fence, signal_fence,
                    output_count, out_outputs, &done);
}

}  // extern "C"

namespace {

// A synchronous call, profiled when |profile| is non-null.
kiln_status_t CallAndWait(kiln_function_t* function, size_t input_count,
                          kiln_buffer_view_t* const* inputs,
                          size_t output_count, kiln_buffer_view_t** out_outputs,
                          kiln_hal_execution_profile_t* profile) {
  kiln::module::HalSemaphorePtr done;
  KILN_RETURN_IF_ERROR(SubmitCall(function, input_count, inputs, nullptr,
                                  nullptr, output_count, out_outputs, &done,
                                  profile));
  kiln_status_t status =
      kiln_hal_semaphore_wait(done.get(), 1, KILN_DURATION_INFINITE);
  if (!kiln_status_is_ok(status)) {
    for (size_t j = 0; j < output_count; ++j) {
      kiln_buffer_view_release(out_outputs[j]);
      out_outputs[j] = nullptr;
    }
    return kiln_status_annotate(status, "while calling function '%s'",
                                kiln_function_name(function));
  }
  return kiln_ok_status();
}

const char* CommandKindName(kiln_hal_command_kind_t kind) {
  switch (kind) {
    case KILN_HAL_COMMAND_KIND_FILL: return "fill";
    case KILN_HAL_COMMAND_KIND_UPDATE: return "update";
    case KILN_HAL_COMMAND_KIND_COPY: return "copy";
    case KILN_HAL_COMMAND_KIND_DISPATCH: return "dispatch";
    case KILN_HAL_COMMAND_KIND_COLLECTIVE: return "collective";
  }
  return "?";
}

}  // namespace

extern "C" {

kiln_status_t kiln_function_call(kiln_function_t* function, size_t input_count,
                                 kiln_buffer_view_t* const* inputs,
                                 size_t output_count,
                                 kiln_buffer_view_t** out_outputs) {
  KILN_RETURN_IF_ERROR(CheckCallArguments(function, input_count, inputs,
                                          output_count, out_outputs));
  return CallAndWait(function, input_count, inputs, output_count, out_outputs,
                     nullptr);
}

kiln_status_t kiln_function_profile(kiln_function_t* function,
                                    size_t input_count,
                                    kiln_buffer_view_t* const* inputs,
                                    size_t output_count,
                                    kiln_buffer_view_t** out_outputs,
                                    kiln_call_profile_t** out_profile) {
  if (!out_profile)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_function_profile: out_profile is NULL");
  *out_profile = nullptr;
  KILN_RETURN_IF_ERROR(CheckCallArguments(function, input_count, inputs,
                                          output_count, out_outputs));
  const kiln::module::ModuleExecutor& executor = *function->module->executor;
  std::vector<kiln_hal_command_timing_t> timings(
      executor.CommandCount(function->index));
  kiln_hal_execution_profile_t hal_profile = {};
  hal_profile.timing_capacity = static_cast<uint32_t>(timings.size());
  hal_profile.timings = timings.data();
  kiln_time_t start = kiln_time_now();
  KILN_RETURN_IF_ERROR(CallAndWait(function, input_count, inputs,
                                   output_count, out_outputs, &hal_profile));
  kiln_time_t end = kiln_time_now();

  size_t count = std::min<size_t>(hal_profile.timing_count, timings.size());
  auto* profile = new (std::nothrow) kiln_call_profile_t();
  auto* commands = new (std::nothrow) kiln_command_profile_t[count ? count : 1];
  if (!profile || !commands) {
    delete profile;
    delete[] commands;
    for (size_t j = 0; j < output_count; ++j) {
      kiln_buffer_view_release(out_outputs[j]);
      out_outputs[j] = nullptr;
    }
    return kiln_make_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory for a call profile");
  }
  for (size_t i = 0; i < count; ++i) {
    const kiln_hal_command_timing_t& timing = timings[i];
    commands[i] = {timing.command, CommandKindName(timing.kind),
                   executor.CommandName(function->index, timing.command),
                   timing.device_ns};
  }
  profile->host_ns = static_cast<uint64_t>(end - start);
  profile->device_ns = hal_profile.span_ns;
  profile->command_count = count;
  profile->commands = commands;
  *out_profile = profile;
  return kiln_ok_status();
}

kiln_status_t kiln_function_call_timed(kiln_function_t* function,
                                       size_t input_count,
                                       kiln_buffer_view_t* const* inputs,
                                       size_t output_count,
                                       kiln_buffer_view_t** out_outputs,
                                       kiln_call_timing_t* out_timing) {
  if (!out_timing)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_function_call_timed: out_timing is NULL");
  *out_timing = kiln_call_timing_t{};
  KILN_RETURN_IF_ERROR(CheckCallArguments(function, input_count, inputs,
                                          output_count, out_outputs));
  kiln_hal_execution_profile_t hal_profile = {};
  hal_profile.mode = KILN_HAL_PROFILE_SPAN;
  kiln_time_t start = kiln_time_now();
  KILN_RETURN_IF_ERROR(CallAndWait(function, input_count, inputs,
                                   output_count, out_outputs, &hal_profile));
  kiln_time_t end = kiln_time_now();
  out_timing->host_ns = static_cast<uint64_t>(end - start);
  out_timing->device_ns = hal_profile.span_ns;
  return kiln_ok_status();
}

void kiln_call_profile_free(kiln_call_profile_t* profile) {
  if (!profile) return;
  delete[] profile->commands;
  delete profile;
}

}  // extern "C"
