// kiln-benchmark: loads a .vmfb module on a device and times synchronous
// calls of one function with inputs given on the command line (kiln-run
// syntax). Prints per-call latency statistics and, given --flops, GFLOP/s;
// with --profile, where the time of a call goes (device time per command,
// kiln_function_profile); with --json, all of it as one JSON object.
// `kiln-benchmark collective ...` times HAL collectives instead
// (collective_benchmark.h). See --help.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "collective_benchmark.h"
#include "kiln/version.h"
#include "kiln/runtime.h"
#include "tooling/flags.h"
#include "tooling/host_tensor.h"
#include "tooling/values.h"

namespace {

using kiln::tooling::HostTensor;

const char kUsage[] =
    "usage: kiln-benchmark MODULE.vmfb --function=NAME [options]\n"
    "       kiln-benchmark collective --device=URI [options]  (see\n"
    "       kiln-benchmark collective --help)\n"
    "\n"
    "Times synchronous calls of function NAME of a compiled Kiln module.\n"
    "Each call is timed from submission until its outputs are ready (the\n"
    "inputs stay on the device; output allocation is part of a call).\n"
    "\n"
    "options:\n"
    "  --function=NAME    function to call (may be omitted if the module has\n"
    "                     exactly one)\n"
    "  --device=URI       device to run on: local, local://N, or a plugin\n"
    "                     driver's URI (default: local)\n"
    "  --plugin=PATH      load a HAL driver plugin (repeatable)\n"
    "  --input=VALUE      one per function input, in order, as for kiln-run:\n"
    "                     SHAPExTYPE=VALUES, a splat (4xf32=1.5), a scalar\n"
    "                     (f32=2) or @file.npy\n"
    "  --parameters=FILE  a parameter archive (safetensors or .npz) of a\n"
    "                     module compiled with --parameter-mode=load\n"
    "                     (repeatable)\n"
    "  --warmup=N         untimed calls first (default: 3)\n"
    "  --warmup-ms=T      and keep warming up until T ms have passed (GPU\n"
    "                     clocks ramp up after idling; default 0)\n"
    "  --iterations=N     timed calls (default: 20)\n"
    "  --flops=X          floating-point operations of one call; adds GFLOP/s\n"
    "                     (computed from the median)\n"
    "  --profile[=K]      after the timed calls, K profiled calls (default\n"
    "                     10): each command's device time (median over the\n"
    "                     K calls), the call's device span and host time;\n"
    "                     then K calls issued as usual with the device span\n"
    "                     of each: what a call costs beyond its device work\n"
    "  --json             print one JSON object instead of text\n"
    "  --help             show this help\n"
    "  --version          print Kiln's version and commit\n"
    "\n"
    "Output: one line 'latency_ms: mean=M median=D min=N iterations=I' and,\n"
    "with --flops, 'gflops: G'. With --profile, a table of the commands with\n"
    "their device time, then 'profile_ms: call=C device=D kernels=K\n"
    "overhead=C-D' and 'overhead_us: median=M max=X calls=K', host minus\n"
    "device time per call of the calls issued as usual. Device time is\n"
    "measured with events around each command (GPU) or wall time per command\n"
    "(local); profiled calls are issued command by command, so time plain\n"
    "calls for latency.\n"
    "\n"
    "JSON (--json): {\"function\", \"device\", \"warmup\", \"iterations\",\n"
    "\"latency_ms\": {\"mean\", \"median\", \"min\", \"max\"}, \"gflops\" "
    "(with\n"
    "--flops), \"profile\" (with --profile): {\"iterations\", \"call_ms\",\n"
    "\"device_ms\", \"kernels_ms\", \"commands\": [{\"index\", \"kind\", "
    "\"name\",\n"
    "\"device_ms\"}], \"timed\": {\"call_ms\", \"device_ms\", "
    "\"overhead_us\":\n"
    "{\"median\", \"max\"}}}} (medians over the profiled calls; \"timed\": "
    "the\n"
    "calls issued as usual, per-call host minus device time).\n";

int Fail(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

int FailStatus(kiln_status_t status, const std::string& context) {
  std::string message = kiln_status_message(status);
  kiln_status_free(status);
  return Fail(context.empty() ? message : context + ": " + message);
}

bool ParseCount(const std::string& text, long* value) {
  char* end = nullptr;
  *value = std::strtol(text.c_str(), &end, 10);
  return !text.empty() && end && *end == '\0' && *value >= 0;
}

struct Options {
  std::string module_path;
  std::string function;
  std::string device = "local";
  std::vector<std::string> plugins;
  std::vector<std::string> inputs;
  std::vector<std::string> parameter_files;
  long warmup = 3;
  long warmup_ms = 0;
  long iterations = 20;
  double flops = 0;
  long profile_iterations = 0;  // 0: no profile
  bool json = false;
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
    } else if (arg == "--version") {
      std::printf("%s\n", KILN_VERSION_TEXT);
      return 0;
    } else if (value_of("--function", &value)) {
      options->function = value;
    } else if (value_of("--device", &value)) {
      options->device = value;
    } else if (value_of("--plugin", &value)) {
      options->plugins.push_back(value);
    } else if (value_of("--input", &value)) {
      options->inputs.push_back(value);
    } else if (value_of("--parameters", &value)) {
      options->parameter_files.push_back(value);
    } else if (value_of("--warmup-ms", &value)) {
      if (!ParseCount(value, &options->warmup_ms)) {
        return Fail("invalid --warmup-ms '" + value +
                    "' (expected a non-negative number of milliseconds)");
      }
    } else if (value_of("--warmup", &value)) {
      if (!ParseCount(value, &options->warmup)) {
        return Fail("invalid --warmup '" + value +
                    "' (expected a non-negative integer)");
      }
    } else if (value_of("--iterations", &value)) {
      if (!ParseCount(value, &options->iterations) ||
          options->iterations == 0) {
        return Fail("invalid --iterations '" + value +
                    "' (expected a positive integer)");
      }
    } else if (arg == "--profile") {
      options->profile_iterations = 10;
    } else if (arg.rfind("--profile=", 0) == 0) {
      value = arg.substr(std::strlen("--profile="));
      if (!ParseCount(value, &options->profile_iterations) ||
          options->profile_iterations == 0) {
        return Fail("invalid --profile '" + value +
                    "' (expected a positive number of profiled calls)");
      }
    } else if (arg == "--json") {
      options->json = true;
    } else if (value_of("--flops", &value)) {
      char* end = nullptr;
      options->flops = std::strtod(value.c_str(), &end);
      if (value.empty() || !end || *end != '\0' || options->flops <= 0) {
        return Fail("invalid --flops '" + value +
                    "' (expected a positive number, e.g. 2.68e8)");
      }
    } else if (!arg.empty() && arg[0] == '-') {
      return Fail("unknown option '" + arg + "' (see --help)");
    } else if (options->module_path.empty()) {
      options->module_path = arg;
    } else {
      return Fail("more than one module given ('" + options->module_path +
                  "' and '" + arg + "')");
    }
  }
  if (options->module_path.empty()) {
    std::fprintf(stderr, "%s", kUsage);
    return Fail("no module given");
  }
  return -1;
}

