#ifndef RINGLEADER_COORDINATOR_HISTORY_CALLS_H_
#define RINGLEADER_COORDINATOR_HISTORY_CALLS_H_

// UserService.GetJobHistory: a job's training curves (JobHistory) with its
// per-epoch evaluations and state (JobManager). Holds no state of its own.
// Thread-safe.

#include "absl/status/statusor.h"
#include "coordinator/job_history.h"
#include "coordinator/job_manager.h"
#include "ringleader/v1/history.pb.h"

namespace ringleader {

class HistoryCalls {
 public:
  HistoryCalls(const JobManager& jobs, const JobHistory& history)
      : jobs_(jobs), history_(history) {}

  // INVALID_ARGUMENT for an empty id, NOT_FOUND for an unknown job; a job
  // with no training report of rank 0 yet has no points.
  absl::StatusOr<v1::JobHistoryResponse> GetJobHistory(
      const v1::GetJobHistoryRequest& r) const;

 private:
  const JobManager& jobs_;
  const JobHistory& history_;
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_HISTORY_CALLS_H_
