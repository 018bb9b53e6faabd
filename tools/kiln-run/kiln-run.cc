// kiln-run: loads a .vmfb module on a device, calls one function with inputs
// given on the command line (IREE syntax) and prints, saves or checks the
// outputs. An SPMD function (one compiled for a device grid) runs on every
// rank of the grid at once, one thread per rank of this process, possibly
// across processes. See --help.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "kiln/runtime.h"
#include "kiln/version.h"
#include "tooling/compare.h"
#include "tooling/flags.h"
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
    "  --device=URI            device to run on: local, local://N, or a "
    "plugin\n"
    "                          driver's URI (default: local). SPMD functions\n"
    "                          (see below) take one --device per rank, or\n"
    "                          local (all ranks on local://0..W-1) or\n"
    "                          local://W (W ranks; W must be the grid size)\n"
    "  --plugin=PATH           load a HAL driver plugin (repeatable; also\n"
    "                          $KILN_HAL_DRIVER_PLUGINS)\n"
    "  --input=VALUE           one per function input, in order. VALUE is\n"
    "                          SHAPExTYPE=VALUES (2x3xf32=1,2,3,4,5,6), a "
    "splat\n"
    "                          (4xf32=1.5), a scalar (f32=2) or @file.npy\n"
    "  --parameters=FILE       a parameter archive (safetensors or .npz)\n"
    "                          holding the tensors of a module compiled with\n"
    "                          --parameter-mode=load (repeatable; every\n"
    "                          tensor name may appear in one archive only)\n"
    "  --output=@FILE.npy      save output i (one flag per output, in order;\n"
    "                          '-' prints that output instead)\n"
    "  --expected-output=VALUE check output i against VALUE (one per output,\n"
    "                          in order, same syntax as --input); exits 1 on\n"
    "                          a mismatch\n"
    "  --atol=X, --rtol=X      floating-point tolerances for "
    "--expected-output:\n"
    "                          elements match when\n"
    "                          |actual-expected| <= atol + rtol*|expected|\n"
    "                          (defaults: f32 1e-5, f64 1e-9, f16 1e-3/1e-2,\n"
    "                          bf16 1e-2/2e-2); integers are always exact\n"
    "  --print-max-elements=N  elide printed tensors after N elements (1024)\n"
    "  --repeat=N              call the function N times in a row (default 1;\n"
    "                          every call's outputs are checked against\n"
    "                          --expected-output, the last one is printed)\n"
    "  --time                  print the host time of the calls (each from\n"
    "                          the call until its outputs are ready; checks\n"
    "                          between calls are not counted): median, mean\n"
    "                          and min over the calls after the first, which\n"
    "                          pays for loading kernels (needs --repeat >= 2);\n"
    "                          SPMD ranks each time their own calls\n"
    "  --list-functions        list the module's functions and exit\n"
    "  --list-devices          list the available device URIs (after loading\n"
    "                          plugins) and exit; no module needed\n"
    "  --module=MODULE.vmfb    the module (as IREE's iree-run-module takes "
    "it;\n"
    "                          same as the positional argument)\n"
    "  --help                  show this help\n"
    "  --version               print Kiln's version and commit\n"
    "\n"
    "SPMD functions (modules compiled for a device grid of W ranks) run on W\n"
    "ranks at once, one thread per rank; each rank gets the same --input\n"
    "values, except that '%r' in an @file name is replaced by the rank\n"
    "(--input=@x%r.npy, --output=@y%r.npy, --expected-output=@e%r.npy).\n"
    "Printed results are prefixed 'rank R: '. A failing rank is reported with\n"
    "its rank and the exit code is 1; ranks still blocked in a collective\n"
    "10 s after a rank failed are abandoned.\n"
    "  --rank=R                this process's rank of a multi-process run\n"
    "                          (one rank per process, on its one --device)\n"
    "  --world-size=W          ranks of a multi-process run\n"
    "  --rendezvous=URI        how the processes meet: file:DIR (a fresh\n"
    "                          directory every process sees) or\n"
    "                          tcp://HOST:PORT (rank 0 listens there)\n"
    "  --rendezvous-timeout=S  seconds to wait for the other processes (300)\n"
    "Without --rank/--world-size, launcher variables are used:\n"
    "OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE (Open MPI), PMI_RANK/PMI_SIZE\n"
    "(MPICH, Intel MPI), SLURM_PROCID/SLURM_NTASKS (srun), RANK/WORLD_SIZE\n"
    "(torchrun; with MASTER_ADDR/MASTER_PORT the rendezvous defaults to\n"
    "tcp://MASTER_ADDR:(MASTER_PORT+1), since torchrun's own store holds\n"
    "MASTER_PORT). The local driver's collectives only connect devices of\n"
    "one process: multi-process runs need a driver such as hip (NCCL/RCCL).\n"
    "If W exceeds the local devices and $KILN_LOCAL_DEVICE_COUNT is unset,\n"
    "kiln-run sets it to W.\n";

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

