// Rendezvous: a small key-value store through which the processes of one
// multi-process run exchange a few bytes before their collective channels
// exist (rank 0's channel id, and acknowledgements). Driver independent.
//
// Two stores, named by a URI:
//   file:DIR            a directory every process can see (shared file
//                       system). A value is written to a temporary file and
//                       linked to DIR/<key> in one step, so readers never see
//                       a partial value; readers poll for the file.
//   tcp://HOST:PORT     the process of rank 0 serves the store: it listens on
//                       HOST:PORT (port 0 picks a free port, for tests); the
//                       others connect, retrying until the deadline, and poll
//                       for keys over one connection.
// Keys are short names of [A-Za-z0-9_.-]; values are at most 1 MiB.
//
// Ownership: a store is owned by its creator (std::unique_ptr); a tcp server
// stops serving when destroyed. Thread-safety: all methods may be called
// from several threads at once.
#ifndef KILN_RUNTIME_SRC_COLLECTIVE_RENDEZVOUS_H_
#define KILN_RUNTIME_SRC_COLLECTIVE_RENDEZVOUS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "kiln/hal/hal.h"

namespace kiln {
namespace collective {

class Rendezvous {
 public:
  virtual ~Rendezvous() = default;

  // Stores |value| under |key|. ALREADY_EXISTS if the key is already set
  // (for a file store: left over from an earlier run).
  virtual kiln_status_t Set(const std::string& key,
                            const std::string& value) = 0;
  // Waits until |key| is set and returns its value. DEADLINE_EXCEEDED naming
  // the key and the store once |deadline| passes.
  virtual kiln_status_t Get(const std::string& key, kiln_time_t deadline,
                            std::string* out_value) = 0;
  // Removes |key|; removing a missing key is not an error.
  virtual kiln_status_t Remove(const std::string& key) = 0;
  // The URI the store was opened with ("tcp://127.0.0.1:41234" with the
  // actual port for a tcp server opened on port 0).
  virtual std::string uri() const = 0;
};

// Opens the store named by |uri|. |serve| makes this process the tcp server
// (the process of rank 0); other processes connect until |deadline|.
// INVALID_ARGUMENT for a malformed URI; UNAVAILABLE when the address cannot
// be served; DEADLINE_EXCEEDED when no server answered in time.
kiln_status_t OpenRendezvous(const std::string& uri, bool serve,
                             kiln_time_t deadline,
                             std::unique_ptr<Rendezvous>* out);

// The exchange kiln_collective_group_create runs: the process owning ranks
// [first_rank, first_rank + rank_count) of a |world_size|-rank group.
// The process of rank 0 publishes |*id|, then waits until every other
// process (walking the rank ranges they acknowledge) has read it, and
// removes the keys it used; the others read it into |*id| and acknowledge.
kiln_status_t ExchangeChannelId(Rendezvous* store, int32_t first_rank,
                                int32_t rank_count, int32_t world_size,
                                kiln_time_t deadline, std::string* id);

}  // namespace collective
}  // namespace kiln

#endif  // KILN_RUNTIME_SRC_COLLECTIVE_RENDEZVOUS_H_
