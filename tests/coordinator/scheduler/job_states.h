#ifndef RINGLEADER_TESTS_COORDINATOR_SCHEDULER_JOB_STATES_H_
#define RINGLEADER_TESTS_COORDINATOR_SCHEDULER_JOB_STATES_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "coordinator/scheduler/pool_state.h"

namespace ringleader::scheduler {

// The fake clock: every test plans at kNow.
inline const absl::Time kNow = absl::FromUnixSeconds(100000);

// A job submitted `age_s` seconds before kNow, running on `workers` (0:
// waiting), in `queue`.
inline JobState Job(const std::string& id, int32_t priority,
                    int32_t min_workers, int32_t max_workers, int age_s,
                    int32_t workers = 0, const std::string& queue = "q") {
  JobState j;
  j.id = id;
  j.queue = queue;
  j.priority = priority;
  j.min_workers = min_workers;
  j.max_workers = max_workers;
  j.workers = workers;
  j.submitted = kNow - absl::Seconds(age_s);
  return j;
}

}  // namespace ringleader::scheduler

#endif  // RINGLEADER_TESTS_COORDINATOR_SCHEDULER_JOB_STATES_H_
