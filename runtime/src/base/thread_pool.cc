#include "base/thread_pool.h"

#include <atomic>

namespace kiln {

struct ThreadPool::Loop {
  const std::function<bool(uint64_t)>* body = nullptr;
  uint64_t count = 0;
  std::atomic<uint64_t> next{0};
  std::atomic<bool> stop{false};
  // Threads currently running indices of this loop; guarded by the pool
  // mutex. The loop is done when it left the queue and this is zero.
  uint32_t active = 0;
  std::condition_variable done;
};

ThreadPool::ThreadPool(uint32_t workerCount) {
  workers.reserve(workerCount);
  for (uint32_t i = 0; i < workerCount; ++i)
    workers.emplace_back([this] { workerMain(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  for (std::thread& worker : workers) worker.join();
}

void ThreadPool::runIndices(Loop& loop) {
  while (!loop.stop.load(std::memory_order_relaxed)) {
    uint64_t index = loop.next.fetch_add(1, std::memory_order_relaxed);
    if (index >= loop.count) break;
    if (!(*loop.body)(index)) loop.stop.store(true, std::memory_order_relaxed);
  }
}

void ThreadPool::workerMain() {
  std::unique_lock<std::mutex> lock(mutex);
  while (true) {
    wake.wait(lock, [this] { return stopping || !loops.empty(); });
    if (stopping) return;
    std::shared_ptr<Loop> loop = loops.front();
    ++loop->active;
    lock.unlock();
    runIndices(*loop);
    lock.lock();
    // Every index is claimed: take the loop off the queue so no other worker
    // joins it.
    if (!loops.empty() && loops.front() == loop) loops.pop_front();
    if (--loop->active == 0) loop->done.notify_all();
  }
}

void ThreadPool::parallelFor(uint64_t count,
                             const std::function<bool(uint64_t)>& body) {
  if (count == 0) return;
  if (count == 1 || workers.empty()) {
    for (uint64_t i = 0; i < count; ++i)
      if (!body(i)) return;
    return;
  }
  auto loop = std::make_shared<Loop>();
  loop->body = &body;
  loop->count = count;
  {
    std::lock_guard<std::mutex> lock(mutex);
    loops.push_back(loop);
    loop->active = 1;  // the caller
  }
  wake.notify_all();
  runIndices(*loop);
  std::unique_lock<std::mutex> lock(mutex);
  for (auto it = loops.begin(); it != loops.end(); ++it) {
    if (*it == loop) {
      loops.erase(it);
      break;
    }
  }
  --loop->active;
  loop->done.wait(lock, [&] { return loop->active == 0; });
}

}  // namespace kiln
