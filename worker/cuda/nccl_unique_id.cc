#include "worker/cuda/nccl_unique_id.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include "absl/strings/str_cat.h"

namespace ringleader {

absl::StatusOr<std::string> NewNcclUniqueId() {
  ncclUniqueId id;
  ncclResult_t rc = ncclGetUniqueId(&id);
  if (rc != ncclSuccess) {
    return absl::UnavailableError(
        absl::StrCat("ncclGetUniqueId failed: ", ncclGetErrorString(rc)));
  }
  static_assert(sizeof(id.internal) == NCCL_UNIQUE_ID_BYTES);
  return std::string(id.internal, NCCL_UNIQUE_ID_BYTES);
}

absl::StatusOr<int> CudaDeviceCount() {
  int n = 0;
  cudaError_t rc = cudaGetDeviceCount(&n);
  if (rc != cudaSuccess) {
    return absl::UnavailableError(
        absl::StrCat("no usable CUDA device: ", cudaGetErrorString(rc)));
  }
  if (n == 0) return absl::UnavailableError("no CUDA device present");
  return n;
}

}  // namespace ringleader
