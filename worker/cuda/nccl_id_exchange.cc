#include "worker/cuda/nccl_id_exchange.h"

#include "worker/cuda/nccl_unique_id.h"

namespace ringleader {

absl::StatusOr<std::string> ExchangeNcclUniqueId(
    CoordinatorClient& client, const std::string& job_id, int64_t generation,
    int32_t rank, int64_t comm_index, absl::Duration timeout) {
  if (rank != 0) {
    return client.FetchNcclId(job_id, generation, rank, comm_index, timeout);
  }
  absl::StatusOr<std::string> id = NewNcclUniqueId();
  if (!id.ok()) return id.status();
  if (absl::Status s =
          client.PublishNcclId(job_id, generation, comm_index, *id);
      !s.ok()) {
    return s;
  }
  return id;
}

}  // namespace ringleader
