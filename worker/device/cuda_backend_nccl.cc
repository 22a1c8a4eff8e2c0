// The CUDA backend: LibTorch's CUDA device and stream, NCCL for collectives.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/cuda.h>

#include "absl/strings/str_cat.h"
#include "worker/cuda/nccl_communicator.h"
#include "worker/cuda/nccl_id_exchange.h"
#include "worker/device/cuda_backend.h"

namespace ringleader {

absl::Status CheckCudaDevice(int index) {
  const int64_t count = torch::cuda::device_count();
  if (count == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cuda:", index,
                     ": no CUDA device is visible to this process (driver "
                     "missing, or CUDA_VISIBLE_DEVICES hides them)"));
  }
  if (index >= count) {
    return absl::InvalidArgumentError(
        absl::StrCat("cuda:", index, ": this host has ", count,
                     " CUDA device(s), cuda:0..", count - 1));
  }
  return absl::OkStatus();
}

absl::Status CheckCudaBf16(int index) {
  if (absl::Status s = CheckCudaDevice(index); !s.ok()) return s;
  const cudaDeviceProp* p = at::cuda::getDeviceProperties(index);
  if (p->major >= 8) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "precision: PRECISION_BF16_MIXED needs a GPU of compute capability 8.0 "
      "or later; cuda:",
      index, " (", p->name, ") is ", p->major, ".", p->minor));
}

absl::StatusOr<std::unique_ptr<Communicator>> CreateCudaCommunicator(
    const CommunicatorRequest& request) {
  const int index = request.device.index;
  if (absl::Status s = CheckCudaDevice(index); !s.ok()) return s;
  // The trainer runs on this thread: its kernels, and LibTorch's current
  // stream below, are those of this device.
  c10::cuda::set_device(static_cast<c10::DeviceIndex>(index));
  absl::StatusOr<std::string> id = ExchangeNcclUniqueId(
      *request.client, request.job_id, request.generation, request.rank,
      /*comm_index=*/0, request.timeout);
  if (!id.ok()) return id.status();
  NcclCommunicator::Options options;
  options.device = index;
  options.timeout = request.timeout;
  options.cancelled = request.cancelled;
  // Backward's gradient kernels are queued on LibTorch's current stream; a
  // bucket's all-reduce waits for them on the GPU, not on the host.
  options.producer_stream =
      c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(index))
          .stream();
  absl::StatusOr<std::unique_ptr<NcclCommunicator>> comm =
      NcclCommunicator::Create(*id, request.rank, request.world_size, options);
  if (!comm.ok()) return comm.status();
  return std::unique_ptr<Communicator>(std::move(*comm));
}

}  // namespace ringleader
