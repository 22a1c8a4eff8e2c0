#ifndef RINGLEADER_WORKER_DEVICE_CUDA_BACKEND_H_
#define RINGLEADER_WORKER_DEVICE_CUDA_BACKEND_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "worker/comm/communicator.h"
#include "worker/device/device.h"

namespace ringleader {

// The GPU half of a worker. BUILD links one implementation, chosen by the
// LibTorch the build uses (tools/libtorch_configure.bzl): with a CUDA LibTorch
// and NCCL, cuda_backend_nccl.cc; otherwise cuda_backend_unavailable.cc, whose
// answers say how to build with CUDA.

// OK when this process can train on cuda:`index`.
absl::Status CheckCudaDevice(int index);

// OK when cuda:`index` computes in bfloat16 (compute capability 8.0 or
// later: Ampere, Hopper, ...); FailedPrecondition naming it otherwise.
absl::Status CheckCudaBf16(int index);

// The generation's NCCL communicator on request.device, ordered after
// LibTorch's current stream on that device, so it reduces the CUDA gradient
// buckets in place as backward produces them.
absl::StatusOr<std::unique_ptr<Communicator>> CreateCudaCommunicator(
    const CommunicatorRequest& request);

// The same from a known ncclUniqueId (`unique_id`, 128 bytes), without the
// coordinator (request.client is not used): what CreateCudaCommunicator
// does after the exchange, and what a single-process GPU test calls.
absl::StatusOr<std::unique_ptr<Communicator>> CreateCudaCommunicatorWithId(
    const std::string& unique_id, const CommunicatorRequest& request);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DEVICE_CUDA_BACKEND_H_
