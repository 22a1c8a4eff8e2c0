#ifndef RINGLEADER_COMMON_WAITING_FOR_LINE_H_
#define RINGLEADER_COMMON_WAITING_FOR_LINE_H_

// The one line `ringctl get` and `ringctl watch` print for a job whose ranks
// wait for another (Job.waiting_for; coordinator/stall_watch.h):
//   waiting 12.3 s in all-reduce of step 4711 for rank 2 (host h3): data
//   loading for 12.4 s
// and, for a rank whose heartbeats stopped,
//   ... for rank 2 (host h3): no heartbeat for 3.1 s, last seen in forward
// The Python client words it the same (python/ringleader/progress.py).
//
// Pure functions; thread-safe.

#include <string>

#include "ringleader/v1/job.pb.h"

namespace ringleader {

// "data loading", "all-reduce wait", ...; a value this build does not know
// by its enum name.
std::string PhaseWords(v1::WorkerPhase phase);
// What the waiters are blocked in: "all-reduce", "buffer sync", ...
std::string CollectiveWords(v1::WorkerPhase phase);
// The line above; empty when `job` has no waiting_for.
std::string WaitingForLine(const v1::Job& job);

}  // namespace ringleader

#endif  // RINGLEADER_COMMON_WAITING_FOR_LINE_H_
