#ifndef RINGLEADER_COORDINATOR_SCHEDULER_SCHEDULER_POLICY_H_
#define RINGLEADER_COORDINATOR_SCHEDULER_SCHEDULER_POLICY_H_

// The scheduler's policy (issue 50, point 4): a pure function from the
// pool, the queues and the jobs to the moves that carry it forward. The
// assigner carries the moves out; this decides nothing else and keeps no
// state, so it is tested on a fake clock.
//
// Waiting jobs are taken in order: priority, then their queue's share
// against its weight (queue_usage.h), then age. Admission is by gang: a
// job starts only when its min_workers can all be given; no job holds part
// of the pool while it waits for the rest. A job that cannot start may
// make room by shrinking, then preempting, jobs it may displace
// (reclaim.h), unless a job ahead of it already waits for workers. A job
// that waits reserves the workers it needs from the time the known ends of
// running jobs free them (availability.h); a job behind it starts first
// (backfill) only on workers that leave every reservation whole. When the
// first job that waits cannot be placed so (a running job's end is not
// known yet), nothing starts behind it. Workers
// left over grow running jobs toward their max_workers, those shrunk
// before among them, but never ahead of a job that waits at the same or a
// higher priority.

#include "absl/time/time.h"
#include "coordinator/scheduler/plan.h"
#include "coordinator/scheduler/pool_state.h"

namespace ringleader::scheduler {

Plan Schedule(const PoolState& pool, absl::Time now);

}  // namespace ringleader::scheduler

#endif  // RINGLEADER_COORDINATOR_SCHEDULER_SCHEDULER_POLICY_H_