// Everything the benchmark holds; released in the destructor.
struct Session {
  kiln_instance_t* instance = nullptr;
  kiln_device_t* device = nullptr;
  kiln_module_t* module = nullptr;
  kiln_parameters_t* parameters = nullptr;
  std::vector<kiln_buffer_view_t*> inputs;
  ~Session() {
    for (kiln_buffer_view_t* view : inputs) kiln_buffer_view_release(view);
    kiln_module_release(module);
    kiln_parameters_release(parameters);
    kiln_device_release(device);
    kiln_instance_release(instance);
  }
};

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

// A JSON string literal of |text|.
std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      out += escaped;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

// Medians over the profiled calls: per command (by position in the
// profile, the same commands each call) and for the call as a whole.
struct ProfileSummary {
  long iterations = 0;
  double call_ms = 0;
  double device_ms = 0;
  double kernels_ms = 0;
  struct Command {
    uint32_t index;
    std::string kind;
    std::string name;
    double device_ms;
  };
  std::vector<Command> commands;
  // Calls issued as usual with their device span (kiln_function_call_timed).
  double timed_call_ms = 0;
  double timed_device_ms = 0;
  double overhead_median_us = 0;
  double overhead_max_us = 0;
};

kiln_status_t Profile(kiln_function_t* function, Session& session,
                      std::vector<kiln_buffer_view_t*>& outputs, long count,
                      ProfileSummary* out) {
  std::vector<double> call, device, kernels;
  std::vector<std::vector<double>> per_command;
  out->iterations = count;
  for (long i = 0; i < count; ++i) {
    kiln_call_profile_t* profile = nullptr;
    std::fill(outputs.begin(), outputs.end(), nullptr);
    KILN_RETURN_IF_ERROR(kiln_function_profile(
        function, session.inputs.size(), session.inputs.data(), outputs.size(),
        outputs.data(), &profile));
    for (kiln_buffer_view_t* view : outputs) kiln_buffer_view_release(view);
    call.push_back(profile->host_ns * 1e-6);
    device.push_back(profile->device_ns * 1e-6);
    double sum = 0;
    if (i == 0) {
      per_command.resize(profile->command_count);
      for (size_t c = 0; c < profile->command_count; ++c) {
        const kiln_command_profile_t& command = profile->commands[c];
        out->commands.push_back(
            {command.index, command.kind, command.name, 0.0});
      }
    }
    for (size_t c = 0; c < profile->command_count && c < per_command.size();
         ++c) {
      per_command[c].push_back(profile->commands[c].device_ns * 1e-6);
      sum += profile->commands[c].device_ns * 1e-6;
    }
    kernels.push_back(sum);
    kiln_call_profile_free(profile);
  }
  out->call_ms = Median(call);
  out->device_ms = Median(device);
  out->kernels_ms = Median(kernels);
  for (size_t c = 0; c < out->commands.size(); ++c)
    out->commands[c].device_ms = Median(per_command[c]);

  // The same number of calls issued as plain calls are, each with its own
  // device span: host minus device time of one call, not of two medians.
  std::vector<double> timed_call, timed_device, overhead;
  for (long i = 0; i < count; ++i) {
    kiln_call_timing_t timing = {};
    std::fill(outputs.begin(), outputs.end(), nullptr);
    kiln_status_t status = kiln_function_call_timed(
        function, session.inputs.size(), session.inputs.data(),
        outputs.size(), outputs.data(), &timing);
    for (kiln_buffer_view_t* view : outputs) kiln_buffer_view_release(view);
    KILN_RETURN_IF_ERROR(status);
    timed_call.push_back(timing.host_ns * 1e-6);
    timed_device.push_back(timing.device_ns * 1e-6);
    overhead.push_back((double(timing.host_ns) - double(timing.device_ns)) *
                       1e-3);
  }
  out->timed_call_ms = Median(timed_call);
  out->timed_device_ms = Median(timed_device);
  out->overhead_median_us = Median(overhead);
  out->overhead_max_us = *std::max_element(overhead.begin(), overhead.end());
  return kiln_ok_status();
}

