#ifndef RINGLEADER_WORKER_COMM_KV_CLIENT_H_
#define RINGLEADER_WORKER_COMM_KV_CLIENT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ringleader {

// The worker's view of the coordinator's key-value store for one
// (job, generation): what bootstraps Gloo. Keys are scoped by the coordinator
// to the generation, so a new generation never sees an old one's keys.
// Implementations are thread-safe.
class KvClient {
 public:
  virtual ~KvClient() = default;
  virtual absl::Status Set(const std::string& key,
                           const std::string& value) = 0;
  // Values of all `keys` once they exist; DEADLINE_EXCEEDED after `timeout`;
  // ABORTED when the generation ended.
  virtual absl::StatusOr<std::vector<std::string>> Wait(
      const std::vector<std::string>& keys, absl::Duration timeout) = 0;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_COMM_KV_CLIENT_H_
