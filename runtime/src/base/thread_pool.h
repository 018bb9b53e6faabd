// A fixed set of worker threads that run parallel loops (the local driver
// runs the workgroups of a dispatch with it).
//
// Thread-safe: any number of threads may call parallelFor concurrently; their
// loops share the workers (each caller also works on its own loop, so a loop
// always makes progress even when every worker is busy elsewhere).
#ifndef KILN_BASE_THREAD_POOL_H_
#define KILN_BASE_THREAD_POOL_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln {

class ThreadPool {
 public:
  // Starts |workerCount| threads (0 is valid: loops then run on the caller).
  explicit ThreadPool(uint32_t workerCount);
  // Joins the workers. No parallelFor may be running.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  uint32_t workerCount() const { return uint32_t(workers.size()); }

  // Calls body(i) for every i in [0, count), from the caller and the workers
  // concurrently, and returns when all calls returned. If a call returns
  // false, indices not yet started are skipped (used to stop a dispatch at
  // the first failing workgroup).
  void parallelFor(uint64_t count, const std::function<bool(uint64_t)>& body);

 private:
  struct Loop;
  void workerMain();
  static void runIndices(Loop& loop);

  std::mutex mutex;
  std::condition_variable wake;
  std::deque<std::shared_ptr<Loop>> loops;  // loops with unclaimed indices
  bool stopping = false;
  std::vector<std::thread> workers;
};

}  // namespace kiln

#endif  // KILN_BASE_THREAD_POOL_H_
