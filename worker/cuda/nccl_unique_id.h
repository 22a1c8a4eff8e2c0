#ifndef RINGLEADER_WORKER_CUDA_NCCL_UNIQUE_ID_H_
#define RINGLEADER_WORKER_CUDA_NCCL_UNIQUE_ID_H_

#include <string>

#include "absl/status/statusor.h"

namespace ringleader {

// Creates an NCCL unique id (ncclGetUniqueId) as the 128 raw bytes that rank 0
// publishes through the coordinator. Needs libnccl but no GPU.
absl::StatusOr<std::string> NewNcclUniqueId();

// The number of CUDA devices, or an error saying why there are none (no
// driver, no device); GPU tests skip with this message.
absl::StatusOr<int> CudaDeviceCount();

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_CUDA_NCCL_UNIQUE_ID_H_
