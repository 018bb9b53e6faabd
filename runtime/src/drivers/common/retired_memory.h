// Memory that other processes or devices may still map after its owner let
// it go: a symmetric window's memory over a cross-process channel, which a
// peer can still be reading when its owner releases its window.
//
// Each entry says when it is safe to free (every rank that mapped it has
// said it closed its mapping); until then it is kept here. Retiring an
// entry frees it at once when that is already so, and frees earlier
// entries whose peers have closed them since. When the owner (a device) is
// going, drain() frees everything, waiting a bounded time for the peers: a
// peer process that died closes nothing, and its mappings went with it.
// Thread-safe.
#ifndef KILN_DRIVERS_COMMON_RETIRED_MEMORY_H_
#define KILN_DRIVERS_COMMON_RETIRED_MEMORY_H_

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace kiln::drivers {

class RetiredMemory {
public:
  // What is kept: destroying it frees the memory.
  class Entry {
  public:
    virtual ~Entry() = default;
    // Whether no peer maps the memory any more.
    virtual bool closedByAll() const = 0;
  };

  // Keeps |entry| until it is closed by all (frees it now if it is), and
  // frees the earlier entries that are closed by all by now. After drain(),
  // frees |entry| at once.
  void retire(std::shared_ptr<Entry> entry);

  // Frees every entry, waiting up to |wait| in all for each to be closed
  // by all; |forced| is called for each entry freed before it was (to
  // report it). Later retirements free at once. Returns how many were.
  size_t drain(std::chrono::milliseconds wait,
               const std::function<void(const Entry &)> &forced = nullptr);

  // Entries kept now.
  size_t size() const;

private:
  void sweepLocked();

  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<Entry>> entries_;
  bool drained_ = false;
};

} // namespace kiln::drivers

#endif // KILN_DRIVERS_COMMON_RETIRED_MEMORY_H_
