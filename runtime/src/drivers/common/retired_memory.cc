#include "drivers/common/retired_memory.h"

#include <algorithm>
#include <thread>

namespace kiln::drivers {

void RetiredMemory::sweepLocked() {
  entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                [](const std::shared_ptr<Entry> &entry) {
                                  return entry->closedByAll();
                                }),
                 entries_.end());
}

void RetiredMemory::retire(std::shared_ptr<Entry> entry) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!drained_ && !entry->closedByAll())
    entries_.push_back(entry);
  entry.reset(); // freed here unless kept above
  sweepLocked();
}

size_t RetiredMemory::drain(std::chrono::milliseconds wait,
                            const std::function<void(const Entry &)> &forced) {
  std::vector<std::shared_ptr<Entry>> entries;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    drained_ = true;
    entries.swap(entries_);
  }
  auto deadline = std::chrono::steady_clock::now() + wait;
  size_t count = 0;
  for (std::shared_ptr<Entry> &entry : entries) {
    while (!entry->closedByAll() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!entry->closedByAll()) {
      ++count;
      if (forced)
        forced(*entry);
    }
    entry.reset();
  }
  return count;
}

size_t RetiredMemory::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

} // namespace kiln::drivers
