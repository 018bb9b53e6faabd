// libFuzzer harness: a .vmfb from untrusted bytes through the module loader
// (verifier and layouts), then through the public API on the `local` device:
// load from memory, list the functions with their signatures and call each
// one with zero inputs, reading its outputs back.
//
// An input is a module's contents: the harness appends the integrity trailer
// (schemas/module_trailer.h) before loading, so that mutations reach the
// verifier instead of stopping at the checksum. The input is also loaded as
// it is, which exercises the trailer check on arbitrary bytes.
//
// A module carries native code, which is trusted input (docs/embedding.md):
// before the public load, every host variant's binary is replaced by the
// runtime tests' kernel library (tests/runtime/module/test_kernels.c, whose
// kernels check their bindings' lengths), and workgroup counts are clamped
// so that one input cannot run for minutes. Everything else (signatures,
// command programs, buffer refs, rodata, channels) stays as fuzzed.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/runtime.h"
#include "kiln/schemas/module_generated.h"
#include "module/module_image.h"
#include "test_modules.h"

namespace {

// Per call: what is allocated for the inputs, outputs and transient arena of
// one function; bigger functions are listed but not called (libFuzzer treats
// a large allocation as a failure, and the runtime's answer to those is
// RESOURCE_EXHAUSTED anyway).
constexpr uint64_t kMaxCallBytes = uint64_t{16} << 20;
constexpr uint32_t kMaxWorkgroupsPerDimension = 16;

struct Fixture {
  kiln_instance_t* instance = nullptr;
  kiln_device_t* device = nullptr;
  std::vector<uint8_t> kernels;  // the trusted host kernel library
  // Load-time parameter "bias" (2x3xf32) of the parameter seed
  // (kiln_make_test_module --parameters), given to every load.
  kiln_parameters_t* parameters = nullptr;
};

Fixture& GetFixture() {
  static Fixture* fixture = [] {
    auto* f = new Fixture();
    kiln_instance_options_t options = {};
    options.ignore_plugin_environment = true;
    kiln_status_t status = kiln_instance_create(&options, &f->instance);
    if (kiln_status_is_ok(status)) {
      status = kiln_device_create(f->instance, "local", &f->device);
    }
    if (kiln_status_is_ok(status)) {
      status = kiln_parameters_create(&f->parameters);
    }
    if (kiln_status_is_ok(status)) {
      const float bias[6] = {1, 2, 3, 4, 5, 6};
      const int64_t shape[2] = {2, 3};
      status = kiln_parameters_add_tensor(f->parameters, "bias",
                                          KILN_ELEMENT_TYPE_F32, shape, 2,
                                          bias, sizeof(bias));
    }
    if (!kiln_status_is_ok(status)) {
      fprintf(stderr, "module_fuzzer: no local device: %s\n",
              kiln_status_message(status));
      abort();
    }
    f->kernels = kiln::testing::TestKernelBinary();
    return f;
  }();
  return *fixture;
}

// Swaps in the trusted kernels and clamps workgroup counts; returns the
// re-serialized module.
std::vector<uint8_t> WithTrustedNativeCode(const kiln::schema::Module& module,
                                           const std::vector<uint8_t>& kernels) {
  std::unique_ptr<kiln::schema::ModuleT> tree(module.UnPack());
  for (auto& executable : tree->executables) {
    for (auto& variant : executable->variants) {
      if (variant->format == "elf-so-v1") variant->binary = kernels;
      for (auto& exported : variant->exports) {
        for (uint32_t& count : exported->workgroup_count) {
          if (count > kMaxWorkgroupsPerDimension) {
            count = kMaxWorkgroupsPerDimension;
          }
        }
      }
    }
  }
  return kiln::testing::Serialize(*tree);
}

void Free(kiln_status_t status) { kiln_status_free(status); }

uint64_t TypeBytes(const kiln_tensor_type_t& type) {
  uint64_t bytes = kiln_element_type_size(type.element_type);
  for (size_t d = 0; d < type.rank; ++d) {
    uint64_t dim = static_cast<uint64_t>(type.shape[d]);
    if (dim != 0 && bytes > kMaxCallBytes / dim) return kMaxCallBytes + 1;
    bytes *= dim;
  }
  return bytes;
}

// Calls |function| with zero inputs and reads its outputs.
void CallWithZeros(kiln_device_t* device, kiln_function_t* function,
                   uint64_t transient_size) {
  const size_t input_count = kiln_function_input_count(function);
  const size_t output_count = kiln_function_output_count(function);
  uint64_t total = transient_size;
  std::vector<kiln_tensor_type_t> inputs(input_count), outputs(output_count);
  for (size_t i = 0; i < input_count; ++i) {
    if (!kiln_status_is_ok(kiln_function_input_type(function, i, &inputs[i])))
      abort();  // the index is in range
    total += TypeBytes(inputs[i]);
  }
  for (size_t i = 0; i < output_count; ++i) {
    if (!kiln_status_is_ok(kiln_function_output_type(function, i, &outputs[i])))
      abort();
    total += TypeBytes(outputs[i]);
  }
  if (total > kMaxCallBytes) return;

  std::vector<kiln_buffer_view_t*> views;
  bool ready = true;
  for (const kiln_tensor_type_t& type : inputs) {
    std::vector<uint8_t> zeros(TypeBytes(type));
    kiln_buffer_view_t* view = nullptr;
    kiln_status_t status = kiln_buffer_view_create_from_host(
        device, type.element_type, type.rank, type.shape, zeros.data(),
        zeros.size(), &view);
    if (!kiln_status_is_ok(status)) {
      Free(status);
      ready = false;
      break;
    }
    views.push_back(view);
  }
  if (ready) {
    std::vector<kiln_buffer_view_t*> results(output_count, nullptr);
    kiln_status_t status = kiln_function_call(function, views.size(),
                                              views.data(), results.size(),
                                              results.data());
    Free(status);
    for (kiln_buffer_view_t* result : results) {
      if (!result) continue;
      std::vector<uint8_t> bytes(kiln_buffer_view_byte_length(result));
      Free(kiln_buffer_view_read(result, bytes.data(), bytes.size()));
      kiln_buffer_view_release(result);
    }
  }
  for (kiln_buffer_view_t* view : views) kiln_buffer_view_release(view);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Fixture& fixture = GetFixture();
  std::shared_ptr<const kiln::module::ModuleImage> image;
  Free(kiln::module::ModuleImage::CreateFromMemory(data, size, "<fuzz>",
                                                   &image));
  const std::vector<uint8_t> sealed =
      kiln::testing::Seal(std::vector<uint8_t>(data, data + size));
  kiln_status_t status = kiln::module::ModuleImage::CreateFromMemory(
      sealed.data(), sealed.size(), "<fuzz>", &image);
  if (!kiln_status_is_ok(status)) {
    Free(status);
    return 0;
  }

  std::vector<uint8_t> bytes =
      WithTrustedNativeCode(image->module(), fixture.kernels);
  kiln_module_t* module = nullptr;
  status = kiln_module_load_memory_with_parameters(
      fixture.device, bytes.data(), bytes.size(), fixture.parameters, &module);
  if (!kiln_status_is_ok(status)) {
    Free(status);
    return 0;
  }
  for (size_t i = 0; i < kiln_module_function_count(module); ++i) {
    kiln_function_t* function = nullptr;
    status = kiln_module_function_at(module, i, &function);
    if (!kiln_status_is_ok(status)) abort();  // the index is in range
    char signature[4096];
    kiln_function_format_signature(function, signature, sizeof(signature));
    kiln_function_t* found = nullptr;
    status = kiln_module_lookup_function(module, kiln_function_name(function),
                                         &found);
    if (!kiln_status_is_ok(status) || !found) abort();  // names are unique
    const kiln::schema::Function* schema_function =
        image->functions()[i].function;
    CallWithZeros(fixture.device, function, schema_function->transient_size());
  }
  kiln_module_release(module);
  return 0;
}