// A decimal count 0..UINT64_MAX, checked (no sign, no overflow, no
// fraction).
bool ParseCount(const std::string& text, uint64_t* value) {
  if (text.empty() ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  errno = 0;
  unsigned long long parsed = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE) return false;
  *value = parsed;
  return true;
}

const char kOutOfMemory[] = "kiln-run ran out of host memory";

// How long the other ranks may still run once one rank failed: a rank that
// waits in a collective for the failed one would wait forever. (--help
// says so.)
constexpr int kRankFailureGraceSeconds = 10;

struct Options {
  std::string module_path;
  std::string function;
  std::vector<std::string> devices;  // empty: "local"
  std::vector<std::string> plugins;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<std::string> expected;
  std::vector<std::string> parameter_files;
  // The archives of |parameter_files|, read once and given to every load.
  std::shared_ptr<kiln_parameters_t> parameters;
  bool has_atol = false, has_rtol = false;
  double atol = 0, rtol = 0;
  uint64_t print_max_elements = 1024;
  uint64_t repeat = 1;  // calls of the function, one after the other
  bool time_calls = false;  // --time: report the host time of each call
  bool list_functions = false;
  bool list_devices = false;
  // Multi-process SPMD runs (-1 / empty: not given).
  int rank = -1;
  int world_size = -1;
  std::string rendezvous;
  double rendezvous_timeout_s = 300;
};

// Copies |view| to the host.
kiln_status_t ReadOutput(kiln_buffer_view_t* view, HostTensor* out) {
  kiln_tensor_type_t type = kiln_buffer_view_type(view);
  out->element_type = type.element_type;
  out->shape.assign(type.shape, type.shape + type.rank);
  KILN_RETURN_IF_ERROR(out->Allocate());
  return kiln_buffer_view_read(view, out->data.data(), out->data.size());
}

// --expected-output's tolerance for |type|: the type's default, or --atol
// and --rtol.
kiln::tooling::Tolerance ToleranceFor(const Options& options,
                                      kiln_element_type_t type) {
  kiln::tooling::Tolerance tolerance = kiln::tooling::DefaultTolerance(type);
  if (options.has_atol) tolerance.atol = options.atol;
  if (options.has_rtol) tolerance.rtol = options.rtol;
  return tolerance;
}

bool ParseRank(const std::string& text, int* value) {
  char* end = nullptr;
  long parsed = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || parsed < 0 || parsed > (1 << 16)) {
    return false;
  }
  *value = int(parsed);
  return true;
}

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
    } else if (arg == "--time") {
      options->time_calls = true;
    } else if (arg == "--list-functions") {
      options->list_functions = true;
    } else if (arg == "--list-devices") {
      options->list_devices = true;
    } else if (value_of("--function", &value)) {
      options->function = value;
    } else if (value_of("--device", &value)) {
      options->devices.push_back(value);
    } else if (value_of("--rank", &value)) {
      if (!ParseRank(value, &options->rank)) {
        return Fail("invalid --rank '%s' (expected a rank 0..65536)", value);
      }
    } else if (value_of("--world-size", &value)) {
      if (!ParseRank(value, &options->world_size) || options->world_size < 1) {
        return Fail("invalid --world-size '%s' (expected 1..65536)", value);
      }
    } else if (value_of("--rendezvous", &value)) {
      options->rendezvous = value;
    } else if (value_of("--rendezvous-timeout", &value)) {
      if (!ParseDouble(value, &options->rendezvous_timeout_s)) {
        return Fail("invalid --rendezvous-timeout '%s' (expected seconds)",
                    value);
      }
    } else if (value_of("--plugin", &value)) {
      options->plugins.push_back(value);
    } else if (value_of("--input", &value)) {
      options->inputs.push_back(value);
    } else if (value_of("--output", &value)) {
      options->outputs.push_back(value);
    } else if (value_of("--expected-output", &value)) {
      options->expected.push_back(value);
    } else if (value_of("--parameters", &value)) {
      options->parameter_files.push_back(value);
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
      if (!ParseCount(value, &options->print_max_elements)) {
        return Fail("invalid --print-max-elements '%s' (expected an integer "
                    "0..%s)", value, std::to_string(UINT64_MAX));
      }
    } else if (value_of("--repeat", &value)) {
      if (!ParseCount(value, &options->repeat) || options->repeat == 0 ||
          options->repeat > (uint64_t{1} << 32)) {
        return Fail("invalid --repeat '%s' (expected 1..%s calls)", value,
                    std::to_string(uint64_t{1} << 32));
      }
    } else if (value_of("--module", &value)) {
      if (!options->module_path.empty())
        return Fail("more than one module given ('%s' and '%s')",
                    options->module_path, value);
      options->module_path = value;
    } else if (!arg.empty() && arg[0] == '-') {
      return Fail("unknown option '%s' (see --help)", arg);
    } else if (options->module_path.empty()) {
      options->module_path = arg;
    } else {
      return Fail("more than one module given ('%s' and '%s')",
                  options->module_path, arg);
    }
  }
  if (options->time_calls && options->repeat < 2) {
    return Fail("--time times the calls after the first: give --repeat=N "
                "with N >= 2");
  }
  if (options->module_path.empty() && !options->list_devices) {
    std::fprintf(stderr, "%s", kUsage);
    return Fail("no module given");
  }
  return -1;
}

