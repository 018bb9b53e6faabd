#include "collective_benchmark.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <memory>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collective/rendezvous.h"
#include "kiln/hal/hal.h"
#include "tooling/flags.h"

namespace kiln::benchmark {
namespace {

const char kCollectiveUsage[] =
    "usage: kiln-benchmark collective --device=URI [--device=URI ...]\n"
    "           [--ranks=N] [--op=OP] [options]\n"
    "\n"
    "Times a HAL collective over N devices of this process (one thread per\n"
    "rank). For each size, every rank records a reusable command buffer that\n"
    "runs the collective --iters times; the time is host time around one\n"
    "queue execute of it until its semaphore is signalled, divided by\n"
    "--iters (the slowest rank), and with --repeat=R the median of R such\n"
    "executes. Rows follow nccl-tests: algbw = size / time,\n"
    "busbw = algbw * factor (all_reduce 2(n-1)/n; all_gather, reduce_scatter\n"
    "and all_to_all (n-1)/n; broadcast 1).\n"
    "\n"
    "options:\n"
    "  --device=URI       a driver (local, hip: ranks use devices 0..N-1) or\n"
    "                     one device URI per rank (repeat the flag)\n"
    "  --ranks=N          number of ranks (default: the number of --device\n"
    "                     URIs, or 2 for a driver name)\n"
    "  --op=OP            all_reduce (default), all_gather, reduce_scatter,\n"
    "                     all_to_all or broadcast\n"
    "  --dtype=T          i8 i16 i32 i64 u8 u16 u32 u64 f16 bf16 f32 (default)\n"
    "                     f64\n"
    "  --reduction=R      sum (default), prod, min, max or avg\n"
    "  --root=R           broadcast root (default 0)\n"
    "  --min-bytes=B      smallest size (default 8; suffixes K, M, G: 1024^k)\n"
    "  --max-bytes=B      largest size (default 64M)\n"
    "  --step-factor=F    size multiplier between rows (default 2)\n"
    "  --iters=N          timed collectives per size (default 20)\n"
    "  --warmup=N         untimed collectives first (default 5)\n"
    "  --repeat=R         timed executes per size; the row shows the median\n"
    "                     (default 1)\n"
    "  --check            verify each size's result once (before timing)\n"
    "  --reference=memcpy add a column with host memcpy bandwidth of the same\n"
    "                     size (one thread), a reference for CPU devices\n"
    "  --plugin=PATH      load a HAL driver plugin (repeatable; also\n"
    "                     $KILN_HAL_DRIVER_PLUGINS)\n"
    "  --rank=R --world-size=W --rendezvous=URI\n"
    "                     one process per rank (as torch.distributed and\n"
    "                     nccl-tests under MPI run): this process is rank R of\n"
    "                     W on its one --device=URI; the processes meet\n"
    "                     through URI (file:DIR or tcp://HOST:PORT, served by\n"
    "                     rank 0). Each timed execute starts after a one-\n"
    "                     element all_reduce lines the ranks up; the row's\n"
    "                     time is the slowest rank's, #wrong the most of any\n"
    "                     rank; only rank 0 prints rows. Needs a driver\n"
    "                     whose channels cross processes (hip; not local)\n"
    "  --help             show this help\n"
    "\n"
    "size is the bytes of the largest buffer of a rank (all_gather: recv,\n"
    "others: send), count the per-rank send element count.\n";

int Fail(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

std::string TakeMessage(kiln_status_t status) {
  std::string message = kiln_status_message(status);
  kiln_status_free(status);
  return message;
}

struct TypeName {
  const char* name;
  kiln_hal_element_type_t type;
};
const TypeName kTypes[] = {
    {"i8", KILN_HAL_ELEMENT_TYPE_I8},     {"i16", KILN_HAL_ELEMENT_TYPE_I16},
    {"i32", KILN_HAL_ELEMENT_TYPE_I32},   {"i64", KILN_HAL_ELEMENT_TYPE_I64},
    {"u8", KILN_HAL_ELEMENT_TYPE_U8},     {"u16", KILN_HAL_ELEMENT_TYPE_U16},
    {"u32", KILN_HAL_ELEMENT_TYPE_U32},   {"u64", KILN_HAL_ELEMENT_TYPE_U64},
    {"f16", KILN_HAL_ELEMENT_TYPE_F16},   {"bf16", KILN_HAL_ELEMENT_TYPE_BF16},
    {"f32", KILN_HAL_ELEMENT_TYPE_F32},   {"f64", KILN_HAL_ELEMENT_TYPE_F64}};

struct OpName {
  const char* name;
  kiln_hal_collective_kind_t kind;
};
const OpName kOps[] = {{"all_reduce", KILN_HAL_COLLECTIVE_ALL_REDUCE},
                       {"all_gather", KILN_HAL_COLLECTIVE_ALL_GATHER},
                       {"reduce_scatter", KILN_HAL_COLLECTIVE_REDUCE_SCATTER},
                       {"all_to_all", KILN_HAL_COLLECTIVE_ALL_TO_ALL},
                       {"broadcast", KILN_HAL_COLLECTIVE_BROADCAST}};

struct ReductionName {
  const char* name;
  kiln_hal_reduction_t reduction;
};
const ReductionName kReductions[] = {{"sum", KILN_HAL_REDUCTION_SUM},
                                     {"prod", KILN_HAL_REDUCTION_PROD},
                                     {"min", KILN_HAL_REDUCTION_MIN},
                                     {"max", KILN_HAL_REDUCTION_MAX},
                                     {"avg", KILN_HAL_REDUCTION_AVG}};

struct Options {
  std::vector<std::string> devices;
  std::vector<std::string> plugins;
  long ranks = 0;  // 0: from --device
  kiln_hal_collective_kind_t kind = KILN_HAL_COLLECTIVE_ALL_REDUCE;
  const char* opName = "all_reduce";
  kiln_hal_element_type_t type = KILN_HAL_ELEMENT_TYPE_F32;
  const char* typeName = "f32";
  kiln_hal_reduction_t reduction = KILN_HAL_REDUCTION_SUM;
  const char* reductionName = "sum";
  long root = 0;
  uint64_t minBytes = 8;
  uint64_t maxBytes = 64ull << 20;
  double stepFactor = 2;
  long iters = 20;
  long warmup = 5;
  long repeat = 1;
  long rank = -1;       // multi-process: this process's rank
  long worldSize = 0;   // multi-process: ranks of all processes
  std::string rendezvous;
  bool check = false;
  bool memcpyReference = false;
};

bool ParseLong(const std::string& text, long* value) {
  char* end = nullptr;
  errno = 0;
  *value = std::strtol(text.c_str(), &end, 10);
  return !text.empty() && end && *end == '\0' && errno == 0 && *value >= 0;
}

// "64", "4K", "1M", "1G" (powers of 1024).
bool ParseBytes(const std::string& text, uint64_t* value) {
  if (text.empty() || text[0] == '-' || text[0] == '+') return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long number = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str() || errno) return false;
  std::string suffix = end;
  unsigned shift = 0;
  if (suffix == "K" || suffix == "k") shift = 10;
  else if (suffix == "M" || suffix == "m") shift = 20;
  else if (suffix == "G" || suffix == "g") shift = 30;
  else if (!suffix.empty()) return false;
  if (shift && number > (~0ull >> shift)) return false;
  *value = uint64_t(number) << shift;
  return true;
}

// Finds |name| in |table|: its |field| into *out and its name into *outName.
template <typename Entry, size_t N, typename Value>
bool Lookup(const Entry (&table)[N], const std::string& name,
            Value Entry::*field, Value* out, const char** outName) {
  for (const Entry& entry : table) {
    if (name == entry.name) {
      *out = entry.*field;
      *outName = entry.name;
      return true;
    }
  }
  return false;
}

template <typename Table>
std::string Names(const Table& table) {
  std::string names;
  for (const auto& entry : table) names += std::string(names.empty() ? "" : ", ") + entry.name;
  return names;
}

// Returns -1 to go on, or the exit code.
int ParseOptions(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto valueOf = [&](const char* flag, std::string* value) {
      return kiln::tooling::MatchFlagValue(argc, argv, &i, flag, value);
    };
    std::string value;
    if (arg == "--help" || arg == "-h") {
      std::printf("%s", kCollectiveUsage);
      return 0;
    } else if (arg == "--check") {
      options->check = true;
    } else if (valueOf("--device", &value)) {
      options->devices.push_back(value);
    } else if (valueOf("--plugin", &value)) {
      options->plugins.push_back(value);
    } else if (valueOf("--ranks", &value)) {
      if (!ParseLong(value, &options->ranks) || options->ranks < 1)
        return Fail("invalid --ranks '" + value +
                    "' (expected a positive integer)");
    } else if (valueOf("--op", &value)) {
      if (!Lookup(kOps, value, &OpName::kind, &options->kind, &options->opName))
        return Fail("unknown --op '" + value + "' (expected one of " +
                    Names(kOps) + ")");
    } else if (valueOf("--dtype", &value)) {
      if (!Lookup(kTypes, value, &TypeName::type, &options->type, &options->typeName))
        return Fail("unknown --dtype '" + value + "' (expected one of " +
                    Names(kTypes) + ")");
    } else if (valueOf("--reduction", &value)) {
      if (!Lookup(kReductions, value, &ReductionName::reduction,
                  &options->reduction,
                  &options->reductionName))
        return Fail("unknown --reduction '" + value + "' (expected one of " +
                    Names(kReductions) + ")");
    } else if (valueOf("--root", &value)) {
      if (!ParseLong(value, &options->root))
        return Fail("invalid --root '" + value +
                    "' (expected a rank, a non-negative integer)");
    } else if (valueOf("--min-bytes", &value)) {
      if (!ParseBytes(value, &options->minBytes) || options->minBytes == 0)
        return Fail("invalid --min-bytes '" + value +
                    "' (expected a positive size such as 8, 4K, 1M or 1G)");
    } else if (valueOf("--max-bytes", &value)) {
      if (!ParseBytes(value, &options->maxBytes) || options->maxBytes == 0)
        return Fail("invalid --max-bytes '" + value +
                    "' (expected a positive size such as 8, 4K, 1M or 1G)");
    } else if (valueOf("--step-factor", &value)) {
      char* end = nullptr;
      options->stepFactor = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !(options->stepFactor > 1))
        return Fail("invalid --step-factor '" + value +
                    "' (expected a number > 1)");
    } else if (valueOf("--iters", &value)) {
      if (!ParseLong(value, &options->iters) || options->iters < 1)
        return Fail("invalid --iters '" + value +
                    "' (expected a positive integer)");
    } else if (valueOf("--rank", &value)) {
      if (!ParseLong(value, &options->rank))
        return Fail("invalid --rank '" + value +
                    "' (expected a non-negative integer)");
    } else if (valueOf("--world-size", &value)) {
      if (!ParseLong(value, &options->worldSize) || options->worldSize < 2)
        return Fail("invalid --world-size '" + value +
                    "' (expected an integer of at least 2)");
    } else if (valueOf("--rendezvous", &value)) {
      options->rendezvous = value;
    } else if (valueOf("--repeat", &value)) {
      if (!ParseLong(value, &options->repeat) || options->repeat < 1)
        return Fail("invalid --repeat '" + value +
                    "' (expected a positive integer)");
    } else if (valueOf("--warmup", &value)) {
      if (!ParseLong(value, &options->warmup))
        return Fail("invalid --warmup '" + value +
                    "' (expected a non-negative integer)");
    } else if (valueOf("--reference", &value)) {
      if (value != "memcpy")
        return Fail("unknown --reference '" + value + "' (expected memcpy)");
      options->memcpyReference = true;
    } else {
      return Fail("unknown or incomplete option '" + arg + "' (see "
                  "kiln-benchmark collective --help)");
    }
  }
  if (options->devices.empty())
    return Fail("no --device given (e.g. --device=local --ranks=4, or one "
                "--device=URI per rank)");
  if (options->minBytes > options->maxBytes)
    return Fail("--min-bytes (" + std::to_string(options->minBytes) +
                ") is larger than --max-bytes (" +
                std::to_string(options->maxBytes) + ")");
  const bool multiProcess = options->rank >= 0 || options->worldSize ||
                            !options->rendezvous.empty();
  if (multiProcess) {
    if (options->rank < 0 || !options->worldSize || options->rendezvous.empty())
      return Fail("a multi-process run needs --rank, --world-size and "
                  "--rendezvous together");
    if (options->rank >= options->worldSize)
      return Fail("--rank=" + std::to_string(options->rank) +
                  " is not a rank of --world-size=" +
                  std::to_string(options->worldSize));
    if (options->devices.size() != 1 ||
        options->devices[0].find("://") == std::string::npos ||
        (options->ranks && options->ranks != 1))
      return Fail("a multi-process run takes one --device=URI naming this "
                  "rank's device (e.g. --device=hip://" +
                  std::to_string(options->rank) + ")");
    if (options->devices[0].rfind("local", 0) == 0)
      return Fail("--device=" + options->devices[0] +
                  ": the local driver's channels only connect devices of "
                  "one process; run the ranks in one process "
                  "(--device=local --ranks=N) or use a driver whose "
                  "channels cross processes (hip)");
    if (options->kind == KILN_HAL_COLLECTIVE_BROADCAST &&
        options->root >= options->worldSize)
      return Fail("--root=" + std::to_string(options->root) +
                  " is not a rank of " + std::to_string(options->worldSize));
    options->ranks = options->worldSize;
    return -1;
  }
  if (options->devices.size() == 1) {
    const std::string uri = options->devices[0];
    if (uri.find("://") != std::string::npos) {
      if (options->ranks > 1)
        return Fail("--device=" + uri + " names one device but --ranks=" +
                    std::to_string(options->ranks) +
                    ": give a driver name (--device=local) or one --device "
                    "per rank");
    } else {
      long ranks = options->ranks ? options->ranks : 2;
      options->devices.clear();
      for (long r = 0; r < ranks; ++r)
        options->devices.push_back(uri + "://" + std::to_string(r));
    }
  } else if (options->ranks &&
             size_t(options->ranks) != options->devices.size()) {
    return Fail("--ranks=" + std::to_string(options->ranks) + " but " +
                std::to_string(options->devices.size()) +
                " --device flags (give one per rank)");
  }
  options->ranks = long(options->devices.size());
  if (options->ranks < 2)
    return Fail("a collective benchmark needs at least 2 ranks (--ranks)");
  if (options->kind == KILN_HAL_COLLECTIVE_BROADCAST &&
      options->root >= options->ranks)
    return Fail("--root=" + std::to_string(options->root) + " is not a rank of " +
                std::to_string(options->ranks));
  return -1;
}

