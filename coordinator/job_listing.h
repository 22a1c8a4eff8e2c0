#ifndef RINGLEADER_COORDINATOR_JOB_LISTING_H_
#define RINGLEADER_COORDINATOR_JOB_LISTING_H_

// The pieces of ListJobs that need no lock: the order jobs are listed in,
// page tokens (AIP-158) and the light summary a listed job is cut down to.

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader {

inline constexpr int32_t kDefaultJobPageSize = 50;
inline constexpr int32_t kMaxJobPageSize = 500;
// The most bytes of Job.message a summary keeps.
inline constexpr size_t kSummaryMessageBytes = 512;

// Where a job sits in a listing: creation time, then the sequence number of
// its id ("name-<seq>", which the store hands out in submit order, so jobs
// created within one millisecond keep their order), then the id itself.
struct JobKey {
  int64_t create_time_ms = 0;
  int64_t sequence = 0;
  std::string job_id;

  static JobKey Of(const v1::Job& job);
  friend bool operator<(const JobKey& a, const JobKey& b) {
    return std::tie(a.create_time_ms, a.sequence, a.job_id) <
           std::tie(b.create_time_ms, b.sequence, b.job_id);
  }
};

// page_size as asked (0: the default; above the maximum: the maximum);
// INVALID_ARGUMENT when negative.
absl::StatusOr<int32_t> EffectivePageSize(int32_t page_size);

// An opaque token to continue a listing filtered by `states` after `last`.
// It carries the filter, so that a token is only good for the same one.
std::string EncodePageToken(const std::vector<v1::JobState>& states,
                            const JobKey& last);
// The key to continue after; INVALID_ARGUMENT for a token that does not
// parse or that another filter made.
absl::StatusOr<JobKey> DecodePageToken(const std::vector<v1::JobState>& states,
                                       const std::string& token);

// What ListJobs sends for `job`: its bounded fields only (the proto comment
// of ListJobsResponse.jobs lists them).
v1::Job JobSummary(const v1::Job& job);

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_JOB_LISTING_H_
