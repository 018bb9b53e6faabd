// kiln-run: loads a .vmfb module on a device, calls one function with inputs
// given on the command line (IREE syntax) and prints, saves or checks the
// outputs. See --help.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kiln/runtime.h"
#include "tooling/flags.h"
#include "tooling/compare.h"
#include "tooling/host_tensor.h"
#include "tooling/npy.h"
#include "tooling/values.h"

namespace {

using kiln::tooling::HostTensor;

const char kUsage[] =
    "usage: kiln-run MODULE.vmfb --function=NAME [options]\n"
    "\n"
    "Calls function NAME of a compiled Kiln module and prints its results.\n"
    "\n"
    "options:\n"
    "  --function=NAME         function to call (may be omitted if the module\n"
    "                          has exactly one)\n"
    "  --device=URI            device to run on: local, local://N, or a plugin\n"
    "                          driver's URI (default: local)\n"
    "  --plugin=PATH           load a HAL driver plugin (repeatable; also\n"
    "                          $KILN_HAL_DRIVER_PLUGINS)\n"
    "  --input=VALUE           one per function input, in order. VALUE is\n"
    "                          SHAPExTYPE=VALUES (2x3xf32=1,2,3,4,5,6), a splat\n"
    "                          (4xf32=1.5), a scalar (f32=2) or @file.npy\n"
    "  --output=@FILE.npy      save output i (one flag per output, in order;\n"
    "                          '-' prints that output instead)\n"
    "  --expected-output=VALUE check output i against VALUE (one per output,\n"
    "                          in order, same syntax as --input); exits 1 on\n"
    "                          a mismatch\n"
    "  --atol=X, --rtol=X      floating-point tolerances for --expected-output:\n"
    "                          elements match when\n"
    "                          |actual-expected| <= atol + rtol*|expected|\n"
    "                          (defaults: f32 1e-5, f64 1e-9, f16 1e-3/1e-2,\n"
    "                          bf16 1e-2/2e-2); integers are always exact\n"
    "  --print-max-elements=N  elide printed tensors after N elements (1024)\n"
    "  --list-functions        list the module's functions and exit\n"
    "  --list-devices          list the available device URIs (after loading\n"
    "                          plugins) and exit; no module needed\n"
    "  --help                  show this help\n";

int Fail(const char* format, const std::string& a = std::string(),
         const std::string& b = std::string()) {
  std::fprintf(stderr, "error: ");
  std::fprintf(stderr, format, a.c_str(), b.c_str());
  std::fprintf(stderr, "\n");
  return 1;
}

int FailStatus(kiln_status_t status, const std::string& context) {
  std::string message = kiln_status_message(status);
  kiln_status_free(status);
  if (context.empty()) return Fail("%s", message);
  return Fail("%s: %s", context, message);
}

bool ParseDouble(const std::string& text, double* value) {
  char* end = nullptr;
  *value = std::strtod(text.c_str(), &end);
  return !text.empty() && end && *end == '\0' && *value >= 0;
}

struct Options {
  std::string module_path;
  std::string function;
  std::string device = "local";
  std::vector<std::string> plugins;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<std::string> expected;
  bool has_atol = false, has_rtol = false;
  double atol = 0, rtol = 0;
  uint64_t print_max_elements = 1024;
  bool list_functions = false;
  bool list_devices = false;
};

// Returns -1 to go on, or the exit code.
int ParseOptions(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value_of = [&](const char* flag, std::string* value) {
      return kiln::tooling::MatchFlagValue(argc, argv, &i, flag, value);
    };
    std::string value;
    if (arg == "--help" || arg == "-h") {
      std::printf("%s", kUsage);
      return 0;
    } else if (arg == "--list-functions") {
      options->list_functions = true;
    } else if (arg == "--list-devices") {
      options->list_devices = true;
    } else if (value_of("--function", &value)) {
      options->function = value;
    } else if (value_of("--device", &value)) {
      options->device = value;
    } else if (value_of("--plugin", &value)) {
      options->plugins.push_back(value);
    } else if (value_of("--input", &value)) {
      options->inputs.push_back(value);
    } else if (value_of("--output", &value)) {
      options->outputs.push_back(value);
    } else if (value_of("--expected-output", &value)) {
      options->expected.push_back(value);
    } else if (value_of("--atol", &value)) {
      if (!ParseDouble(value, &options->atol)) {
        return Fail("invalid --atol '%s' (expected a non-negative number)",
                    value);
      }
      options->has_atol = true;
    } else if (value_of("--rtol", &value)) {
      if (!ParseDouble(value, &options->rtol)) {
        return Fail("invalid --rtol '%s' (expected a non-negative number)",
                    value);
      }
      options->has_rtol = true;
    } else if (value_of("--print-max-elements", &value)) {
      double count = 0;
      if (!ParseDouble(value, &count)) {
        return Fail("invalid --print-max-elements '%s'", value);
      }
      options->print_max_elements = static_cast<uint64_t>(count);
    } else if (!arg.empty() && arg[0] == '-') {
      return Fail("unknown option '%s' (see --help)", arg);
    } else if (options->module_path.empty()) {
      options->module_path = arg;
    } else {
      return Fail("more than one module given ('%s' and '%s')",
                  options->module_path, arg);
    }
  }
  if (options->module_path.empty() && !options->list_devices) {
    std::fprintf(stderr, "%s", kUsage);
    return Fail("no module given");
  }
  return -1;
}

