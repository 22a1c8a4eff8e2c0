#ifndef RINGLEADER_COORDINATOR_REQUEST_IDS_H_
#define RINGLEADER_COORDINATOR_REQUEST_IDS_H_

// The first check of a request that names a job or a worker: an empty id is
// INVALID_ARGUMENT (an unknown one is the managers' NOT_FOUND).

#include <string>

#include "absl/status/status.h"

namespace ringleader {

inline absl::Status RequireJobId(const std::string& job_id) {
  if (job_id.empty()) return absl::InvalidArgumentError("job_id is empty");
  return absl::OkStatus();
}

inline absl::Status RequireWorkerId(const std::string& worker_id) {
  if (worker_id.empty()) {
    return absl::InvalidArgumentError("worker_id is empty");
  }
  return absl::OkStatus();
}

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_REQUEST_IDS_H_
