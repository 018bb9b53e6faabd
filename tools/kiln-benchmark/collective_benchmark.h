// `kiln-benchmark collective`: times HAL collectives over N devices of one
// process (one thread per rank) and prints nccl-tests-style rows. See
// kCollectiveUsage in collective_benchmark.cc.
#ifndef KILN_TOOLS_KILN_BENCHMARK_COLLECTIVE_BENCHMARK_H_
#define KILN_TOOLS_KILN_BENCHMARK_COLLECTIVE_BENCHMARK_H_

namespace kiln::benchmark {

// argv[0] is "collective". Returns the process exit code.
int RunCollectiveBenchmark(int argc, char** argv);

}  // namespace kiln::benchmark

#endif  // KILN_TOOLS_KILN_BENCHMARK_COLLECTIVE_BENCHMARK_H_
