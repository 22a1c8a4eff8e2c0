#ifndef RINGLEADER_WORKER_CUDA_NCCL_ID_EXCHANGE_H_
#define RINGLEADER_WORKER_CUDA_NCCL_ID_EXCHANGE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "worker/coordinator_client.h"

namespace ringleader {

// NCCL's bootstrap through the coordinator (torchrun uses its TCPStore for
// this): rank 0 makes an ncclUniqueId and publishes it for the generation,
// every other rank waits up to `timeout` for it. All ranks return the same
// 128 bytes, ready for NcclCommunicator::Create. An ended generation fails
// the wait with ABORTED.
absl::StatusOr<std::string> ExchangeNcclUniqueId(
    CoordinatorClient& client, const std::string& job_id, int64_t generation,
    int32_t rank, int64_t comm_index, absl::Duration timeout);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_CUDA_NCCL_ID_EXCHANGE_H_
