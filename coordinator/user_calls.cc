#include "coordinator/user_calls.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "coordinator/request_ids.h"
#include "glog/logging.h"

namespace ringleader {

absl::StatusOr<v1::SubmitJobResponse> UserCalls::SubmitJob(
    const v1::SubmitJobRequest& r) {
  absl::StatusOr<v1::Job> job = jobs_.Submit(r.spec());
  if (!job.ok()) return job.status();
  if (absl::Status s = open_(*job); !s.ok()) {
    if (absl::Status failed =
            jobs_.Fail(job->job_id(), std::string(s.message()));
        !failed.ok()) {
      LOG(WARNING) << "job " << job->job_id()
                   << " could not start and was not marked FAILED: " << failed;
    }
    return s;
  }
  v1::SubmitJobResponse out;
  out.set_job_id(job->job_id());
  return out;
}

absl::StatusOr<v1::Job> UserCalls::GetJob(const v1::GetJobRequest& r) {
  if (absl::Status s = RequireJobId(r.job_id()); !s.ok()) return s;
  absl::StatusOr<v1::Job> job = jobs_.Get(r.job_id());
  if (job.ok() && read_) read_(*job);
  return job;
}

absl::StatusOr<v1::ListJobsResponse> UserCalls::ListJobs(
    const v1::ListJobsRequest& r) {
  std::vector<v1::JobState> states;
  for (int s : r.states()) {
    if (!v1::JobState_IsValid(s) || s == v1::JOB_STATE_UNSPECIFIED) {
      return absl::InvalidArgumentError(absl::StrCat("unknown job state ", s));
    }
    states.push_back(static_cast<v1::JobState>(s));
  }
  absl::StatusOr<JobPage> page =
      jobs_.ListPage(states, r.page_size(), r.page_token());
  if (!page.ok()) return page.status();
  v1::ListJobsResponse out;
  for (v1::Job& job : page->jobs) *out.add_jobs() = std::move(job);
  out.set_next_page_token(std::move(page->next_page_token));
  return out;
}

absl::StatusOr<v1::Job> UserCalls::CancelJob(const v1::CancelJobRequest& r) {
  if (absl::Status s = RequireJobId(r.job_id()); !s.ok()) return s;
  return jobs_.Cancel(r.job_id());
}

absl::StatusOr<v1::DeleteJobResponse> UserCalls::DeleteJob(
    const v1::DeleteJobRequest& r) {
  if (absl::Status s = RequireJobId(r.job_id()); !s.ok()) return s;
  if (absl::Status s = jobs_.Delete(r.job_id()); !s.ok()) return s;
  return v1::DeleteJobResponse();
}

absl::StatusOr<uint64_t> UserCalls::WatchJob(const std::string& job_id,
                                             JobManager::Watcher watcher) {
  if (absl::Status s = RequireJobId(job_id); !s.ok()) return s;
  return jobs_.Watch(job_id, std::move(watcher));
}

void UserCalls::UnwatchJob(const std::string& job_id, uint64_t token) {
  jobs_.Unwatch(job_id, token);
}

v1::ListWorkersResponse UserCalls::ListWorkers() const {
  v1::ListWorkersResponse out;
  for (v1::WorkerInfo& w : workers_.List()) *out.add_workers() = std::move(w);
  return out;
}

}  // namespace ringleader
