#ifndef RINGLEADER_COORDINATOR_HEARTBEAT_CONNECTIONS_H_
#define RINGLEADER_COORDINATOR_HEARTBEAT_CONNECTIONS_H_

// The connections each worker's heartbeats came over lately, so that a
// closed WatchGeneration stream is judged by what was heard since
// (docs/design-notes.md, "Verdicts after a heal"). A kill -9 closes the
// process's one connection, whose heartbeats were its only ones. A worker
// that went through a partition replaced its channel: its heartbeats came
// over two connections within a lease, and a request held back on the old
// one by the partition can even arrive after one on the new (a delayed
// heartbeat is judged fresh on arrival). Either connection's close then
// says nothing about the process; its lease does.
//
// Keeps the books only. Thread-safe.

#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ringleader {

class HeartbeatConnections {
 public:
  // A heartbeat of `worker_id` came over connection `peer` at `now`.
  void Heard(const std::string& worker_id, const std::string& peer,
             absl::Time now);
  void Forget(const std::string& worker_id);
  // Whether `worker_id`'s heartbeats within `window` before `now` all came
  // over `peer` (and one did): the connection's close is the process's.
  bool OnlyOver(const std::string& worker_id, const std::string& peer,
                absl::Time now, absl::Duration window) const;

 private:
  struct Seen {
    std::string peer;
    absl::Time last;
  };
  // The few latest connections per worker, most recent last.
  static constexpr size_t kKept = 4;

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::vector<Seen>> workers_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_HEARTBEAT_CONNECTIONS_H_