//===----------------------------------------------------------------------===//
// Element values for --check
//===----------------------------------------------------------------------===//

// Inputs are small integers, (rank + i) % 3, exact in every type.
double InputValue(size_t rank, uint64_t i) { return double((rank + i) % 3); }

void Encode(kiln_hal_element_type_t type, double value, uint8_t* p) {
  float f = float(value);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  switch (type) {
    case KILN_HAL_ELEMENT_TYPE_F16: {
      // Small non-negative integers: exact (bias 15, 10 mantissa bits).
      uint16_t h = 0;
      if (value != 0) {
        int exponent = int((bits >> 23) & 0xFF) - 127 + 15;
        h = uint16_t((exponent << 10) | ((bits >> 13) & 0x3FF));
      }
      std::memcpy(p, &h, 2);
      return;
    }
    case KILN_HAL_ELEMENT_TYPE_BF16: {
      uint16_t h = uint16_t(bits >> 16);
      std::memcpy(p, &h, 2);
      return;
    }
    case KILN_HAL_ELEMENT_TYPE_F32:
      std::memcpy(p, &f, 4);
      return;
    case KILN_HAL_ELEMENT_TYPE_F64:
      std::memcpy(p, &value, 8);
      return;
    default: {
      uint64_t raw = uint64_t(value);
      std::memcpy(p, &raw, kiln_hal_element_type_size(type));
    }
  }
}