// Fills in --rank/--world-size/--rendezvous from a launcher's environment
// when they were not given. Returns -1 to go on, or the exit code.
int ApplyLauncherEnvironment(Options* options) {
  if (options->rank >= 0 || options->world_size >= 0) {
    if (options->rank < 0 || options->world_size < 0) {
      return Fail("--rank and --world-size go together%s", "");
    }
    return -1;
  }
  static const char* const kLaunchers[][3] = {
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "Open MPI"},
      {"PMI_RANK", "PMI_SIZE", "PMI"},
      {"SLURM_PROCID", "SLURM_NTASKS", "Slurm"},
      {"RANK", "WORLD_SIZE", "torchrun"},
  };
  for (const auto& launcher : kLaunchers) {
    const char* rank = std::getenv(launcher[0]);
    const char* size = std::getenv(launcher[1]);
    if (!rank || !size) continue;
    if (!ParseRank(rank, &options->rank) ||
        !ParseRank(size, &options->world_size) || options->world_size < 1) {
      return Fail("invalid launcher environment %s", std::string(launcher[0]) +
                  "='" + rank + "' " + launcher[1] + "='" + size + "'");
    }
    const char* address = std::getenv("MASTER_ADDR");
    const char* port = std::getenv("MASTER_PORT");
    int port_number = 0;
    if (options->rendezvous.empty() && address && port &&
        ParseRank(port, &port_number) && port_number < 65535) {
      options->rendezvous = std::string("tcp://") + address + ":" +
                            std::to_string(port_number + 1);
    }
    return -1;
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

bool IsLocalUri(const std::string& uri) {
  return uri == "local" || uri.rfind("local://", 0) == 0;
}

// Replaces each "%r" in an @file value by |rank| (rank < 0: unchanged).
std::string ForRank(const std::string& value, int rank) {
  if (rank < 0 || value.empty() || value[0] != '@') return value;
  std::string result;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '%' && i + 1 < value.size() && value[i + 1] == 'r') {
      result += std::to_string(rank);
      ++i;
    } else {
      result += value[i];
    }
  }
  return result;
}

std::string TakeMessage(kiln_status_t status, const std::string& context) {
  std::string message = kiln_status_message(status);
  kiln_status_free(status);
  return context.empty() ? message : context + ": " + message;
}

// A module loaded on a device and the function to call; released in order.
struct Loaded {
  kiln_module_t* module = nullptr;
  kiln_function_t* function = nullptr;  // borrowed from module
  ~Loaded() { kiln_module_release(module); }
};

// Loads the module on |device| and finds the function to call. Returns an
// error message, empty on success.
std::string LoadFunction(const Options& options, kiln_device_t* device,
                         Loaded* loaded) {
  kiln_status_t status = kiln_module_load_file_with_parameters(
      device, options.module_path.c_str(), options.parameters.get(),
      &loaded->module);
  if (!kiln_status_is_ok(status)) return TakeMessage(status, "");
  if (options.list_functions) return "";
  if (options.function.empty()) {
    if (kiln_module_function_count(loaded->module) != 1) {
      return "no --function given; the module has these functions:\n" +
             FunctionList(loaded->module);
    }
    kiln_status_free(kiln_module_function_at(loaded->module, 0,
                                             &loaded->function));
    return "";
  }
  status = kiln_module_lookup_function(loaded->module, options.function.c_str(),
                                       &loaded->function);
  return kiln_status_is_ok(status) ? "" : TakeMessage(status, "");
}

