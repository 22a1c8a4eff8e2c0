#ifndef RINGLEADER_COORDINATOR_SCHEDULER_POOL_STATE_H_
#define RINGLEADER_COORDINATOR_SCHEDULER_POOL_STATE_H_

// What the scheduler decides from (issue 50): the pool's free workers, the
// queues with their quotas and weights, and every job that runs or waits.
// Plain values: the policy (scheduler_policy.h) is a pure function of them
// and of the time, so it is tested on a fake clock without a coordinator.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace ringleader::scheduler {

// A queue of jobs (a team's, say), as Kueue's ClusterQueue: `quota`
// workers are its own; past them it borrows idle workers, which a queue
// still under its quota may take back. `weight` divides what is borrowed:
// a queue's share is its borrowed workers over its weight, and the queue
// with the smaller share goes first among jobs of one priority.
struct QueueConfig {
  std::string name;
  int32_t quota = 0;
  double weight = 1.0;
  bool may_borrow = true;
};

// One job as the scheduler sees it. `workers` > 0: it runs on that many
// (between min_workers and max_workers); 0: it waits to be admitted.
struct JobState {
  std::string id;
  std::string queue;
  int32_t priority = 0;  // Higher goes first.
  absl::Time submitted;  // Older goes first among equals.
  int32_t min_workers = 1;
  int32_t max_workers = 1;
  int32_t workers = 0;
  // A running job's expected end, from its progress and rate (its
  // remaining steps over its steps per second); InfiniteFuture when not
  // known yet. Backfill counts only workers that known ends release.
  absl::Time expected_end = absl::InfiniteFuture();
};

struct PoolState {
  int32_t free_workers = 0;
  std::vector<QueueConfig> queues;
  std::vector<JobState> jobs;
};

}  // namespace ringleader::scheduler

#endif  // RINGLEADER_COORDINATOR_SCHEDULER_POOL_STATE_H_