double Decode(kiln_hal_element_type_t type, const uint8_t* p) {
  switch (type) {
    case KILN_HAL_ELEMENT_TYPE_F16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      int exponent = (h >> 10) & 0x1F;
      double mantissa = h & 0x3FF;
      double magnitude = exponent == 0 ? std::ldexp(mantissa, -24)
                         : exponent == 31
                             ? INFINITY
                             : std::ldexp(1024 + mantissa, exponent - 25);
      return (h & 0x8000) ? -magnitude : magnitude;
    }
    case KILN_HAL_ELEMENT_TYPE_BF16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      uint32_t bits = uint32_t(h) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case KILN_HAL_ELEMENT_TYPE_F32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case KILN_HAL_ELEMENT_TYPE_F64: {
      double d;
      std::memcpy(&d, p, 8);
      return d;
    }
    default: {
      uint64_t raw = 0;
      size_t size = kiln_hal_element_type_size(type);
      std::memcpy(&raw, p, size);
      if (size < 8) raw &= (uint64_t(1) << (size * 8)) - 1;
      return double(raw);  // inputs and results here are small, >= 0
    }
  }
}

bool IsFloat(kiln_hal_element_type_t type) {
  return type == KILN_HAL_ELEMENT_TYPE_F16 ||
         type == KILN_HAL_ELEMENT_TYPE_BF16 ||
         type == KILN_HAL_ELEMENT_TYPE_F32 || type == KILN_HAL_ELEMENT_TYPE_F64;
}

