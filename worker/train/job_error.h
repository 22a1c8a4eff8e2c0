#ifndef RINGLEADER_WORKER_TRAIN_JOB_ERROR_H_
#define RINGLEADER_WORKER_TRAIN_JOB_ERROR_H_

// Two kinds of failure end a rank's training, and they need opposite
// handling. A peer that died breaks the generation's collectives: the rank
// rejoins and the job goes on (ABORTED). The job's own input - a model that
// does not load or fit the data, a dataset that is missing or corrupt, a
// label out of range, a loss that is not finite - fails the same way on
// every try: retrying spends the restart budget and hides the reason in a
// log. Those are marked as job errors; the rank reports them to the
// coordinator, which fails the job at once with the reason.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "worker/train/coordinator_link.h"

namespace ringleader {

// `s` (not OK) marked as the job's own error, with `context` ("rank 1:
// loading the model") before its message; its code is kept (never ABORTED,
// which means "rejoin": that becomes FAILED_PRECONDITION).
absl::Status JobError(const absl::Status& s, const std::string& context = "");
bool IsJobError(const absl::Status& s);

// A failed collective means the generation is broken (a peer died or was
// aborted), whatever the transport said: ABORTED, so the caller rejoins and
// the coordinator decides whether the job goes on.
absl::Status CollectiveFailed(const absl::Status& s);

// Reports `error` as this rank's fatal error (ReportProgressRequest
// .fatal_error, at most 4096 bytes), so the coordinator fails the job with
// it. Best effort: the job may already be over.
void ReportJobError(CoordinatorLink& link, const std::string& job_id,
                    int64_t generation, int32_t rank,
                    const absl::Status& error);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_JOB_ERROR_H_
