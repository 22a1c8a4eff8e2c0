#ifndef RINGLEADER_WORKER_CUDA_CUDA_DEVICE_GUARD_H_
#define RINGLEADER_WORKER_CUDA_CUDA_DEVICE_GUARD_H_

#include <cuda_runtime.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace ringleader {

inline absl::Status CudaError(cudaError_t rc, absl::string_view what) {
  return absl::InternalError(absl::StrCat(what, ": ", cudaGetErrorName(rc),
                                          " (", cudaGetErrorString(rc), ")"));
}

// Makes `device` the calling thread's current CUDA device for the guard's
// life and restores the previous one after (c10's CUDAGuard without
// LibTorch): events, streams and NCCL calls act on the current device, and a
// caller's thread may have another one set.
class CudaDeviceGuard {
 public:
  explicit CudaDeviceGuard(int device) {
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
    status_ = previous_ == device ? cudaSuccess : cudaSetDevice(device);
    if (status_ != cudaSuccess || previous_ == device) previous_ = -1;
  }
  ~CudaDeviceGuard() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  CudaDeviceGuard(const CudaDeviceGuard&) = delete;
  CudaDeviceGuard& operator=(const CudaDeviceGuard&) = delete;

  // OK when the device is set; the error names it otherwise.
  absl::Status status(int device) const {
    if (status_ == cudaSuccess) return absl::OkStatus();
    return CudaError(status_, absl::StrCat("cudaSetDevice(", device, ")"));
  }

 private:
  int previous_ = -1;
  cudaError_t status_ = cudaSuccess;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_CUDA_CUDA_DEVICE_GUARD_H_
