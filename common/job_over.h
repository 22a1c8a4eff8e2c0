#ifndef RINGLEADER_COMMON_JOB_OVER_H_
#define RINGLEADER_COMMON_JOB_OVER_H_

// A call about a job that is over (SUCCEEDED, FAILED, CANCELLED) is refused
// FAILED_PRECONDITION with "job ID is JOB_STATE_X". A worker reads the state
// back from the refusal: a rank counted out of a job that then succeeded
// without it did its part (the survivors carried its steps), so its daemon
// ends as the job did instead of failing. One place writes and reads the
// words, so they cannot drift apart.

#include <optional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader {

// Whether a job in `state` is over: SUCCEEDED, FAILED or CANCELLED (it
// changes no more). The one definition the coordinator, ringctl and the
// dashboard share.
bool IsJobOver(v1::JobState state);

// FAILED_PRECONDITION "job <job_id> is <JobState_Name(state)>"; `job_id` as
// the caller wants it shown (quoted or not).
absl::Status JobOverError(absl::string_view job_id, v1::JobState state);

// The state named by a JobOverError, also when a caller prefixed its
// message ("join rendezvous: job ..."); nullopt for any other status.
std::optional<v1::JobState> JobOverState(const absl::Status& status);

}  // namespace ringleader

#endif  // RINGLEADER_COMMON_JOB_OVER_H_
