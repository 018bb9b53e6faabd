// The abort words of the symmetric windows that a device's ranks belong to.
//
// A compiled collective's kernel waits for its peers' signals, polling the
// group's abort word (the peer table's last entry) while it waits. A rank
// whose queue fails never runs its part of later calls, so its peers would
// wait out their kernels' time bound (120 s on the host). A driver therefore
// remembers the abort word of every window created on a device and sets
// them all when a submission on that device fails: every peer's waiting
// kernel then ends at once with its abort status, and later calls of the
// group fail the same way (as a NCCL communicator is aborted on an error).
//
// Words are held weakly: a window group's memory goes when its last window
// is released, and a word that went is skipped. Thread-safe.
#ifndef KILN_DRIVERS_COMMON_WINDOW_ABORTS_H_
#define KILN_DRIVERS_COMMON_WINDOW_ABORTS_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace kiln::drivers {

class WindowAborts {
 public:
  // Remembers |word| (an aliasing pointer into the memory that keeps it).
  void add(const std::shared_ptr<uint64_t>& word);
  // Sets every remembered word that still exists to 1 (release order).
  void abortAll();

 private:
  std::mutex mutex_;
  std::vector<std::weak_ptr<uint64_t>> words_;
};

}  // namespace kiln::drivers

#endif  // KILN_DRIVERS_COMMON_WINDOW_ABORTS_H_
