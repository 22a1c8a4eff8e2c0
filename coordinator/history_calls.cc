#include "coordinator/history_calls.h"

#include "coordinator/request_ids.h"

namespace ringleader {

absl::StatusOr<v1::JobHistoryResponse> HistoryCalls::GetJobHistory(
    const v1::GetJobHistoryRequest& r) const {
  if (absl::Status s = RequireJobId(r.job_id()); !s.ok()) return s;
  absl::StatusOr<v1::Job> job = jobs_.Get(r.job_id());
  if (!job.ok()) return job.status();
  v1::HistorySeries series = history_.Get(r.job_id());
  v1::JobHistoryResponse out;
  out.set_job_id(r.job_id());
  out.set_state(job->state());
  out.mutable_points()->Swap(series.mutable_points());
  *out.mutable_evaluations() = job->progress().evaluations();
  out.set_stride(series.stride() > 0 ? series.stride() : 1);
  out.set_max_points(history_.max_points());
  return out;
}

}  // namespace ringleader