// The reduction of element |i| over all ranks' inputs. Integer results wrap
// like the device's (only products of many ranks can exceed a small type).
double ReducedValue(const Options& options, uint64_t i) {
  size_t ranks = size_t(options.ranks);
  double acc = InputValue(0, i);
  for (size_t r = 1; r < ranks; ++r) {
    double v = InputValue(r, i);
    switch (options.reduction) {
      case KILN_HAL_REDUCTION_SUM:
      case KILN_HAL_REDUCTION_AVG: acc += v; break;
      case KILN_HAL_REDUCTION_PROD: acc *= v; break;
      case KILN_HAL_REDUCTION_MIN: acc = std::min(acc, v); break;
      case KILN_HAL_REDUCTION_MAX: acc = std::max(acc, v); break;
      case KILN_HAL_REDUCTION_NONE: break;
    }
  }
  if (options.reduction == KILN_HAL_REDUCTION_AVG)
    acc = IsFloat(options.type) ? acc / double(ranks)
                                : std::floor(acc / double(ranks));
  if (!IsFloat(options.type)) {
    size_t bits = kiln_hal_element_type_size(options.type) * 8;
    if (bits < 64) acc = std::fmod(acc, std::ldexp(1.0, int(bits)));
  }
  return acc;
}

// Expected element |i| of rank |rank|'s recv.
double ExpectedValue(const Options& options, size_t rank, uint64_t count,
                     uint64_t i) {
  size_t ranks = size_t(options.ranks);
  switch (options.kind) {
    case KILN_HAL_COLLECTIVE_ALL_REDUCE:
      return ReducedValue(options, i);
    case KILN_HAL_COLLECTIVE_REDUCE_SCATTER:
      return ReducedValue(options, rank * (count / ranks) + i);
    case KILN_HAL_COLLECTIVE_ALL_GATHER:
      return InputValue(i / count, i % count);
    case KILN_HAL_COLLECTIVE_ALL_TO_ALL: {
      uint64_t chunk = count / ranks;
      return InputValue(i / chunk, rank * chunk + i % chunk);
    }
    case KILN_HAL_COLLECTIVE_BROADCAST:
      return InputValue(size_t(options.root), i);
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Ranks
//===----------------------------------------------------------------------===//

// A reusable host barrier for the rank threads that also agrees on success:
// Arrive returns false on every rank when any rank arrived with ok = false.
class HostBarrier {
 public:
  explicit HostBarrier(size_t count) : count(count) {}
  bool Arrive(bool ok) {
    std::unique_lock<std::mutex> lock(mutex);
    uint64_t myGeneration = generation;
    allOk = allOk && ok;
    if (++arrived == count) {
      lastOk = allOk;
      allOk = true;
      arrived = 0;
      ++generation;
      changed.notify_all();
    } else {
      changed.wait(lock, [&] { return generation != myGeneration; });
    }
    return lastOk;
  }

 private:
  const size_t count;
  std::mutex mutex;
  std::condition_variable changed;
  size_t arrived = 0;
  uint64_t generation = 0;
  bool allOk = true;
  bool lastOk = true;
};

// One rank's HAL objects; released on destruction.
struct Rank {
  kiln_hal_device_t* device = nullptr;
  kiln_hal_channel_t* channel = nullptr;
  ~Rank() {
    kiln_hal_channel_release(channel);
    kiln_hal_device_release(device);
  }
};

struct Buffers {
  kiln_hal_buffer_t* send = nullptr;
  kiln_hal_buffer_t* recv = nullptr;
  kiln_hal_buffer_t* staging = nullptr;  // host visible, for data and checks
  kiln_hal_buffer_t* scratch = nullptr;  // multi-process: AlignRanks
  ~Buffers() {
    kiln_hal_buffer_release(send);
    kiln_hal_buffer_release(recv);
    kiln_hal_buffer_release(staging);
    kiln_hal_buffer_release(scratch);
  }
};

constexpr kiln_duration_t kWaitTimeout = 600ll * 1000 * 1000 * 1000;
// How long the processes of a multi-process run wait for each other.
constexpr kiln_duration_t kRendezvousTimeout = 60ll * 1000 * 1000 * 1000;

kiln_status_t Allocate(kiln_hal_device_t* device, kiln_hal_memory_type_t type,
                       uint64_t size, kiln_hal_buffer_t** out) {
  kiln_hal_buffer_params_t params = {};
  params.memory_type = type;
  params.usage = KILN_HAL_BUFFER_USAGE_DEFAULT |
                 KILN_HAL_BUFFER_USAGE_COLLECTIVE |
                 (type & KILN_HAL_MEMORY_TYPE_HOST_VISIBLE
                      ? KILN_HAL_BUFFER_USAGE_MAPPING
                      : 0);
  return kiln_hal_allocator_allocate_buffer(kiln_hal_device_allocator(device),
                                            &params, size ? size : 1, out);
}

// Records |body| into a fresh command buffer of |mode|, runs it and waits,
// |runs| times (more than once needs a reusable |mode|); |seconds|, if
// given, gets the host time of each run. With |start|, every rank meets
// there after recording and before each submit, so that a rank that failed
// (|prior|, or recording) never leaves its peers waiting in a collective:
// then all ranks skip the run. Returns |prior| if set.
//
// |align|, if set, runs before each timed submit (after the start barrier):
// in a multi-process run it lines the processes' ranks up.
template <typename Body>
kiln_status_t RunCommands(kiln_status_t prior, kiln_hal_device_t* device,
                          kiln_hal_command_buffer_mode_t mode, Body body,
                          long runs, std::vector<double>* seconds,
                          HostBarrier* start,
                          const std::function<kiln_status_t()>& align = {}) {
  if (prior) {
    for (long run = 0; start && run < runs; ++run) start->Arrive(false);
    return prior;
  }
  kiln_hal_command_buffer_t* commands = nullptr;
  kiln_status_t status =
      kiln_hal_command_buffer_create(device, mode, 0, &commands);
  if (!status) status = kiln_hal_command_buffer_begin(commands);
  if (!status) status = body(commands);
  if (!status) status = kiln_hal_command_buffer_end(commands);
  kiln_hal_semaphore_t* done = nullptr;
  if (!status) status = kiln_hal_semaphore_create(device, 0, &done);
  for (uint64_t run = 1; run <= uint64_t(runs); ++run) {
    // Every rank recorded (or failed) before any submits its collectives,
    // so that a failed rank never leaves peers waiting in a collective.
    if (start && !start->Arrive(status == nullptr) && !status)
      status = kiln_make_status(KILN_STATUS_ABORTED,
                                "another rank failed to set up");
    if (!status && align) status = align();
    auto begin = std::chrono::steady_clock::now();
    if (!status) {
      kiln_hal_semaphore_list_t signal = {1, &done, &run};
      status = kiln_hal_device_queue_execute(
          device, KILN_HAL_QUEUE_AFFINITY_ANY, nullptr, &signal, 1, &commands,
          nullptr);
    }
    if (!status) status = kiln_hal_semaphore_wait(done, run, kWaitTimeout);
    auto end = std::chrono::steady_clock::now();
    if (seconds)
      seconds->push_back(std::chrono::duration<double>(end - begin).count());
  }
  kiln_hal_semaphore_release(done);
  kiln_hal_command_buffer_release(commands);
  return status;
}

// Lines up the ranks of a multi-process run: a one-element all_reduce on
// |scratch| (4 bytes of device memory) that every rank runs and waits for.
kiln_status_t AlignRanks(const Rank& rank, kiln_hal_buffer_t* scratch) {
  const kiln_hal_collective_op_t op = {KILN_HAL_COLLECTIVE_ALL_REDUCE,
                                       KILN_HAL_REDUCTION_SUM,
                                       KILN_HAL_ELEMENT_TYPE_I32, 1, 0};
  const kiln_hal_buffer_ref_t ref = {scratch, 0, 0, 4};
  return RunCommands(
      nullptr, rank.device, KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT,
      [&](kiln_hal_command_buffer_t* commands) {
        return kiln_hal_command_buffer_collective(commands, rank.channel, &op,
                                                  ref, ref);
      },
      1, nullptr, nullptr);
}

// Replaces |values| by their element-wise maximum over the ranks of
// |rank|'s channel (every rank calls it with as many values).
kiln_status_t MaxOverRanks(const Rank& rank, std::vector<double>* values) {
  const uint64_t bytes = values->size() * sizeof(double);
  Buffers buffers;
  kiln_status_t status = Allocate(rank.device, KILN_HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                  bytes, &buffers.send);
  if (!status)
    status = Allocate(rank.device, KILN_HAL_MEMORY_TYPE_HOST_VISIBLE, bytes,
                      &buffers.staging);
  if (!status)
    status = kiln_hal_buffer_write(buffers.staging, 0, values->data(), bytes);
  const kiln_hal_buffer_ref_t device = {buffers.send, 0, 0, bytes};
  const kiln_hal_buffer_ref_t host = {buffers.staging, 0, 0, bytes};
  const kiln_hal_collective_op_t op = {KILN_HAL_COLLECTIVE_ALL_REDUCE,
                                       KILN_HAL_REDUCTION_MAX,
                                       KILN_HAL_ELEMENT_TYPE_F64,
                                       values->size(), 0};
  status = RunCommands(
      status, rank.device, KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT,
      [&](kiln_hal_command_buffer_t* commands) -> kiln_status_t {
        KILN_RETURN_IF_ERROR(
            kiln_hal_command_buffer_copy_buffer(commands, host, device));
        KILN_RETURN_IF_ERROR(kiln_hal_command_buffer_execution_barrier(commands));
        KILN_RETURN_IF_ERROR(kiln_hal_command_buffer_collective(
            commands, rank.channel, &op, device, device));
        KILN_RETURN_IF_ERROR(kiln_hal_command_buffer_execution_barrier(commands));
        return kiln_hal_command_buffer_copy_buffer(commands, device, host);
      },
      1, nullptr, nullptr);
  if (!status)
    status = kiln_hal_buffer_read(buffers.staging, 0, values->data(), bytes);
  return status;
}

struct SizeResult {
  std::vector<double> seconds;  // host time of each timed execute
  uint64_t wrong = 0;
};

// One rank's part of one size: stage inputs, optionally check once, warm up
// and time. |barrier| keeps the ranks in step.
kiln_status_t RunRankSize(const Options& options, Rank& rank, size_t index,
                          uint64_t count, HostBarrier& barrier,
                          SizeResult* result) {
  const size_t ranks = size_t(options.ranks);
  const uint64_t elementSize = kiln_hal_element_type_size(options.type);
  const uint64_t sendBytes = count * elementSize;
  uint64_t recvBytes = sendBytes;
  if (options.kind == KILN_HAL_COLLECTIVE_ALL_GATHER) recvBytes *= ranks;
  if (options.kind == KILN_HAL_COLLECTIVE_REDUCE_SCATTER) recvBytes /= ranks;
  const kiln_hal_collective_op_t op = {options.kind, options.reduction,
                                       options.type, count,
                                       int32_t(options.root)};
  Buffers buffers;
  kiln_status_t status = Allocate(rank.device, KILN_HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                  sendBytes, &buffers.send);
  if (!status)
    status = Allocate(rank.device, KILN_HAL_MEMORY_TYPE_DEVICE_LOCAL,
                      recvBytes, &buffers.recv);
  if (!status)
    status = Allocate(rank.device, KILN_HAL_MEMORY_TYPE_HOST_VISIBLE,
                      std::max(sendBytes, recvBytes), &buffers.staging);
  if (!status) {
    std::vector<uint8_t> input(static_cast<size_t>(sendBytes));
    for (uint64_t i = 0; i < count; ++i)
      Encode(options.type, InputValue(index, i), input.data() + i * elementSize);
    status = kiln_hal_buffer_write(buffers.staging, 0, input.data(), sendBytes);
  }
  const kiln_hal_buffer_ref_t send = {buffers.send, 0, 0, sendBytes};
  const kiln_hal_buffer_ref_t recv = {buffers.recv, 0, 0, recvBytes};
  // Stage the inputs and, with --check, run the collective once and copy
  // the result back.
  status = RunCommands(
      status, rank.device, KILN_HAL_COMMAND_BUFFER_MODE_ONE_SHOT,
      [&](kiln_hal_command_buffer_t* commands) -> kiln_status_t {
        KILN_RETURN_IF_ERROR(kiln_hal_command_buffer_copy_buffer(
            commands, {buffers.staging, 0, 0, sendBytes}, send));
        if (!options.check) return nullptr;
        KILN_RETURN_IF_ERROR(kiln_hal_command_buffer_execution_barrier(commands));
        KILN_RETURN_IF_ERROR(kiln_hal_command_buffer_collective(
            commands, rank.channel, &op, send, recv));
        KILN_RETURN_IF_ERROR(kiln_hal_command_buffer_execution_barrier(commands));
        return kiln_hal_command_buffer_copy_buffer(
            commands, recv, {buffers.staging, 0, 0, recvBytes});
      },
      1, nullptr, &barrier);
  if (!status && options.check) {
    std::vector<uint8_t> output(static_cast<size_t>(recvBytes));
    status = kiln_hal_buffer_read(buffers.staging, 0, output.data(), recvBytes);
    double rtol = options.type == KILN_HAL_ELEMENT_TYPE_BF16  ? 1e-2
                  : options.type == KILN_HAL_ELEMENT_TYPE_F16 ? 2e-3
                  : options.type == KILN_HAL_ELEMENT_TYPE_F32 ? 1e-6
                                                              : 0;
    for (uint64_t i = 0; !status && i < recvBytes / elementSize; ++i) {
      double expected = ExpectedValue(options, index, count, i);
      double got = Decode(options.type, output.data() + i * elementSize);
      if (!(std::fabs(got - expected) <= rtol * std::fabs(expected)))
        ++result->wrong;
    }
  }
  // Warm up and time: each a reusable command buffer of collectives.
  auto collectives = [&](long n) {
    return [&, n](kiln_hal_command_buffer_t* commands) -> kiln_status_t {
      for (long i = 0; i < n; ++i) {
        if (i) KILN_RETURN_IF_ERROR(
                   kiln_hal_command_buffer_execution_barrier(commands));
        KILN_RETURN_IF_ERROR(kiln_hal_command_buffer_collective(
            commands, rank.channel, &op, send, recv));
      }
      return nullptr;
    };
  };
  if (options.warmup > 0)
    status = RunCommands(status, rank.device,
                         KILN_HAL_COMMAND_BUFFER_MODE_REUSABLE,
                         collectives(options.warmup), 1, nullptr, &barrier);
  std::function<kiln_status_t()> align;
  if (options.rank >= 0) {
    if (!status)
      status = Allocate(rank.device, KILN_HAL_MEMORY_TYPE_DEVICE_LOCAL, 4,
                        &buffers.scratch);
    align = [&] { return AlignRanks(rank, buffers.scratch); };
  }
  return RunCommands(status, rank.device, KILN_HAL_COMMAND_BUFFER_MODE_REUSABLE,
                     collectives(options.iters), options.repeat,
                     &result->seconds, &barrier, align);
}

// Host memcpy bandwidth of |bytes| (GB/s), the best of |iters| copies.
double MemcpyBandwidth(uint64_t bytes, long iters) {
  std::vector<uint8_t> source(size_t(bytes), 1), target(size_t(bytes), 0);
  double best = 0;
  for (long i = 0; i < iters + 1; ++i) {
    auto begin = std::chrono::steady_clock::now();
    std::memcpy(target.data(), source.data(), size_t(bytes));
    auto end = std::chrono::steady_clock::now();
    double seconds = std::chrono::duration<double>(end - begin).count();
    // The first copy faults the pages in; it is a warm-up.
    if (i > 0 && seconds > 0) best = std::max(best, double(bytes) / seconds / 1e9);
    source[size_t(i) % source.size()] ^= uint8_t(target[0]);
  }
  return best;
}

double BusFactor(kiln_hal_collective_kind_t kind, double n) {
  switch (kind) {
    case KILN_HAL_COLLECTIVE_ALL_REDUCE: return 2 * (n - 1) / n;
    case KILN_HAL_COLLECTIVE_BROADCAST: return 1;
    default: return (n - 1) / n;
  }
}

// Per-rank send count for a row of about |bytes| (the largest buffer),
// rounded down to what the op allows; 0 if none.
uint64_t CountFor(const Options& options, uint64_t bytes) {
  uint64_t elementSize = kiln_hal_element_type_size(options.type);
  uint64_t ranks = uint64_t(options.ranks);
  uint64_t count = bytes / elementSize;
  switch (options.kind) {
    case KILN_HAL_COLLECTIVE_ALL_GATHER: return count / ranks;
    case KILN_HAL_COLLECTIVE_REDUCE_SCATTER:
    case KILN_HAL_COLLECTIVE_ALL_TO_ALL: return count / ranks * ranks;
    default: return count;
  }
}

}  // namespace

int RunCollectiveBenchmark(int argc, char** argv) {
  Options options;
  int parsed = ParseOptions(argc, argv, &options);
  if (parsed >= 0) return parsed;
  // |ranks| counts the ranks of all processes; this process runs
  // |localRanks| of them from |firstRank| on (all of them, from 0, unless
  // --rank is given).
  const size_t ranks = size_t(options.ranks);
  const bool multiProcess = options.rank >= 0;
  const size_t localRanks = options.devices.size();
  const size_t firstRank = multiProcess ? size_t(options.rank) : 0;
  const bool printer = firstRank == 0;  // the process of rank 0 prints rows

  kiln_hal_driver_registry_t* registry = nullptr;
  kiln_status_t status = kiln_hal_driver_registry_create(&registry);
  if (!status) status = kiln_hal_driver_registry_register_builtin_drivers(registry);
  if (!status) status = kiln_hal_driver_registry_load_plugins_from_env(registry);
  for (const std::string& plugin : options.plugins)
    if (!status) status = kiln_hal_driver_registry_load_plugin(registry, plugin.c_str());
  std::vector<Rank> rankObjects(localRanks);
  for (size_t r = 0; r < localRanks && !status; ++r) {
    status = kiln_hal_driver_registry_create_device(
        registry, options.devices[r].c_str(), &rankObjects[r].device);
    if (status)
      status = kiln_status_annotate(status, "rank %zu (--device=%s)",
                                    firstRank + r, options.devices[r].c_str());
  }
  if (status) {
    kiln_hal_driver_registry_release(registry);
    return Fail(TakeMessage(status));
  }
  // The channel id: made by rank 0's device; in a multi-process run
  // handed to the other processes through the rendezvous.
  std::string id;
  if (!status && firstRank == 0) {
    id.resize(KILN_HAL_CHANNEL_ID_MAX_LENGTH);
    size_t idLength = 0;
    status = kiln_hal_channel_id_create(
        rankObjects[0].device, reinterpret_cast<uint8_t*>(&id[0]), id.size(),
        &idLength);
    id.resize(idLength);
  }
  std::unique_ptr<kiln::collective::Rendezvous> store;
  if (!status && multiProcess) {
    kiln_time_t deadline = kiln_deadline_from_timeout(kRendezvousTimeout);
    status = kiln::collective::OpenRendezvous(options.rendezvous,
                                              firstRank == 0, deadline, &store);
    if (!status)
      status = kiln::collective::ExchangeChannelId(
          store.get(), int32_t(firstRank), int32_t(localRanks),
          int32_t(ranks), deadline, &id);
    if (status)
      status = kiln_status_annotate(status, "rank %zu meeting the others at "
                                    "--rendezvous=%s", firstRank,
                                    options.rendezvous.c_str());
  }
  // Channels: joining may block until every rank joined, so one thread per
  // rank.
  std::vector<kiln_status_t> statuses(localRanks, nullptr);
  if (!status) {
    std::vector<std::thread> threads;
    for (size_t r = 0; r < localRanks; ++r)
      threads.emplace_back([&, r] {
        kiln_hal_channel_params_t params = {
            int32_t(firstRank + r), int32_t(ranks),
            reinterpret_cast<const uint8_t*>(id.data()), id.size()};
        statuses[r] = kiln_hal_channel_create(rankObjects[r].device, &params,
                                              &rankObjects[r].channel);
      });
    for (std::thread& thread : threads) thread.join();
    for (size_t r = 0; r < localRanks; ++r) {
      if (!status && statuses[r])
        status = kiln_status_annotate(statuses[r], "creating the channel of "
                                      "rank %zu", firstRank + r);
      else kiln_status_free(statuses[r]);
    }
  }
  if (status) {
    rankObjects.clear();
    kiln_hal_driver_registry_release(registry);
    return Fail(TakeMessage(status));
  }

  std::string deviceList;
  for (const std::string& uri : options.devices) deviceList += " " + uri;
  if (multiProcess)
    deviceList = " one process per rank; rank 0 on" + deviceList;
  if (printer) {
    std::printf("# kiln-benchmark collective: %s %s %s on %zu ranks (%s), "
                "iters %ld, warmup %ld, median of %ld\n",
                options.opName, options.typeName,
                options.kind == KILN_HAL_COLLECTIVE_ALL_REDUCE ||
                        options.kind == KILN_HAL_COLLECTIVE_REDUCE_SCATTER
                    ? options.reductionName
                    : "", ranks, deviceList.c_str() + 1, options.iters,
                options.warmup, options.repeat);
    std::printf("#%11s %12s %6s %10s %9s %9s%s%s\n", "size", "count", "type",
                "time", "algbw", "busbw", options.check ? "   #wrong" : "",
                options.memcpyReference ? "  memcpy" : "");
    std::printf("#%11s %12s %6s %10s %9s %9s%s%s\n", "(B)", "(elements)", "",
                "(us)", "(GB/s)", "(GB/s)", options.check ? "" : "",
                options.memcpyReference ? "  (GB/s)" : "");
  }
  int exitCode = 0;
  double busSum = 0;
  int rows = 0;
  uint64_t lastBytes = 0;
  for (double target = double(options.minBytes);
       target <= double(options.maxBytes) * (1 + 1e-9);
       target *= options.stepFactor) {
    uint64_t count = CountFor(options, uint64_t(target));
    if (count == 0) continue;
    uint64_t elementSize = kiln_hal_element_type_size(options.type);
    uint64_t bytes = count * elementSize *
                     (options.kind == KILN_HAL_COLLECTIVE_ALL_GATHER ? ranks : 1);
    if (bytes == lastBytes) continue;  // rounding gave the previous row
    lastBytes = bytes;
    HostBarrier barrier(localRanks);
    std::vector<SizeResult> results(localRanks);
    std::vector<std::thread> threads;
    for (size_t r = 0; r < localRanks; ++r)
      threads.emplace_back([&, r] {
        statuses[r] = RunRankSize(options, rankObjects[r], firstRank + r,
                                  count, barrier, &results[r]);
      });
    for (std::thread& thread : threads) thread.join();
    for (size_t r = 0; r < localRanks; ++r) {
      if (!status && statuses[r])
        status = kiln_status_annotate(statuses[r], "rank %zu, %llu bytes",
                                      firstRank + r, (unsigned long long)bytes);
      else kiln_status_free(statuses[r]);
    }
    if (status) break;
    // Each execute's time is its slowest rank's; the row takes the median.
    std::vector<double> runs(size_t(options.repeat), 0.0);
    uint64_t wrong = 0;
    for (const SizeResult& result : results) {
      for (size_t i = 0; i < runs.size() && i < result.seconds.size(); ++i)
        runs[i] = std::max(runs[i], result.seconds[i]);
      wrong += result.wrong;
    }
    if (multiProcess) {
      // The other processes' ranks: the slowest time of each execute, and
      // the most wrong elements of any rank.
      runs.push_back(double(wrong));
      status = MaxOverRanks(rankObjects[0], &runs);
      if (status) {
        status = kiln_status_annotate(status, "rank %zu, %llu bytes: "
                                      "gathering the ranks' times", firstRank,
                                      (unsigned long long)bytes);
        break;
      }
      wrong = uint64_t(runs.back());
      runs.pop_back();
    }
    std::sort(runs.begin(), runs.end());
    double seconds = runs.size() % 2
                         ? runs[runs.size() / 2]
                         : (runs[runs.size() / 2 - 1] + runs[runs.size() / 2]) / 2;
    double perIter = seconds / double(options.iters);
    double algbw = double(bytes) / perIter / 1e9;
    double busbw = algbw * BusFactor(options.kind, double(ranks));
    if (printer) {
      std::printf("%12llu %12llu %6s %10.2f %9.3f %9.3f",
                  (unsigned long long)bytes, (unsigned long long)count,
                  options.typeName, perIter * 1e6, algbw, busbw);
      if (options.check) std::printf(" %8llu", (unsigned long long)wrong);
      if (options.memcpyReference)
        std::printf(" %7.3f", MemcpyBandwidth(bytes, options.iters));
      std::printf("\n");
      std::fflush(stdout);
    }
    busSum += busbw;
    ++rows;
    if (wrong) exitCode = 1;
  }
  rankObjects.clear();
  kiln_hal_driver_registry_release(registry);
  if (status) return Fail(TakeMessage(status));
  if (rows == 0)
    return Fail("no size in [--min-bytes, --max-bytes] holds a whole " +
                std::string(options.opName) + " of " + options.typeName +
                " over " + std::to_string(ranks) + " ranks");
  if (printer)
    std::printf("# Avg bus bandwidth    : %.3f GB/s\n", busSum / rows);
  if (exitCode) std::fprintf(stderr, "error: --check found wrong results\n");
  return exitCode;
}

}  // namespace kiln::benchmark
