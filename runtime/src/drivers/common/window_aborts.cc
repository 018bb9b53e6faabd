#include "drivers/common/window_aborts.h"

#include <algorithm>

namespace kiln::drivers {

void WindowAborts::add(const std::shared_ptr<uint64_t>& word) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Words of released groups are dropped here, so the list stays as long
  // as the device's live windows.
  words_.erase(std::remove_if(words_.begin(), words_.end(),
                              [](const std::weak_ptr<uint64_t>& w) {
                                return w.expired();
                              }),
               words_.end());
  words_.push_back(word);
}

void WindowAborts::abortAll() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const std::weak_ptr<uint64_t>& weak : words_)
    if (std::shared_ptr<uint64_t> word = weak.lock())
      __atomic_store_n(word.get(), uint64_t{1}, __ATOMIC_RELEASE);
}

}  // namespace kiln::drivers
