// Host cost of a tiny synchronous CUDA call after a kernel of D ms, with no
// Kiln code in the process: the CUDA driver API alone (libcuda through
// dlopen; two kernels in PTX, JIT-compiled by the driver).
//
// For each D in the list, each round: launch a kernel that spins for D ms
// (on %globaltimer) and wait for it, either polling its event
// (cuEventQuery + sched_yield, as Kiln's waits and torch's synchronize do)
// or sleeping until 0.2 ms before its end and then polling; then time one
// synchronous call of an empty kernel: cuLaunchKernel, cuEventRecord, and
// polling the event until it is done. Prints the medians over the rounds,
// in us. If the call after a long kernel costs more than after a short one
// in this program, the cost belongs to the driver and the platform, not to
// any runtime above them (issue 11: docs/performance.md, "Session 18").
//
//   here:  c++ -O2 -o carry/X/driver_latency benchmarks/gpu/driver_latency.cc -ldl
//   GPU:   carry/X/driver_latency [--rounds=N] [--graph] [--spinners=K]
//          [D_MS ...]
#include <dlfcn.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

using CUresult = int;
using Handle = void*;

struct Cuda {
  CUresult (*init)(unsigned);
  CUresult (*deviceGet)(int*, int);
  CUresult (*primaryCtxRetain)(Handle*, int);
  CUresult (*ctxSetCurrent)(Handle);
  CUresult (*moduleLoadData)(Handle*, const void*);
  CUresult (*moduleGetFunction)(Handle*, Handle, const char*);
  CUresult (*streamCreate)(Handle*, unsigned);
  CUresult (*eventCreate)(Handle*, unsigned);
  CUresult (*eventRecord)(Handle, Handle);
  CUresult (*eventQuery)(Handle);
  CUresult (*launchKernel)(Handle, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, Handle, void**,
                           void**);
  CUresult (*streamBeginCapture)(Handle, int);
  CUresult (*streamEndCapture)(Handle, Handle*);
  CUresult (*graphInstantiate)(Handle*, Handle, unsigned long long);
  CUresult (*graphLaunch)(Handle, Handle);
};

constexpr CUresult kNotReady = 600;  // CUDA_ERROR_NOT_READY

const char kPtx[] = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry spin(.param .u64 ns) {
  .reg .u64 %rd<5>;
  .reg .pred %p;
  ld.param.u64 %rd1, [ns];
  mov.u64 %rd2, %globaltimer;
LOOP:
  mov.u64 %rd3, %globaltimer;
  sub.u64 %rd4, %rd3, %rd2;
  setp.lt.u64 %p, %rd4, %rd1;
  @%p bra LOOP;
  ret;
}
.visible .entry empty() { ret; }
)";

template <typename F>
void resolve(void* library, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(library, name));
  if (!*out) {
    std::fprintf(stderr, "driver_latency: libcuda lacks %s\n", name);
    std::exit(2);
  }
}

void check(CUresult result, const char* what) {
  if (result != 0) {
    std::fprintf(stderr, "driver_latency: %s failed (CUresult %d)\n", what,
                 result);
    std::exit(1);
  }
}

using Clock = std::chrono::steady_clock;

double usSince(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start)
      .count();
}

// What a poll does meanwhile, every |everyUs| if nonzero: launch |kernel|
// on |stream|, or record |event| there.
struct Warming {
  int everyUs = 0;
  Handle kernel = nullptr;
  Handle event = nullptr;
  Handle stream = nullptr;
};