// What one rank (or the single call of an ordinary function) printed and
// whether it failed.
struct RankResult {
  std::string out;    // stdout text
  std::string error;  // the error, if any (without "error: ")
  bool failed = false;
};

// A meeting point of the in-process ranks. Before the calls: every rank
// prepared its inputs, so that a bad input on one rank stops all of them
// before any blocks in a collective. After them: a rank releases its module
// only when every rank's calls are done, since releasing frees memory and
// unloads kernels, which waits for the GPU's work, and on a GPU shared by
// logical ranks that work may be a peer's compiled collective waiting for
// this rank's part of a call (a rank that failed leaves at once instead:
// its release aborts the peers that wait for it).
class StartGate {
 public:
  explicit StartGate(int ranks) : ranks_(ranks) {}
  // Waits for every rank; returns true when every rank arrived ready.
  bool Arrive(bool ready) {
    std::unique_lock<std::mutex> lock(mutex_);
    all_ready_ = all_ready_ && ready;
    if (++arrived_ == ranks_) changed_.notify_all();
    changed_.wait(lock, [this] { return arrived_ == ranks_; });
    return all_ready_;
  }
  // Counts the rank as arrived (not ready) without waiting.
  void Leave() {
    std::lock_guard<std::mutex> lock(mutex_);
    all_ready_ = false;
    if (++arrived_ == ranks_) changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int ranks_;
  int arrived_ = 0;
  bool all_ready_ = true;
};

void Appendf(std::string* out, const char* format, ...)
    KILN_PRINTF_FORMAT(2, 3);
void Appendf(std::string* out, const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list measure;
  va_copy(measure, args);
  int length = std::vsnprintf(nullptr, 0, format, measure);
  va_end(measure);
  if (length > 0) {
    std::string text(size_t(length) + 1, '\0');
    std::vsnprintf(text.data(), text.size(), format, args);
    text.pop_back();
    *out += text;
  }
  va_end(args);
}

// Calls |function| on |device| with the inputs of |options| (for |rank|;
// -1 for an ordinary function) and prints, saves or checks the outputs.
// |gate| (SPMD runs) holds the call until every rank is ready.
void CallFunction(const Options& options, kiln_device_t* device,
                  kiln_function_t* function, int rank, StartGate* gate,
                  RankResult* result) {
  const std::string prefix =
      rank >= 0 ? "rank " + std::to_string(rank) + ": " : "";
  std::vector<kiln_buffer_view_t*> inputs;
  std::vector<kiln_buffer_view_t*> outputs;
  struct Cleanup {
    std::vector<kiln_buffer_view_t*>& inputs;
    std::vector<kiln_buffer_view_t*>& outputs;
    ~Cleanup() {
      for (kiln_buffer_view_t* view : inputs) kiln_buffer_view_release(view);
      for (kiln_buffer_view_t* view : outputs) kiln_buffer_view_release(view);
    }
  } cleanup{inputs, outputs};
  auto fail = [&](const std::string& message) {
    result->failed = true;
    result->error = message;
  };

  const std::string name = kiln_function_name(function);
  char signature[1024];
  kiln_function_format_signature(function, signature, sizeof(signature));
  const size_t input_count = kiln_function_input_count(function);
  const size_t output_count = kiln_function_output_count(function);
  std::vector<HostTensor> expected(options.expected.size());
  // Check and parse everything before running so that a typo costs nothing.
  [&] {
    if (options.inputs.size() != input_count) {
      return fail("function '" + name + "' expects " +
                  std::to_string(input_count) + " inputs " + signature +
                  ", got " + std::to_string(options.inputs.size()) +
                  " --input flags");
    }
    if (options.outputs.size() > output_count) {
      return fail("function '" + name + "' has " +
                  std::to_string(output_count) + " outputs but " +
                  std::to_string(options.outputs.size()) +
                  " --output flags were given");
    }
    if (!options.expected.empty() && options.expected.size() != output_count) {
      return fail("function '" + name + "' has " +
                  std::to_string(output_count) + " outputs but " +
                  std::to_string(options.expected.size()) +
                  " --expected-output flags were given (give one per "
                  "output)");
    }
    for (const std::string& output : options.outputs) {
      if (output != "-" && (output.size() < 2 || output[0] != '@')) {
        return fail("invalid --output '" + output +
                    "': expected @FILE.npy or '-'");
      }
    }
    // Each value's type is checked against the signature before its data
    // is allocated, so that a typo in a shape cannot exhaust the host.
    for (size_t j = 0; j < options.expected.size(); ++j) {
      kiln::tooling::ExpectedType type;
      type.what = "output " + std::to_string(j) + " of function '" + name +
                  "'";
      kiln_status_t status = kiln_function_output_type(function, j, &type.type);
      if (kiln_status_is_ok(status)) {
        status = kiln::tooling::ParseTensorValue(
            ForRank(options.expected[j], rank), &expected[j], &type);
      }
      if (!kiln_status_is_ok(status)) {
        return fail(TakeMessage(status,
                                "--expected-output " + std::to_string(j)));
      }
    }
    for (size_t i = 0; i < input_count; ++i) {
      HostTensor tensor;
      kiln::tooling::ExpectedType type;
      type.what = "input " + std::to_string(i) + " of function '" + name + "'";
      kiln_status_t status = kiln_function_input_type(function, i, &type.type);
      if (kiln_status_is_ok(status)) {
        status = kiln::tooling::ParseTensorValue(
            ForRank(options.inputs[i], rank), &tensor, &type);
      }
      if (!kiln_status_is_ok(status)) {
        return fail(TakeMessage(status, "--input " + std::to_string(i)));
      }
      kiln_buffer_view_t* view = nullptr;
      status = kiln_buffer_view_create_from_host(
          device, tensor.element_type, tensor.shape.size(),
          tensor.shape.data(), tensor.data.data(), tensor.data.size(), &view);
      if (!kiln_status_is_ok(status)) {
        return fail(TakeMessage(status, "--input " + std::to_string(i)));
      }
      inputs.push_back(view);
    }
  }();
  if (gate && !gate->Arrive(!result->failed)) {
    if (!result->failed) {
      fail("not run: another rank failed before the call");
    }
    return;
  }
  if (result->failed) return;

  // With --repeat, the calls before the last are checked against the
  // expected outputs too (quietly); the last one is reported as usual.
  kiln_status_t status = kiln_ok_status();
  std::vector<double> call_us;
  for (uint64_t call = 1; call <= options.repeat; ++call) {
    for (kiln_buffer_view_t* view : outputs) kiln_buffer_view_release(view);
    outputs.assign(output_count, nullptr);
    const bool timed = options.time_calls && call > 1;
    std::chrono::steady_clock::time_point start;
    if (timed)
      start = std::chrono::steady_clock::now();
    status = kiln_function_call(function, input_count, inputs.data(),
                                output_count, outputs.data());
    if (timed) {
      call_us.push_back(std::chrono::duration<double, std::micro>(
                            std::chrono::steady_clock::now() - start)
                            .count());
    }
    const std::string which = options.repeat > 1
                                  ? "call " + std::to_string(call) + " of " +
                                        std::to_string(options.repeat)
                                  : "";
    if (!kiln_status_is_ok(status)) return fail(TakeMessage(status, which));
    if (call == options.repeat || expected.empty()) continue;
    for (size_t j = 0; j < output_count; ++j) {
      HostTensor actual;
      status = ReadOutput(outputs[j], &actual);
      if (!kiln_status_is_ok(status)) return fail(TakeMessage(status, which));
      kiln::tooling::CompareResult compared = kiln::tooling::CompareTensors(
          expected[j], actual, ToleranceFor(options, actual.element_type), 8);
      if (!compared.type_mismatch.empty() || compared.mismatch_count != 0) {
        return fail(which + ": result[" + std::to_string(j) +
                    "] does not match the expected output");
      }
    }
  }

  bool all_matched = true;
  std::string& out = result->out;
  if (!call_us.empty()) {
    std::vector<double> sorted = call_us;
    std::sort(sorted.begin(), sorted.end());
    double sum = 0;
    for (double us : sorted) sum += us;
    Appendf(&out, "%stime per call: median=%.2f us mean=%.2f us min=%.2f us "
            "(%zu calls after the first)\n", prefix.c_str(),
            sorted[sorted.size() / 2], sum / double(sorted.size()), sorted[0],
            sorted.size());
  }
  for (size_t j = 0; j < output_count; ++j) {
    HostTensor actual;
    status = ReadOutput(outputs[j], &actual);
    if (!kiln_status_is_ok(status)) {
      return fail(TakeMessage(status, "reading result " + std::to_string(j)));
    }
    const std::string label = prefix + "result[" + std::to_string(j) + "]";
    bool saved = j < options.outputs.size() && options.outputs[j] != "-";
    if (saved) {
      status = kiln::tooling::WriteNpyFile(
          ForRank(options.outputs[j], rank).substr(1), actual);
      if (!kiln_status_is_ok(status)) return fail(TakeMessage(status, label));
    } else if (expected.empty()) {
      Appendf(&out, "%s: %s\n", label.c_str(),
              kiln::tooling::FormatTensor(actual, options.print_max_elements)
                  .c_str());
    }
    if (expected.empty()) continue;

    kiln::tooling::Tolerance tolerance =
        ToleranceFor(options, actual.element_type);
    kiln::tooling::CompareResult compared =
        kiln::tooling::CompareTensors(expected[j], actual, tolerance, 8);
    if (!compared.type_mismatch.empty()) {
      all_matched = false;
      Appendf(&out, "%s: MISMATCH: %s\n", label.c_str(),
              compared.type_mismatch.c_str());
      continue;
    }
    if (compared.mismatch_count == 0) {
      Appendf(&out, "%s: matched (%s)\n", label.c_str(),
              actual.TypeString().c_str());
      continue;
    }
    all_matched = false;
    Appendf(&out, "%s: MISMATCH: %llu of %llu elements differ (atol=%g, "
            "rtol=%g)\n", label.c_str(),
            (unsigned long long)compared.mismatch_count,
            (unsigned long long)actual.element_count(), tolerance.atol,
            tolerance.rtol);
    for (const auto& mismatch : compared.first_mismatches) {
      Appendf(&out, "%s  at %s: expected %s, got %s\n", prefix.c_str(),
              kiln::tooling::FormatIndices(mismatch.indices).c_str(),
              mismatch.expected.c_str(), mismatch.actual.c_str());
    }
    if (compared.mismatch_count > compared.first_mismatches.size()) {
      Appendf(&out, "%s  ... and %llu more\n", prefix.c_str(),
              (unsigned long long)(compared.mismatch_count -
                                   compared.first_mismatches.size()));
    }
    Appendf(&out, "%s  actual: %s\n", prefix.c_str(),
            kiln::tooling::FormatTensor(actual, 64).c_str());
  }
  if (!expected.empty()) {
    if (!all_matched) {
      return fail("function '" + name +
                  "': outputs do not match the expected values");
    }
    Appendf(&out, "%sall %zu outputs of '%s' matched the expected values\n",
            prefix.c_str(), output_count, name.c_str());
  }
}

// Prints one result: its output, then its error (prefixed with the rank).
void Report(const RankResult& result, int rank) {
  std::fputs(result.out.c_str(), stdout);
  if (result.failed) {
    std::fflush(stdout);
    if (rank >= 0) {
      std::fprintf(stderr, "error: rank %d: %s\n", rank, result.error.c_str());
    } else {
      std::fprintf(stderr, "error: %s\n", result.error.c_str());
    }
  }
}

// Everything a run holds; released in the destructor (group before the
// devices it retains, devices before the instance).
struct Session {
  kiln_instance_t* instance = nullptr;
  std::vector<kiln_device_t*> devices;
  kiln_collective_group_t* group = nullptr;
  ~Session() {
    kiln_collective_group_release(group);
    for (kiln_device_t* device : devices) kiln_device_release(device);
    kiln_instance_release(instance);
  }
};

kiln_status_t CreateInstance(const Options& options, Session* session) {
  std::vector<const char*> plugin_paths;
  for (const std::string& path : options.plugins) {
    plugin_paths.push_back(path.c_str());
  }
  kiln_instance_options_t instance_options = {};
  instance_options.plugin_paths = plugin_paths.data();
  instance_options.plugin_path_count = plugin_paths.size();
  return kiln_instance_create(&instance_options, &session->instance);
}

// Decides the devices of an SPMD function's ranks in this process and the
// first rank. Returns an error message, empty on success.
std::string PlanRanks(const Options& options, const std::string& name,
                      int world, std::vector<std::string>* uris,
                      int* first_rank) {
  const std::string what = "function '" + name + "' is an SPMD program for " +
                           std::to_string(world) + " ranks";
  std::vector<std::string> devices = options.devices;
  if (devices.empty()) devices.push_back("local");
  if (options.world_size > 1) {
    if (options.world_size != world) {
      return what + ", but --world-size (or the launcher) says " +
             std::to_string(options.world_size);
    }
    if (options.rank >= world) {
      return "--rank " + std::to_string(options.rank) +
             " is not a rank of the " + std::to_string(world) + "-rank run";
    }
    if (devices.size() != 1) {
      return "a multi-process run has one rank per process: give one "
             "--device (got " + std::to_string(devices.size()) + ")";
    }
    if (IsLocalUri(devices[0])) {
      return what + " across processes, but the local driver's collectives "
             "only connect devices of one process; run all ranks in one "
             "process (--device=local, no --rank/--world-size) or use a "
             "driver with multi-process collectives (--device=hip://N)";
    }
    if (options.rendezvous.empty()) {
      return "a multi-process run needs --rendezvous=file:DIR or "
             "tcp://HOST:PORT (or MASTER_ADDR/MASTER_PORT)";
    }
    *uris = devices;
    *first_rank = options.rank;
    return "";
  }
  *first_rank = 0;
  uris->clear();
  if (devices.size() == 1 && IsLocalUri(devices[0])) {
    if (devices[0] != "local") {
      const std::string count = devices[0].substr(8);
      if (count != std::to_string(world)) {
        return what + ", but --device=" + devices[0] + " asks for " + count +
               " ranks (use --device=local or --device=local://" +
               std::to_string(world) + ")";
      }
    }
    for (int r = 0; r < world; ++r) {
      uris->push_back("local://" + std::to_string(r));
    }
    return "";
  }
  if (int(devices.size()) != world) {
    return what + ": give --device once per rank (got " +
           std::to_string(devices.size()) + ") or --device=local";
  }
  *uris = devices;
  return "";
}

// Runs an SPMD function on the ranks of this process. Returns the exit code.
int RunSpmd(const Options& options, const std::vector<std::string>& uris,
            int first_rank, int world) {
  // The local driver reads its device count when the instance loads it.
  bool local = false;
  for (const std::string& uri : uris) local = local || IsLocalUri(uri);
  if (local && world > 4 && !std::getenv("KILN_LOCAL_DEVICE_COUNT")) {
    setenv("KILN_LOCAL_DEVICE_COUNT", std::to_string(world).c_str(), 1);
  }
  Session session;
  kiln_status_t status = CreateInstance(options, &session);
  if (!kiln_status_is_ok(status)) return FailStatus(status, "");
  for (const std::string& uri : uris) {
    kiln_device_t* device = nullptr;
    status = kiln_device_create(session.instance, uri.c_str(), &device);
    if (!kiln_status_is_ok(status)) return FailStatus(status, "");
    session.devices.push_back(device);
  }
  kiln_collective_group_params_t params = {};
  params.world_size = world;
  params.first_rank = first_rank;
  params.rendezvous = options.rendezvous.c_str();
  params.rendezvous_timeout_ns =
      int64_t(options.rendezvous_timeout_s * 1e9);
  status = kiln_collective_group_create(session.devices.data(),
                                        session.devices.size(), &params,
                                        &session.group);
  if (!kiln_status_is_ok(status)) return FailStatus(status, "");

  // One thread per rank; the main thread watches for failures. Results
  // live on the heap: if a rank stays blocked the process exits without
  // joining it.
  const int ranks = int(uris.size());
  struct Shared {
    std::mutex mutex;
    std::condition_variable changed;
    int finished = 0;
    int first_failure = -1;
    std::vector<bool> done;
    std::vector<RankResult> results;
    StartGate gate, end_gate;
    explicit Shared(int ranks) : done(size_t(ranks)), results(size_t(ranks)),
                                 gate(ranks), end_gate(ranks) {}
  };
  auto* shared = new Shared(ranks);
  std::vector<std::thread> threads;
  for (int i = 0; i < ranks; ++i) {
    threads.emplace_back([&options, &session, shared, i, first_rank] {
      RankResult& result = shared->results[size_t(i)];
      bool arrived = false, ended = false;
      try {
        Loaded loaded;
        std::string error = LoadFunction(options, session.devices[size_t(i)],
                                         &loaded);
        if (!error.empty()) {
          result.failed = true;
          result.error = error;
        } else {
          arrived = true;  // CallFunction passes the gate
          CallFunction(options, session.devices[size_t(i)], loaded.function,
                       first_rank + i, &shared->gate, &result);
          // The module goes when every rank's calls are done.
          ended = true;
          if (result.failed)
            shared->end_gate.Leave();
          else
            shared->end_gate.Arrive(true);
        }
      } catch (const std::bad_alloc&) {
        result.failed = true;
        result.error = kOutOfMemory;
      }
      if (!arrived) shared->gate.Arrive(false);
      if (!ended) shared->end_gate.Leave();
      std::lock_guard<std::mutex> lock(shared->mutex);
      shared->done[size_t(i)] = true;
      ++shared->finished;
      if (result.failed && shared->first_failure < 0) {
        shared->first_failure = i;
      }
      shared->changed.notify_all();
    });
  }

  std::unique_lock<std::mutex> lock(shared->mutex);
  bool all_finished = shared->changed.wait_for(
      lock, std::chrono::hours(24 * 365), [&] {
        return shared->finished == ranks || shared->first_failure >= 0;
      });
  (void)all_finished;
  if (shared->finished < ranks) {
    shared->changed.wait_for(
        lock, std::chrono::seconds(kRankFailureGraceSeconds),
        [&] { return shared->finished == ranks; });
  }
  if (shared->finished < ranks) {
    // Some rank waits for the failed one in a collective and would wait
    // forever: report what is known and end the process without joining.
    for (int i = 0; i < ranks; ++i) {
      if (shared->done[size_t(i)]) Report(shared->results[size_t(i)],
                                          first_rank + i);
    }
    for (int i = 0; i < ranks; ++i) {
      if (!shared->done[size_t(i)]) {
        std::fprintf(stderr, "error: rank %d: still running %d s after rank "
                     "%d failed (blocked in a collective waiting for it?); "
                     "giving up\n", first_rank + i, kRankFailureGraceSeconds,
                     first_rank + shared->first_failure);
      }
    }
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(1);
  }
  lock.unlock();
  for (std::thread& thread : threads) thread.join();
  bool failed = false;
  for (int i = 0; i < ranks; ++i) {
    Report(shared->results[size_t(i)], first_rank + i);
    failed = failed || shared->results[size_t(i)].failed;
  }
  delete shared;
  return failed ? 1 : 0;
}

int Main(int argc, char** argv) {
  Options options;
  int parsed = ParseOptions(argc, argv, &options);
  if (parsed >= 0) return parsed;
  parsed = ApplyLauncherEnvironment(&options);
  if (parsed >= 0) return parsed;
  if (!options.parameter_files.empty()) {
    kiln_parameters_t* parameters = nullptr;
    kiln_status_t status = kiln_parameters_create(&parameters);
    if (!kiln_status_is_ok(status)) return FailStatus(status, "");
    options.parameters.reset(parameters, kiln_parameters_release);
    for (const std::string& file : options.parameter_files) {
      status = kiln_parameters_add_archive_file(parameters, file.c_str());
      if (!kiln_status_is_ok(status)) return FailStatus(status, "");
    }
  }

  // First load the module on the first device (local://0 for local URIs,
  // whose meaning depends on the function) to learn whether the function is
  // an SPMD program and for how many ranks.
  Session session;
  kiln_status_t status = CreateInstance(options, &session);
  if (!kiln_status_is_ok(status)) return FailStatus(status, "");
  if (options.list_devices) {
    std::string uris(kiln_instance_list_devices(session.instance, nullptr, 0),
                     '\0');
    kiln_instance_list_devices(session.instance, uris.data(), uris.size() + 1);
    std::printf("%s", uris.c_str());
    return 0;
  }
  const std::string first_uri =
      options.devices.empty() ? "local" : options.devices[0];
  const std::string probe_uri = IsLocalUri(first_uri) ? "local://0" : first_uri;
  kiln_device_t* probe = nullptr;
  status = kiln_device_create(session.instance, probe_uri.c_str(), &probe);
  if (!kiln_status_is_ok(status)) return FailStatus(status, "");
  session.devices.push_back(probe);
  Loaded loaded;
  std::string error = LoadFunction(options, probe, &loaded);
  if (!error.empty()) return Fail("%s", error);
  if (options.list_functions) {
    std::printf("%s", FunctionList(loaded.module).c_str());
    return 0;
  }
  const std::string name = kiln_function_name(loaded.function);
  const int world = kiln_function_world_size(loaded.function);

  if (world > 1) {
    std::vector<std::string> uris;
    int first_rank = 0;
    error = PlanRanks(options, name, world, &uris, &first_rank);
    if (!error.empty()) return Fail("%s", error);
    return RunSpmd(options, uris, first_rank, world);
  }

  // An ordinary function: one device, one call.
  if (options.devices.size() > 1) {
    return Fail("function '%s' is not an SPMD program; give one --device",
                name);
  }
  kiln_device_t* device = probe;
  Loaded on_device;
  if (first_uri != probe_uri) {
    status = kiln_device_create(session.instance, first_uri.c_str(), &device);
    if (!kiln_status_is_ok(status)) return FailStatus(status, "");
    session.devices.push_back(device);
    error = LoadFunction(options, device, &on_device);
    if (!error.empty()) return Fail("%s", error);
  }
  RankResult result;
  CallFunction(options, device,
               on_device.function ? on_device.function : loaded.function, -1,
               nullptr, &result);
  Report(result, -1);
  return result.failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Allocations whose size comes from the user are checked where they are
  // made (RESOURCE_EXHAUSTED); this is the last resort for the rest.
  try {
    return Main(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "error: %s\n", kOutOfMemory);
    return 1;
  }
}