// One synchronous call; its outputs are released at once.
kiln_status_t CallOnce(kiln_function_t* function, Session& session,
                       std::vector<kiln_buffer_view_t*>& outputs) {
  std::fill(outputs.begin(), outputs.end(), nullptr);
  kiln_status_t status =
      kiln_function_call(function, session.inputs.size(),
                         session.inputs.data(), outputs.size(), outputs.data());
  for (kiln_buffer_view_t* view : outputs) kiln_buffer_view_release(view);
  return status;
}

int Main(int argc, char** argv) {
  Options options;
  int parsed = ParseOptions(argc, argv, &options);
  if (parsed >= 0) return parsed;

  Session session;
  std::vector<const char*> plugin_paths;
  for (const std::string& path : options.plugins) {
    plugin_paths.push_back(path.c_str());
  }
  kiln_instance_options_t instance_options = {};
  instance_options.plugin_paths = plugin_paths.data();
  instance_options.plugin_path_count = plugin_paths.size();
  kiln_status_t status =
      kiln_instance_create(&instance_options, &session.instance);
  if (!kiln_status_is_ok(status)) return FailStatus(status, "");
  status = kiln_device_create(session.instance, options.device.c_str(),
                              &session.device);
  if (!kiln_status_is_ok(status)) return FailStatus(status, "");
  if (!options.parameter_files.empty()) {
    status = kiln_parameters_create(&session.parameters);
    if (!kiln_status_is_ok(status)) return FailStatus(status, "");
    for (const std::string& file : options.parameter_files) {
      status =
          kiln_parameters_add_archive_file(session.parameters, file.c_str());
      if (!kiln_status_is_ok(status)) return FailStatus(status, "");
    }
  }
  status = kiln_module_load_file_with_parameters(
      session.device, options.module_path.c_str(), session.parameters,
      &session.module);
  if (!kiln_status_is_ok(status)) return FailStatus(status, "");

  kiln_function_t* function = nullptr;
  if (options.function.empty()) {
    if (kiln_module_function_count(session.module) != 1) {
      return Fail("no --function given and module '" + options.module_path +
                  "' has several functions (see kiln-run --list-functions)");
    }
    status = kiln_module_function_at(session.module, 0, &function);
  } else {
    status = kiln_module_lookup_function(session.module,
                                         options.function.c_str(), &function);
  }
  if (!kiln_status_is_ok(status)) return FailStatus(status, "");
  const std::string name = kiln_function_name(function);

  const size_t input_count = kiln_function_input_count(function);
  if (options.inputs.size() != input_count) {
    char signature[1024];
    kiln_function_format_signature(function, signature, sizeof(signature));
    return Fail("function '" + name + "' expects " +
                std::to_string(input_count) + " inputs " + signature +
                ", got " + std::to_string(options.inputs.size()) +
                " --input flags");
  }
  for (size_t i = 0; i < input_count; ++i) {
    HostTensor tensor;
    kiln::tooling::ExpectedType type;
    type.what = "input " + std::to_string(i) + " of function '" + name + "'";
    status = kiln_function_input_type(function, i, &type.type);
    if (kiln_status_is_ok(status)) {
      status = kiln::tooling::ParseTensorValue(options.inputs[i], &tensor,
                                               &type);
    }
    if (!kiln_status_is_ok(status)) {
      return FailStatus(status, "--input " + std::to_string(i));
    }
    kiln_buffer_view_t* view = nullptr;
    status = kiln_buffer_view_create_from_host(
        session.device, tensor.element_type, tensor.shape.size(),
        tensor.shape.data(), tensor.data.data(), tensor.data.size(), &view);
    if (!kiln_status_is_ok(status)) {
      return FailStatus(status, "--input " + std::to_string(i));
    }
    session.inputs.push_back(view);
  }

  std::vector<kiln_buffer_view_t*> outputs(
      kiln_function_output_count(function));
  // --warmup calls, then more until --warmup-ms passed; the JSON's
  // "warmup" counts them all.
  const auto warmup_start = std::chrono::steady_clock::now();
  long warmed = 0;
  while (warmed < options.warmup ||
         std::chrono::steady_clock::now() - warmup_start <
             std::chrono::milliseconds(options.warmup_ms)) {
    status = CallOnce(function, session, outputs);
    if (!kiln_status_is_ok(status)) {
      return FailStatus(status, "warmup call of '" + name + "'");
    }
    ++warmed;
  }
  std::vector<double> ms;
  ms.reserve(options.iterations);
  for (long i = 0; i < options.iterations; ++i) {
    auto start = std::chrono::steady_clock::now();
    status = CallOnce(function, session, outputs);
    auto end = std::chrono::steady_clock::now();
    if (!kiln_status_is_ok(status)) {
      return FailStatus(status, "call of '" + name + "'");
    }
    ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }

  ProfileSummary profile;
  if (options.profile_iterations > 0) {
    status = Profile(function, session, outputs, options.profile_iterations,
                     &profile);
    if (!kiln_status_is_ok(status)) {
      return FailStatus(status, "profiled call of '" + name + "'");
    }
  }

  double mean = 0;
  for (double t : ms) mean += t;
  mean /= ms.size();
  double median = Median(ms);
  double min = *std::min_element(ms.begin(), ms.end());
  double max = *std::max_element(ms.begin(), ms.end());
  double gflops =
      options.flops > 0 ? options.flops / (median * 1e-3) / 1e9 : 0.0;
  if (options.json) {
    std::printf("{\"function\": %s, \"device\": %s, \"warmup\": %ld, "
                "\"iterations\": %ld,\n \"latency_ms\": {\"mean\": %.6f, "
                "\"median\": %.6f, \"min\": %.6f, \"max\": %.6f}",
                JsonString(name).c_str(),
                JsonString(kiln_device_uri(session.device)).c_str(), warmed,
                options.iterations, mean, median, min, max);
    if (options.flops > 0) std::printf(",\n \"gflops\": %.4f", gflops);
    if (options.profile_iterations > 0) {
      std::printf(",\n \"profile\": {\"iterations\": %ld, \"call_ms\": %.6f, "
                  "\"device_ms\": %.6f, \"kernels_ms\": %.6f, \"commands\": [",
                  profile.iterations, profile.call_ms, profile.device_ms,
                  profile.kernels_ms);
      for (size_t c = 0; c < profile.commands.size(); ++c) {
        const ProfileSummary::Command& command = profile.commands[c];
        std::printf("%s\n   {\"index\": %u, \"kind\": %s, \"name\": %s, "
                    "\"device_ms\": %.6f}",
                    c ? "," : "", command.index,
                    JsonString(command.kind).c_str(),
                    JsonString(command.name).c_str(), command.device_ms);
      }
      std::printf("],\n  \"timed\": {\"call_ms\": %.6f, \"device_ms\": %.6f, "
                  "\"overhead_us\": {\"median\": %.3f, \"max\": %.3f}}}",
                  profile.timed_call_ms, profile.timed_device_ms,
                  profile.overhead_median_us, profile.overhead_max_us);
    }
    std::printf("}\n");
    return 0;
  }
  std::printf("function: %s on %s\n", name.c_str(),
              kiln_device_uri(session.device));
  std::printf("latency_ms: mean=%.4f median=%.4f min=%.4f iterations=%ld\n",
              mean, median, min, options.iterations);
  if (options.flops > 0) std::printf("gflops: %.2f\n", gflops);
  if (options.profile_iterations > 0) {
    std::printf("profile (median of %ld profiled calls):\n",
                profile.iterations);
    std::printf("  %5s  %-10s  %12s  %s\n", "index", "kind", "device_ms",
                "name");
    for (const ProfileSummary::Command& command : profile.commands) {
      std::printf("  %5u  %-10s  %12.4f  %s\n", command.index,
                  command.kind.c_str(), command.device_ms,
                  command.name.c_str());
    }
    std::printf("profile_ms: call=%.4f device=%.4f kernels=%.4f "
                "overhead=%.4f\n",
                profile.call_ms, profile.device_ms, profile.kernels_ms,
                profile.call_ms - profile.device_ms);
    std::printf("overhead_us: median=%.2f max=%.2f calls=%ld\n",
                profile.overhead_median_us, profile.overhead_max_us,
                profile.iterations);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // The last resort for allocations not checked where they are made.
  try {
    if (argc > 1 && std::strcmp(argv[1], "collective") == 0)
      return kiln::benchmark::RunCollectiveBenchmark(argc - 1, argv + 1);
    return Main(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "error: kiln-benchmark ran out of host memory\n");
    return 1;
  }
}
