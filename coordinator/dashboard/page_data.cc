#include "coordinator/dashboard/page_data.h"

#include <set>

#include "coordinator/dashboard/jobs_page.h"

namespace ringleader::dashboard {
namespace {

// ListJobs pages at most 500 jobs; the coordinator keeps 1000 finished ones
// by default (--retain_finished_jobs). Bounded whatever it keeps.
constexpr int kMaxListPages = 100;

// The ranks whose last lines the page shows: the world's, and any that
// reported (a finished job's world may be gone).
std::set<int32_t> RanksOf(const v1::Job& job) {
  std::set<int32_t> ranks;
  for (int32_t r = 0; r < job.world_size(); ++r) ranks.insert(r);
  for (const v1::RankProgress& p : job.progress().ranks()) {
    ranks.insert(p.rank());
  }
  return ranks;
}

}  // namespace

absl::StatusOr<JobList> LoadJobList(Coordinator& coordinator) {
  JobList out;
  v1::ListJobsRequest request;
  request.set_page_size(500);
  for (int page = 0; page < kMaxListPages; ++page) {
    absl::StatusOr<v1::ListJobsResponse> r =
        coordinator.user_calls().ListJobs(request);
    if (!r.ok()) return r.status();
    for (v1::Job& job : *r->mutable_jobs()) out.jobs.push_back(std::move(job));
    if (r->next_page_token().empty()) break;
    request.set_page_token(r->next_page_token());
  }
  if (out.jobs.size() > static_cast<size_t>(kMaxListedJobs)) {
    out.omitted = static_cast<int64_t>(out.jobs.size()) - kMaxListedJobs;
    out.jobs.erase(out.jobs.begin(), out.jobs.begin() + out.omitted);
  }
  return out;
}

absl::StatusOr<JobPageData> LoadJobPage(Coordinator& coordinator,
                                        const std::string& job_id,
                                        absl::Time now) {
  JobPageData data;
  data.now = now;
  v1::GetJobRequest get;
  get.set_job_id(job_id);
  absl::StatusOr<v1::Job> job = coordinator.user_calls().GetJob(get);
  if (!job.ok()) return job.status();
  data.job = *std::move(job);
  v1::GetJobHistoryRequest history;
  history.set_job_id(job_id);
  absl::StatusOr<v1::JobHistoryResponse> h =
      coordinator.history_calls().GetJobHistory(history);
  if (!h.ok()) return h.status();
  data.history = *std::move(h);
  data.generations = coordinator.generation_events().Get(job_id);
  int shown = 0;
  for (int32_t rank : RanksOf(data.job)) {
    if (shown++ == kMaxRanksWithLogs) break;
    v1::GetJobLogsRequest logs;
    logs.set_job_id(job_id);
    logs.set_rank(rank);
    logs.set_tail(kLogLinesPerRank);
    absl::StatusOr<v1::GetJobLogsResponse> l =
        coordinator.log_calls().GetJobLogs(logs);
    if (!l.ok()) return l.status();
    if (l->lines_size() == 0) continue;
    data.logs[rank].assign(l->lines().begin(), l->lines().end());
  }
  return data;
}

}  // namespace ringleader::dashboard