std::string FunctionList(kiln_module_t* module) {
  std::string list;
  for (size_t i = 0; i < kiln_module_function_count(module); ++i) {
    kiln_function_t* function = nullptr;
    kiln_status_free(kiln_module_function_at(module, i, &function));
    if (!function) continue;
    char signature[1024];
    kiln_function_format_signature(function, signature, sizeof(signature));
    list += std::string("  ") + kiln_function_name(function) + signature + "\n";
  }
  return list;
}

// Everything the run holds; released in the destructor.
struct Run {
  kiln_instance_t* instance = nullptr;
  kiln_device_t* device = nullptr;
  kiln_module_t* module = nullptr;
  std::vector<kiln_buffer_view_t*> inputs;
  std::vector<kiln_buffer_view_t*> outputs;
  ~Run() {
    for (kiln_buffer_view_t* view : inputs) kiln_buffer_view_release(view);
    for (kiln_buffer_view_t* view : outputs) kiln_buffer_view_release(view);
    kiln_module_release(module);
    kiln_device_release(device);
    kiln_instance_release(instance);
  }
};

int Main(int argc, char** argv) {
  Options options;
  int parsed = ParseOptions(argc, argv, &options);
  if (parsed >= 0) return parsed;

  Run run;
  std::vector<const char*> plugin_paths;
  for (const std::string& path : options.plugins) plugin_paths.push_back(path.c_str());
  kiln_instance_options_t instance_options = {};
  instance_options.plugin_paths = plugin_paths.data();
  instance_options.plugin_path_count = plugin_paths.size();
  kiln_status_t status = kiln_instance_create(&instance_options, &run.instance);
  if (!kiln_status_is_ok(status)) return FailStatus(status, "");
  if (options.list_devices) {
    std::string uris(kiln_instance_list_devices(run.instance, nullptr, 0), '\0');
    kiln_instance_list_devices(run.instance, uris.data(), uris.size() + 1);
    std::printf("%s", uris.c_str());
    return 0;
  }
  status = kiln_device_create(run.instance, options.device.c_str(), &run.device);
  if (!kiln_status_is_ok(status)) return FailStatus(status, "");
  status = kiln_module_load_file(run.device, options.module_path.c_str(),
                                 &run.module);
  if (!kiln_status_is_ok(status)) return FailStatus(status, "");

  if (options.list_functions) {
    std::printf("%s", FunctionList(run.module).c_str());
    return 0;
  }

  kiln_function_t* function = nullptr;
  if (options.function.empty()) {
    if (kiln_module_function_count(run.module) != 1) {
      return Fail("no --function given; the module has these functions:\n%s",
                  FunctionList(run.module));
    }
    kiln_status_free(kiln_module_function_at(run.module, 0, &function));
  } else {
    status = kiln_module_lookup_function(run.module, options.function.c_str(),
                                         &function);
    if (!kiln_status_is_ok(status)) return FailStatus(status, "");
  }
  const std::string name = kiln_function_name(function);
  char signature[1024];
  kiln_function_format_signature(function, signature, sizeof(signature));

  const size_t input_count = kiln_function_input_count(function);
  const size_t output_count = kiln_function_output_count(function);
  if (options.inputs.size() != input_count) {
    return Fail("function '%s' expects %s", name,
                std::to_string(input_count) + " inputs " + signature +
                    ", got " + std::to_string(options.inputs.size()) +
                    " --input flags");
  }
  if (options.outputs.size() > output_count) {
    return Fail("function '%s' has %s", name,
                std::to_string(output_count) + " outputs but " +
                    std::to_string(options.outputs.size()) +
                    " --output flags were given");
  }
  if (!options.expected.empty() && options.expected.size() != output_count) {
    return Fail("function '%s' has %s", name,
                std::to_string(output_count) + " outputs but " +
                    std::to_string(options.expected.size()) +
                    " --expected-output flags were given (give one per "
                    "output)");
  }
  for (const std::string& output : options.outputs) {
    if (output != "-" && (output.size() < 2 || output[0] != '@')) {
      return Fail("invalid --output '%s': expected @FILE.npy or '-'", output);
    }
  }

  // Parse everything before running so that a typo costs nothing.
  std::vector<HostTensor> expected(options.expected.size());
  for (size_t j = 0; j < options.expected.size(); ++j) {
    status = kiln::tooling::ParseTensorValue(options.expected[j], &expected[j]);
    if (!kiln_status_is_ok(status)) {
      return FailStatus(status, "--expected-output " + std::to_string(j));
    }
  }
  for (size_t i = 0; i < input_count; ++i) {
    HostTensor tensor;
    status = kiln::tooling::ParseTensorValue(options.inputs[i], &tensor);
    if (!kiln_status_is_ok(status)) {
      return FailStatus(status, "--input " + std::to_string(i));
    }
    kiln_buffer_view_t* view = nullptr;
    status = kiln_buffer_view_create_from_host(
        run.device, tensor.element_type, tensor.shape.size(),
        tensor.shape.data(), tensor.data.data(), tensor.data.size(), &view);
    if (!kiln_status_is_ok(status)) {
      return FailStatus(status, "--input " + std::to_string(i));
    }
    run.inputs.push_back(view);
  }

  run.outputs.assign(output_count, nullptr);
  status = kiln_function_call(function, input_count, run.inputs.data(),
                              output_count, run.outputs.data());
  if (!kiln_status_is_ok(status)) return FailStatus(status, "");

  bool all_matched = true;
  for (size_t j = 0; j < output_count; ++j) {
    HostTensor actual;
    kiln_tensor_type_t type = kiln_buffer_view_type(run.outputs[j]);
    actual.element_type = type.element_type;
    actual.shape.assign(type.shape, type.shape + type.rank);
    actual.Allocate();
    status = kiln_buffer_view_read(run.outputs[j], actual.data.data(),
                                   actual.data.size());
    if (!kiln_status_is_ok(status)) {
      return FailStatus(status, "reading result " + std::to_string(j));
    }
    const std::string label = "result[" + std::to_string(j) + "]";
    bool saved = j < options.outputs.size() && options.outputs[j] != "-";
    if (saved) {
      status = kiln::tooling::WriteNpyFile(options.outputs[j].substr(1), actual);
      if (!kiln_status_is_ok(status)) return FailStatus(status, label);
    } else if (expected.empty()) {
      std::printf("%s: %s\n", label.c_str(),
                  kiln::tooling::FormatTensor(actual,
                                              options.print_max_elements)
                      .c_str());
    }
    if (expected.empty()) continue;

    kiln::tooling::Tolerance tolerance =
        kiln::tooling::DefaultTolerance(actual.element_type);
    if (options.has_atol) tolerance.atol = options.atol;
    if (options.has_rtol) tolerance.rtol = options.rtol;
    kiln::tooling::CompareResult result =
        kiln::tooling::CompareTensors(expected[j], actual, tolerance, 8);
    if (!result.type_mismatch.empty()) {
      all_matched = false;
      std::printf("%s: MISMATCH: %s\n", label.c_str(),
                  result.type_mismatch.c_str());
      continue;
    }
    if (result.mismatch_count == 0) {
      std::printf("%s: matched (%s)\n", label.c_str(),
                  actual.TypeString().c_str());
      continue;
    }
    all_matched = false;
    std::printf("%s: MISMATCH: %llu of %llu elements differ (atol=%g, "
                "rtol=%g)\n",
                label.c_str(), (unsigned long long)result.mismatch_count,
                (unsigned long long)actual.element_count(), tolerance.atol,
                tolerance.rtol);
    for (const auto& mismatch : result.first_mismatches) {
      std::printf("  at %s: expected %s, got %s\n",
                  kiln::tooling::FormatIndices(mismatch.indices).c_str(),
                  mismatch.expected.c_str(), mismatch.actual.c_str());
    }
    if (result.mismatch_count > result.first_mismatches.size()) {
      std::printf("  ... and %llu more\n",
                  (unsigned long long)(result.mismatch_count -
                                       result.first_mismatches.size()));
    }
    std::printf("  actual: %s\n",
                kiln::tooling::FormatTensor(actual, 64).c_str());
  }
  if (!expected.empty()) {
    if (!all_matched) {
      std::fprintf(stderr, "error: function '%s': outputs do not match the "
                   "expected values\n", name.c_str());
      return 1;
    }
    std::printf("all %zu outputs of '%s' matched the expected values\n",
                output_count, name.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return Main(argc, argv); }
