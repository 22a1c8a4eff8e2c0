#ifndef RINGLEADER_COORDINATOR_SCHEDULER_RECLAIM_H_
#define RINGLEADER_COORDINATOR_SCHEDULER_RECLAIM_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "coordinator/scheduler/plan.h"
#include "coordinator/scheduler/pool_state.h"
#include "coordinator/scheduler/queue_usage.h"

namespace ringleader::scheduler {

// Who makes room for a waiting job (issue 50, point 3). A running job may
// be displaced by a job of higher priority, or, up to what its queue
// borrowed, by a job whose queue is still within its quota. The victims go
// in order: lowest priority first, then the queue most over its share,
// then the newest. Shrinking comes first: each victim gives up ranks down
// to its min_workers, at a step boundary, losing no step. Only when
// shrinking every victim cannot free enough are whole jobs preempted, the
// fewest in victim order, the others shrunk for the rest.
struct Reclaimed {
  std::vector<Decision> moves;  // Shrinks and preemptions.
  int32_t freed = 0;            // At least what was asked.
};

// The moves that free `shortfall` workers for `job` (waiting) from
// `running` (the jobs this plan has not moved yet), nullopt if all of
// them together cannot.
std::optional<Reclaimed> Reclaim(const JobState& job, int32_t shortfall,
                                 const std::vector<const JobState*>& running,
                                 const QueueUsage& usage);

}  // namespace ringleader::scheduler

#endif  // RINGLEADER_COORDINATOR_SCHEDULER_RECLAIM_H_
