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
  absl::StatusOr<std::string> id = ExchangeNcclUniqueId(
      *request.client, request.job_id, request.generation, request.rank,
      /*comm_index=*/0, request.timeout);
  if (!id.ok()) return id.status();
  return CreateCudaCommunicatorWithId(*id, request);
}

absl::StatusOr<std::unique_ptr<Communicator>> CreateCudaCommunicatorWithId(
    const std::string& unique_id, const CommunicatorRequest& request) {
  const int index = request.device.index;
  if (absl::Status s = CheckCudaDevice(index); !s.ok()) return s;
  const auto device = static_cast<c10::DeviceIndex>(index);
  // The trainer runs on this thread: its kernels, and LibTorch's current
  // stream below, are those of this device.
  c10::cuda::set_device(device);
  NcclCommunicator::Options options;
  options.device = index;
  options.timeout = request.timeout;
  options.cancelled = request.cancelled;
  // Backward's gradient kernels are queued on LibTorch's current stream; a
  // bucket's all-reduce waits for them on the GPU, not on the host.
  options.producer_stream = c10::cuda::getCurrentCUDAStream(device).stream();
  // The collectives' stream comes from c10's pool, as ProcessGroupNCCL's
  // does, so LibTorch knows it: the reducer records every buffer it hands
  // over on it, and the caching allocator does not reuse that memory until
  // NCCL is done with it (PyTorch's "[Sync Streams]" note).
  const c10::cuda::CUDAStream comm_stream =
      c10::cuda::getStreamFromPool(/*isHighPriority=*/true, device);
  options.comm_stream = comm_stream.stream();
  options.comm_stream_name.valid = true;
  options.comm_stream_name.device_type =
      static_cast<int8_t>(comm_stream.unwrap().device_type());
  options.comm_stream_name.device_index = comm_stream.device_index();
  options.comm_stream_name.id = comm_stream.id();
  absl::StatusOr<std::unique_ptr<NcclCommunicator>> comm =
      NcclCommunicator::Create(unique_id, request.rank, request.world_size,
                               options);
  if (!comm.ok()) return comm.status();
  return std::unique_ptr<Communicator>(std::move(*comm));
}

}  // namespace ringleader
