#ifndef RINGLEADER_COORDINATOR_DASHBOARD_PAGE_DATA_H_
#define RINGLEADER_COORDINATOR_DASHBOARD_PAGE_DATA_H_

// What each page shows, read from a running coordinator through the same
// calls the UserService answers with (UserCalls, HistoryCalls, LogCalls)
// and the generation history. Thread-safe (the calls are).

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "coordinator/coordinator.h"
#include "coordinator/dashboard/job_page.h"

namespace ringleader::dashboard {

struct JobList {
  std::vector<v1::Job> jobs;  // The newest kMaxListedJobs, creation order.
  int64_t omitted = 0;        // Older ones left out.
};
absl::StatusOr<JobList> LoadJobList(Coordinator& coordinator);

// NOT_FOUND for an unknown job.
absl::StatusOr<JobPageData> LoadJobPage(Coordinator& coordinator,
                                        const std::string& job_id,
                                        absl::Time now);

}  // namespace ringleader::dashboard

#endif  // RINGLEADER_COORDINATOR_DASHBOARD_PAGE_DATA_H_