// Polls |event| until it is done, warming as |warming| says meanwhile.
void poll(const Cuda& cu, Handle event, const Warming& warming = {}) {
  CUresult result;
  auto last = Clock::now();
  while ((result = cu.eventQuery(event)) == kNotReady) {
    if (warming.everyUs && usSince(last) >= warming.everyUs) {
      check(warming.event
                ? cu.eventRecord(warming.event, warming.stream)
                : cu.launchKernel(warming.kernel, 1, 1, 1, 1, 1, 1, 0,
                                  warming.stream, nullptr, nullptr),
            "warming");
      last = Clock::now();
    }
    sched_yield();
  }
  check(result, "cuEventQuery");
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 30, spinners = 0, warmEveryUs = 0;
  bool warmWithEvents = false;
  unsigned spinBlocks = 1, spinThreads = 1;
  bool graph = false;
  std::vector<double> durationsMs;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--rounds=", 0) == 0) {
      rounds = std::atoi(arg.c_str() + 9);
    } else if (arg.rfind("--spinners=", 0) == 0) {
      spinners = std::atoi(arg.c_str() + 11);
    } else if (arg.rfind("--warm-every-us=", 0) == 0) {
      warmEveryUs = std::atoi(arg.c_str() + 16);
    } else if (arg.rfind("--spin-grid=", 0) == 0) {
      if (std::sscanf(arg.c_str() + 12, "%ux%u", &spinBlocks, &spinThreads) !=
              2 ||
          !spinBlocks || !spinThreads)
        rounds = 0;
    } else if (arg == "--warm-with-events") {
      warmWithEvents = true;
    } else if (arg == "--graph") {
      graph = true;
    } else if (!arg.empty() && (std::isdigit((unsigned char)arg[0]) || arg[0] == '.')) {
      durationsMs.push_back(std::atof(arg.c_str()));
    } else {
      rounds = 0;
      break;
    }
  }
  if (durationsMs.empty()) durationsMs = {0.0, 0.05, 0.5, 2.0, 10.0, 25.0};
  if (rounds < 1 || spinners < 0 || warmEveryUs < 0) {
    std::fprintf(stderr,
                 "usage: driver_latency [--rounds=N] [--graph] "
                 "[--spinners=K] [--warm-every-us=N [--warm-with-events]] "
                 "[--spin-grid=BxT] [D_MS ...]\n"
                 "  --graph: the timed call launches a CUDA graph of the "
                 "empty kernel\n"
                 "  --spinners=K: K more threads call sched_yield in a loop "
                 "throughout (as a runtime's idle queue threads may)\n"
                 "  --warm-every-us=N: while polling for the long kernel, "
                 "launch the empty kernel on a second stream every N us\n"
                 "  --warm-with-events: record an event there instead\n"
                 "  --spin-grid=BxT: the long kernel's blocks and threads per "
                 "block (1x1; 1056x256 fills an H200's 132 SMs)\n");
    return 2;
  }

  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    std::fprintf(stderr, "driver_latency: %s\n", dlerror());
    return 2;
  }
  Cuda cu;
  resolve(library, "cuInit", &cu.init);
  resolve(library, "cuDeviceGet", &cu.deviceGet);
  resolve(library, "cuDevicePrimaryCtxRetain", &cu.primaryCtxRetain);
  resolve(library, "cuCtxSetCurrent", &cu.ctxSetCurrent);
  resolve(library, "cuModuleLoadData", &cu.moduleLoadData);
  resolve(library, "cuModuleGetFunction", &cu.moduleGetFunction);
  resolve(library, "cuStreamCreate", &cu.streamCreate);
  resolve(library, "cuEventCreate", &cu.eventCreate);
  resolve(library, "cuEventRecord", &cu.eventRecord);
  resolve(library, "cuEventQuery", &cu.eventQuery);
  resolve(library, "cuLaunchKernel", &cu.launchKernel);
  resolve(library, "cuStreamBeginCapture_v2", &cu.streamBeginCapture);
  resolve(library, "cuStreamEndCapture", &cu.streamEndCapture);
  resolve(library, "cuGraphInstantiateWithFlags", &cu.graphInstantiate);
  resolve(library, "cuGraphLaunch", &cu.graphLaunch);

  check(cu.init(0), "cuInit");
  int device = 0;
  check(cu.deviceGet(&device, 0), "cuDeviceGet");
  Handle context = nullptr;
  check(cu.primaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  check(cu.ctxSetCurrent(context), "cuCtxSetCurrent");
  Handle module = nullptr, spin = nullptr, empty = nullptr;
  check(cu.moduleLoadData(&module, kPtx), "cuModuleLoadData");
  check(cu.moduleGetFunction(&spin, module, "spin"), "cuModuleGetFunction");
  check(cu.moduleGetFunction(&empty, module, "empty"), "cuModuleGetFunction");
  Handle stream = nullptr, warmStream = nullptr, longDone = nullptr,
         shortDone = nullptr;
  check(cu.streamCreate(&stream, 1 /*CU_STREAM_NON_BLOCKING*/),
        "cuStreamCreate");
  check(cu.streamCreate(&warmStream, 1), "cuStreamCreate");
  Warming warming;
  warming.everyUs = warmEveryUs;
  warming.kernel = empty;
  warming.stream = warmStream;
  if (warmWithEvents)
    check(cu.eventCreate(&warming.event, 2), "cuEventCreate");
  check(cu.eventCreate(&longDone, 2 /*CU_EVENT_DISABLE_TIMING*/),
        "cuEventCreate");
  check(cu.eventCreate(&shortDone, 2), "cuEventCreate");

  Handle exec = nullptr;
  if (graph) {
    Handle captured = nullptr;
    check(cu.streamBeginCapture(stream, 2 /*THREAD_LOCAL*/),
          "cuStreamBeginCapture");
    check(cu.launchKernel(empty, 1, 1, 1, 1, 1, 1, 0, stream, nullptr,
                          nullptr),
          "cuLaunchKernel(empty)");
    check(cu.streamEndCapture(stream, &captured), "cuStreamEndCapture");
    check(cu.graphInstantiate(&exec, captured, 0), "cuGraphInstantiate");
  }
  std::atomic<bool> stop{false};
  std::vector<std::thread> spinning;
  for (int i = 0; i < spinners; ++i)
    spinning.emplace_back([&stop] {
      while (!stop.load(std::memory_order_relaxed)) sched_yield();
    });

  std::printf(
      "timed call: %s; %d spinning threads; %d rounds; warming every %d us "
      "(%s)\n",
      graph ? "cuGraphLaunch" : "cuLaunchKernel", spinners, rounds,
      warmEveryUs, warmWithEvents ? "event records" : "kernel launches");
  std::printf("%-9s %-6s %12s %12s %12s\n", "D (ms)", "wait", "call (us)",
              "launch (us)", "record (us)");
  for (int sleeping = 0; sleeping < 2; ++sleeping) {
    for (double ms : durationsMs) {
      unsigned long long ns = (unsigned long long)(ms * 1e6);
      void* spinArgs[] = {&ns};
      std::vector<double> call, launch, record;
      for (int round = -3; round < rounds; ++round) {  // 3 untimed rounds
        auto start = Clock::now();
        check(cu.launchKernel(spin, spinBlocks, 1, 1, spinThreads, 1, 1, 0,
                              stream, spinArgs, nullptr),
              "cuLaunchKernel(spin)");
        check(cu.eventRecord(longDone, stream), "cuEventRecord");
        if (sleeping && ms > 0.3) {
          double left = ms * 1e3 - 200.0 - usSince(start);
          if (left > 0)
            std::this_thread::sleep_for(
                std::chrono::microseconds((long long)left));
        }
        poll(cu, longDone, warming);

        auto t0 = Clock::now();
        check(graph ? cu.graphLaunch(exec, stream)
                    : cu.launchKernel(empty, 1, 1, 1, 1, 1, 1, 0, stream,
                                      nullptr, nullptr),
              "launch(empty)");
        double launched = usSince(t0);
        auto t1 = Clock::now();
        check(cu.eventRecord(shortDone, stream), "cuEventRecord");
        double recorded = usSince(t1);
        poll(cu, shortDone);
        double total = usSince(t0);
        if (round < 0) continue;
        call.push_back(total);
        launch.push_back(launched);
        record.push_back(recorded);
      }
      std::printf("%-9g %-6s %12.1f %12.1f %12.1f\n", ms,
                  sleeping ? "sleep" : "poll", median(call), median(launch),
                  median(record));
      std::fflush(stdout);
    }
  }
  stop = true;
  for (std::thread& thread : spinning) thread.join();
  return 0;
}
