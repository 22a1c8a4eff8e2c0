#include "worker/cuda/nccl_communicator.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"

namespace ringleader {

struct NcclCommunicator::Impl {
  Options options;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  absl::Mutex mu;  // Serializes teardown against polling.
  std::atomic<bool> aborted{false};
  bool destroyed = false;

  // Tears the communicator down once; later operations fail ABORTED.
  void AbortLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    aborted = true;
    if (comm != nullptr && !destroyed) {
      ncclCommAbort(comm);
      destroyed = true;
    }
  }
};

namespace {

absl::Status CudaError(cudaError_t rc, absl::string_view what) {
  return absl::InternalError(absl::StrCat(what, ": ", cudaGetErrorString(rc)));
}

absl::Status NcclError(ncclResult_t rc, absl::string_view what) {
  return absl::InternalError(absl::StrCat(what, ": ", ncclGetErrorString(rc)));
}

absl::StatusOr<ncclDataType_t> NcclType(DataType type) {
  switch (type) {
    case DataType::kFloat32:
      return ncclFloat32;
    case DataType::kFloat64:
      return ncclFloat64;
    case DataType::kInt64:
      return ncclInt64;
  }
  return absl::InvalidArgumentError("unsupported data type");
}

}  // namespace

class NcclCommunicator::NcclWork final : public Work {
 public:
  NcclWork(std::shared_ptr<Impl> impl, cudaEvent_t done, absl::Status status)
      : impl_(std::move(impl)), done_(done), status_(std::move(status)) {}
  ~NcclWork() override {
    if (done_ != nullptr) cudaEventDestroy(done_);
  }
  absl::Status Wait() override {
    if (!status_.ok() || done_ == nullptr) return status_;
    const absl::Time deadline = absl::Now() + impl_->options.timeout;
    while (true) {
      cudaError_t q = cudaEventQuery(done_);
      if (q == cudaSuccess) return absl::OkStatus();
      if (q != cudaErrorNotReady) return CudaError(q, "all-reduce");
      absl::MutexLock lock(&impl_->mu);
      if (impl_->aborted) return absl::AbortedError("communicator aborted");
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(impl_->comm, &async);
      if (async != ncclSuccess && async != ncclInProgress) {
        impl_->AbortLocked();
        return NcclError(async, "NCCL failed asynchronously");
      }
      if (absl::Now() > deadline) {
        impl_->AbortLocked();
        return absl::DeadlineExceededError(
            absl::StrCat("NCCL collective did not finish in ",
                         absl::FormatDuration(impl_->options.timeout),
                         "; communicator aborted"));
      }
      // Spinning on a GPU event; the sleep bounds CPU use while waiting.
      absl::SleepFor(absl::Microseconds(50));
    }
  }

 private:
  std::shared_ptr<Impl> impl_;
  cudaEvent_t done_;
  absl::Status status_;
};

absl::StatusOr<std::unique_ptr<NcclCommunicator>> NcclCommunicator::Create(
    const std::string& unique_id, int rank, int world_size, Options options) {
  if (unique_id.size() != NCCL_UNIQUE_ID_BYTES) {
    return absl::InvalidArgumentError(
        absl::StrCat("NCCL unique id must be ", NCCL_UNIQUE_ID_BYTES,
                     " bytes, got ", unique_id.size()));
  }
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank ", rank, " outside [0, ", world_size, ")"));
  }
  if (cudaError_t rc = cudaSetDevice(options.device); rc != cudaSuccess) {
    return CudaError(rc, absl::StrCat("cannot use cuda:", options.device));
  }
  auto impl = std::make_shared<Impl>();
  impl->options = options;
  if (cudaError_t rc =
          cudaStreamCreateWithFlags(&impl->stream, cudaStreamNonBlocking);
      rc != cudaSuccess) {
    return CudaError(rc, "cannot create the communicator's stream");
  }
  ncclUniqueId id;
  std::memcpy(id.internal, unique_id.data(), NCCL_UNIQUE_ID_BYTES);
  if (ncclResult_t rc = ncclCommInitRank(&impl->comm, world_size, id, rank);
      rc != ncclSuccess) {
    cudaStreamDestroy(impl->stream);
    return NcclError(rc, "ncclCommInitRank");
  }
  return std::unique_ptr<NcclCommunicator>(
      new NcclCommunicator(std::move(impl), rank, world_size));
}

NcclCommunicator::~NcclCommunicator() {
  absl::MutexLock lock(&impl_->mu);
  if (impl_->comm != nullptr && !impl_->destroyed) {
    ncclCommDestroy(impl_->comm);
    impl_->destroyed = true;
  }
  if (impl_->stream != nullptr) cudaStreamDestroy(impl_->stream);
}

std::unique_ptr<Work> NcclCommunicator::AllReduceSumAsync(void* data,
                                                          size_t count,
                                                          DataType type) {
  auto fail = [this](absl::Status s) {
    return std::make_unique<NcclWork>(impl_, nullptr, std::move(s));
  };
  if (impl_->aborted) return fail(absl::AbortedError("communicator aborted"));
  absl::StatusOr<ncclDataType_t> nccl_type = NcclType(type);
  if (!nccl_type.ok()) return fail(nccl_type.status());
  auto producer = static_cast<cudaStream_t>(impl_->options.producer_stream);
  cudaEvent_t ready = nullptr, done = nullptr;
  if (cudaError_t rc = cudaEventCreateWithFlags(&ready, cudaEventDisableTiming);
      rc != cudaSuccess) {
    return fail(CudaError(rc, "cudaEventCreate"));
  }
  // The bucket is complete once the producer's queued kernels ran.
  cudaEventRecord(ready, producer);
  cudaStreamWaitEvent(impl_->stream, ready, 0);
  cudaEventDestroy(ready);
  if (ncclResult_t rc = ncclAllReduce(data, data, count, *nccl_type, ncclSum,
                                      impl_->comm, impl_->stream);
      rc != ncclSuccess) {
    return fail(NcclError(rc, "ncclAllReduce"));
  }
  if (cudaError_t rc = cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
      rc != cudaSuccess) {
    return fail(CudaError(rc, "cudaEventCreate"));
  }
  cudaEventRecord(done, impl_->stream);
  return std::make_unique<NcclWork>(impl_, done, absl::OkStatus());
}

absl::Status NcclCommunicator::Broadcast(void* data, size_t bytes, int root) {
  if (impl_->aborted) return absl::AbortedError("communicator aborted");
  if (root < 0 || root >= world_size_) {
    return absl::InvalidArgumentError(absl::StrCat("bad root ", root));
  }
  auto producer = static_cast<cudaStream_t>(impl_->options.producer_stream);
  cudaEvent_t ready = nullptr, done = nullptr;
  cudaEventCreateWithFlags(&ready, cudaEventDisableTiming);
  cudaEventRecord(ready, producer);
  cudaStreamWaitEvent(impl_->stream, ready, 0);
  cudaEventDestroy(ready);
  if (ncclResult_t rc = ncclBroadcast(data, data, bytes, ncclUint8, root,
                                      impl_->comm, impl_->stream);
      rc != ncclSuccess) {
    return NcclError(rc, "ncclBroadcast");
  }
  cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
  cudaEventRecord(done, impl_->stream);
  return NcclWork(impl_, done, absl::OkStatus()).Wait();
}

void NcclCommunicator::Abort() {
  absl::MutexLock lock(&impl_->mu);
  impl_->AbortLocked();
}

}  // namespace ringleader
