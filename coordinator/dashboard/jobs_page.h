#ifndef RINGLEADER_COORDINATOR_DASHBOARD_JOBS_PAGE_H_
#define RINGLEADER_COORDINATOR_DASHBOARD_JOBS_PAGE_H_

// The dashboard's front page: every job, newest first. Pure; thread-safe.

#include <string>
#include <vector>

#include "ringleader/v1/job.pb.h"

namespace ringleader::dashboard {

// `jobs` as ListJobs summarizes them, in creation order; `omitted` older
// jobs were left out (the page shows the newest kMaxListedJobs).
std::string RenderJobsPage(const std::vector<v1::Job>& jobs, int64_t omitted);

inline constexpr int kMaxListedJobs = 500;

}  // namespace ringleader::dashboard

#endif  // RINGLEADER_COORDINATOR_DASHBOARD_JOBS_PAGE_H_
