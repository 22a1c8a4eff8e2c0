#include "worker/cuda/nccl_communicator.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstring>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"

namespace ringleader {

struct NcclCommunicator::Impl {
  Options options;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  // Serializes every NCCL call on `comm` against teardown. The communicator
  // is nonblocking (config.blocking = 0), so no call holds it for long and
  // Abort is never stuck behind one.
  absl::Mutex mu;
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

  // A nonblocking communicator answers ncclInProgress while NCCL finishes an
  // init or an enqueue in the background; this polls its state until it is
  // idle, failing (and aborting) on an asynchronous error, after Abort, when
  // `cancelled` turns true, or past `deadline`.
  absl::Status WaitIdle(absl::Time deadline, absl::string_view what);

  // Queues `op` on the communicator's stream behind the work already queued
  // on the producer stream (a GPU-side wait: the host does not block), and
  // returns an event recorded after it.
  absl::StatusOr<cudaEvent_t> Enqueue(
      absl::FunctionRef<ncclResult_t(ncclComm_t, cudaStream_t)> op,
      absl::string_view what);
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
    // NCCL sums 16-bit floats natively, each addition rounded (compressed
    // gradient buckets; the reducer casts and divides before).
    case DataType::kFloat16:
      return ncclFloat16;
    case DataType::kBFloat16:
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 10, 0)
      return ncclBfloat16;
#else
      return absl::UnimplementedError(
          "bf16 all-reduce needs NCCL 2.10 or later (this build has " +
          std::to_string(NCCL_VERSION_CODE) + ")");
#endif
  }
  return absl::InvalidArgumentError("unsupported data type");
}

}  // namespace

absl::Status NcclCommunicator::Impl::WaitIdle(absl::Time deadline,
                                              absl::string_view what) {
  while (true) {
    {
      absl::MutexLock lock(&mu);
      if (aborted) return absl::AbortedError("communicator aborted");
      ncclResult_t state = ncclSuccess;
      ncclCommGetAsyncError(comm, &state);
      if (state == ncclSuccess) return absl::OkStatus();
      if (state != ncclInProgress) {
        AbortLocked();
        return NcclError(state, what);
      }
      if (options.cancelled != nullptr && options.cancelled->load()) {
        AbortLocked();
        return absl::AbortedError(absl::StrCat(what, ": cancelled"));
      }
      if (absl::Now() > deadline) {
        AbortLocked();
        return absl::DeadlineExceededError(absl::StrCat(
            what, " did not finish in ", absl::FormatDuration(options.timeout),
            "; communicator aborted"));
      }
    }
    // NCCL works in its own threads meanwhile; the sleep bounds CPU use.
    absl::SleepFor(absl::Microseconds(100));
  }
}

absl::StatusOr<cudaEvent_t> NcclCommunicator::Impl::Enqueue(
    absl::FunctionRef<ncclResult_t(ncclComm_t, cudaStream_t)> op,
    absl::string_view what) {
  ncclResult_t rc;
  {
    absl::MutexLock lock(&mu);
    if (aborted) return absl::AbortedError("communicator aborted");
    cudaEvent_t ready = nullptr;
    if (cudaError_t e =
            cudaEventCreateWithFlags(&ready, cudaEventDisableTiming);
        e != cudaSuccess) {
      return CudaError(e, "cudaEventCreate");
    }
    cudaEventRecord(ready, static_cast<cudaStream_t>(options.producer_stream));
    cudaStreamWaitEvent(stream, ready, 0);
    cudaEventDestroy(ready);
    rc = op(comm, stream);
    if (rc != ncclSuccess && rc != ncclInProgress) return NcclError(rc, what);
  }
  if (rc == ncclInProgress) {
    if (absl::Status s = WaitIdle(absl::Now() + options.timeout, what);
        !s.ok()) {
      return s;
    }
  }
  cudaEvent_t done = nullptr;
  if (cudaError_t e = cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
      e != cudaSuccess) {
    return CudaError(e, "cudaEventCreate");
  }
  cudaEventRecord(done, stream);
  return done;
}

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
  // Nonblocking, so a peer that never shows up cannot hang the init: it is
  // bounded by the timeout and by `cancelled`.
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclResult_t rc =
      ncclCommInitRankConfig(&impl->comm, world_size, id, rank, &config);
  if (rc != ncclSuccess && rc != ncclInProgress) {
    cudaStreamDestroy(impl->stream);
    return NcclError(rc, "ncclCommInitRankConfig");
  }
  if (absl::Status s =
          impl->WaitIdle(absl::Now() + options.timeout, "ncclCommInitRank");
      !s.ok()) {
    cudaStreamDestroy(impl->stream);
    return s;
  }
  return std::unique_ptr<NcclCommunicator>(
      new NcclCommunicator(std::move(impl), rank, world_size));
}

NcclCommunicator::~NcclCommunicator() {
  // A nonblocking communicator finalizes in the background: flush it, bounded
  // by the timeout (WaitIdle aborts it past that), then free it.
  bool finalized = false;
  {
    absl::MutexLock lock(&impl_->mu);
    if (!impl_->destroyed && impl_->comm != nullptr) {
      const ncclResult_t rc = ncclCommFinalize(impl_->comm);
      finalized = rc == ncclSuccess || rc == ncclInProgress;
    }
  }
  if (finalized &&
      impl_->WaitIdle(absl::Now() + impl_->options.timeout, "ncclCommFinalize")
          .ok()) {
    absl::MutexLock lock(&impl_->mu);
    ncclCommDestroy(impl_->comm);
    impl_->destroyed = true;
  }
  absl::MutexLock lock(&impl_->mu);
  impl_->AbortLocked();
  if (impl_->stream != nullptr) cudaStreamDestroy(impl_->stream);
}

std::unique_ptr<Work> NcclCommunicator::AllReduceSumAsync(void* data,
                                                          size_t count,
                                                          DataType type) {
  absl::StatusOr<ncclDataType_t> nccl_type = NcclType(type);
  absl::StatusOr<cudaEvent_t> done =
      !nccl_type.ok()
          ? nccl_type.status()
          : impl_->Enqueue(
                [&](ncclComm_t comm, cudaStream_t stream) {
                  return ncclAllReduce(data, data, count, *nccl_type, ncclSum,
                                       comm, stream);
                },
                "ncclAllReduce");
  if (!done.ok())
    return std::make_unique<NcclWork>(impl_, nullptr, done.status());
  return std::make_unique<NcclWork>(impl_, *done, absl::OkStatus());
}

absl::Status NcclCommunicator::Broadcast(void* data, size_t bytes, int root) {
  if (root < 0 || root >= world_size_) {
    return absl::InvalidArgumentError(absl::StrCat("bad root ", root));
  }
  absl::StatusOr<cudaEvent_t> done = impl_->Enqueue(
      [&](ncclComm_t comm, cudaStream_t stream) {
        return ncclBroadcast(data, data, bytes, ncclUint8, root, comm, stream);
      },
      "ncclBroadcast");
  if (!done.ok()) return done.status();
  return NcclWork(impl_, *done, absl::OkStatus()).Wait();
}

void NcclCommunicator::Abort() {
  absl::MutexLock lock(&impl_->mu);
  impl_->AbortLocked();
}

}  // namespace ringleader
