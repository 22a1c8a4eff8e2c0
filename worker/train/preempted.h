#ifndef RINGLEADER_WORKER_TRAIN_PREEMPTED_H_
#define RINGLEADER_WORKER_TRAIN_PREEMPTED_H_

// A rank whose worker was signalled to stop (a scheduler's preemption)
// leaves its generation after telling the coordinator, and its worker exits
// as a stop asked for (status 0), not as a failure. The trainer says so with
// a marked status, as job_error.h marks the job's own errors.

#include <string>

#include "absl/status/status.h"

namespace ringleader {

// CANCELLED, marked as a preemption, with `message`.
absl::Status Preempted(const std::string& message);
bool IsPreempted(const absl::Status& s);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_PREEMPTED_H_
