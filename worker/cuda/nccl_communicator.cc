#include "worker/cuda/nccl_communicator.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstring>
#include <deque>
#include <string>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "glog/logging.h"
#include "worker/cuda/cuda_device_guard.h"

namespace ringleader {
namespace {

// How often the watchdog looks at outstanding operations. It only frees
// events and enforces the timeout (seconds); completion itself is seen by
// the GPU (Wait) and by the timeline's host callback, not by this poll.
constexpr absl::Duration kWatchdogPoll = absl::Milliseconds(2);
// How long an Abort lets the collectives the device already uses finish
// before tearing down: with live peers (a scale-up, the host a step ahead of
// the GPU) they complete in milliseconds and the state stays good; a dead
// peer's never do.
constexpr absl::Duration kAbortGrace = absl::Milliseconds(250);

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

// Runs a host callback queued with cudaLaunchHostFunc, once.
void CUDART_CB RunHostCallback(void* data) {
  std::unique_ptr<std::function<void()>> f(
      static_cast<std::function<void()>*>(data));
  (*f)();
}

}  // namespace

// One collective queued on the communicator's stream.
struct NcclOp {
  cudaEvent_t done = nullptr;  // Recorded after it; recycled once finished.
  absl::Time issued;
  absl::Time deadline;
  bool used = false;      // A Wait ordered the producer stream after it.
  bool finished = false;  // Ran to completion before any teardown.
};

struct NcclCommunicator::Impl {
  Options options;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  bool owns_stream = false;
  // Orders the communicator's stream after the producer's queued work;
  // re-recorded for each operation (a wait captures the record it follows).
  cudaEvent_t ready = nullptr;
  std::thread watchdog;

  // Serializes every NCCL call on `comm` against teardown. The communicator
  // is nonblocking (config.blocking = 0), so no call holds it for long.
  mutable absl::Mutex mu;
  // The first failure; set once, every later operation fails with it.
  absl::Status failure ABSL_GUARDED_BY(mu);
  bool torn_down ABSL_GUARDED_BY(mu) = false;  // No NCCL call on comm after.
  bool interrupted_after_use ABSL_GUARDED_BY(mu) = false;
  // Abort tears down once nothing in use is outstanding, or after this.
  absl::Time grace_until ABSL_GUARDED_BY(mu) = absl::InfinitePast();
  bool stopping ABSL_GUARDED_BY(mu) = false;
  bool watchdog_exited ABSL_GUARDED_BY(mu) = false;
  std::deque<std::shared_ptr<NcclOp>> pending ABSL_GUARDED_BY(mu);
  std::vector<cudaEvent_t> free_events ABSL_GUARDED_BY(mu);

  ~Impl();

  // Records the first failure, as ABORTED naming its cause, and returns it;
  // the watchdog then tears the communicator down.
  absl::Status FailLocked(const absl::Status& cause)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    MarkFailedLocked(cause);
    return failure;
  }
  void MarkFailedLocked(const absl::Status& cause)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // A collective the device was told to use has not finished.
  bool UsedUnfinishedLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    for (const auto& op : pending) {
      if (op->used && !op->finished) return true;
    }
    return false;
  }
  bool MustTearDownLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return !failure.ok() && !torn_down &&
           (!UsedUnfinishedLocked() || absl::Now() >= grace_until);
  }
  // A nonblocking communicator answers ncclInProgress while NCCL finishes an
  // init or an enqueue in the background; this polls its state until it is
  // idle, failing on an asynchronous error, after Abort, when `cancelled`
  // turns true, or past `deadline`.
  absl::Status WaitIdle(absl::Time deadline, absl::string_view what);
  // Queues `op` on the communicator's stream behind the producer stream's
  // queued work (a GPU-side wait: the host does not block).
  absl::StatusOr<std::shared_ptr<NcclOp>> Enqueue(
      absl::FunctionRef<ncclResult_t(ncclComm_t, cudaStream_t)> op,
      absl::string_view what);
  absl::StatusOr<cudaEvent_t> AcquireEventLocked()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Orders the producer stream after `op` (c10d's synchronizeStream).
  absl::Status Use(NcclOp& op);

  void WatchdogLoop();
  void PollLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  void TearDownLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // A healthy communicator is finalized and destroyed, bounded by the
  // timeout; otherwise the watchdog has aborted it or will.
  void Finalize();
  // Ends the watchdog, waiting for a teardown in progress up to the timeout.
  void StopWatchdog();
};

NcclCommunicator::Impl::~Impl() {
  CudaDeviceGuard guard(options.device);
  absl::MutexLock lock(&mu);
  for (cudaEvent_t e : free_events) cudaEventDestroy(e);
  for (const auto& op : pending) {
    if (op->done != nullptr) cudaEventDestroy(op->done);
  }
  if (ready != nullptr) cudaEventDestroy(ready);
  if (owns_stream && stream != nullptr) cudaStreamDestroy(stream);
}

void NcclCommunicator::Impl::MarkFailedLocked(const absl::Status& cause) {
  if (!failure.ok()) return;
  failure = absl::IsAborted(cause)
                ? cause
                : absl::AbortedError(
                      absl::StrCat(cause.message(), "; communicator aborted"));
}

absl::Status NcclCommunicator::Impl::WaitIdle(absl::Time deadline,
                                              absl::string_view what) {
  while (true) {
    {
      absl::MutexLock lock(&mu);
      if (!failure.ok()) return failure;
      ncclResult_t state = ncclSuccess;
      ncclCommGetAsyncError(comm, &state);
      if (state == ncclSuccess) return absl::OkStatus();
      if (state != ncclInProgress) return FailLocked(NcclError(state, what));
      if (options.cancelled != nullptr && options.cancelled->load()) {
        return FailLocked(
            absl::AbortedError(absl::StrCat(what, ": cancelled")));
      }
      if (absl::Now() > deadline) {
        return FailLocked(absl::DeadlineExceededError(
            absl::StrCat(what, " did not finish in ",
                         absl::FormatDuration(options.timeout))));
      }
    }
    // NCCL works in its own threads meanwhile; the sleep bounds CPU use.
    absl::SleepFor(absl::Microseconds(100));
  }
}

absl::StatusOr<cudaEvent_t> NcclCommunicator::Impl::AcquireEventLocked() {
  if (!free_events.empty()) {
    cudaEvent_t e = free_events.back();
    free_events.pop_back();
    return e;
  }
  cudaEvent_t e = nullptr;
  if (cudaError_t rc = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
      rc != cudaSuccess) {
    return FailLocked(CudaError(rc, "cudaEventCreate"));
  }
  return e;
}

absl::StatusOr<std::shared_ptr<NcclOp>> NcclCommunicator::Impl::Enqueue(
    absl::FunctionRef<ncclResult_t(ncclComm_t, cudaStream_t)> op,
    absl::string_view what) {
  CudaDeviceGuard guard(options.device);
  ncclResult_t rc;
  {
    absl::MutexLock lock(&mu);
    if (!failure.ok()) return failure;
    if (absl::Status s = guard.status(options.device); !s.ok()) {
      return FailLocked(s);
    }
    cudaStream_t producer = static_cast<cudaStream_t>(options.producer_stream);
    if (cudaError_t e = cudaEventRecord(ready, producer); e != cudaSuccess) {
      return FailLocked(CudaError(e, "cudaEventRecord on the producer stream"));
    }
    if (cudaError_t e = cudaStreamWaitEvent(stream, ready, 0);
        e != cudaSuccess) {
      return FailLocked(CudaError(e, "cudaStreamWaitEvent"));
    }
    rc = op(comm, stream);
    if (rc != ncclSuccess && rc != ncclInProgress) {
      return FailLocked(NcclError(rc, what));
    }
  }
  if (rc == ncclInProgress) {
    if (absl::Status s = WaitIdle(absl::Now() + options.timeout, what);
        !s.ok()) {
      return s;
    }
  }
  absl::MutexLock lock(&mu);
  if (!failure.ok()) return failure;
  absl::StatusOr<cudaEvent_t> done = AcquireEventLocked();
  if (!done.ok()) return done.status();
  if (cudaError_t e = cudaEventRecord(*done, stream); e != cudaSuccess) {
    cudaEventDestroy(*done);
    return FailLocked(CudaError(e, "cudaEventRecord"));
  }
  auto queued = std::make_shared<NcclOp>();
  queued->done = *done;
  queued->issued = absl::Now();
  queued->deadline = queued->issued + options.timeout;
  pending.push_back(queued);
  return queued;
}

absl::Status NcclCommunicator::Impl::Use(NcclOp& op) {
  CudaDeviceGuard guard(options.device);
  absl::MutexLock lock(&mu);
  if (op.finished) return absl::OkStatus();  // Done: nothing to order.
  if (!failure.ok()) return failure;
  if (absl::Status s = guard.status(options.device); !s.ok()) {
    return FailLocked(s);
  }
  if (cudaError_t e = cudaStreamWaitEvent(
          static_cast<cudaStream_t>(options.producer_stream), op.done, 0);
      e != cudaSuccess) {
    return FailLocked(CudaError(e, "cudaStreamWaitEvent"));
  }
  op.used = true;
  return absl::OkStatus();
}

void NcclCommunicator::Impl::PollLocked() {
  // One stream runs the operations in order: the first unfinished one is
  // the oldest, the one the timeout is about.
  while (!pending.empty()) {
    NcclOp& op = *pending.front();
    const cudaError_t q = cudaEventQuery(op.done);
    if (q == cudaErrorNotReady) {
      if (failure.ok() && absl::Now() > op.deadline) {
        MarkFailedLocked(absl::DeadlineExceededError(
            absl::StrCat("NCCL collective did not finish in ",
                         absl::FormatDuration(options.timeout))));
      }
      break;
    }
    if (q != cudaSuccess) {
      MarkFailedLocked(CudaError(q, "NCCL collective"));
      break;
    }
    // After a teardown the stream still runs what was queued, with
    // meaningless results: only an earlier completion counts.
    if (!torn_down) op.finished = true;
    free_events.push_back(op.done);
    op.done = nullptr;
    pending.pop_front();
  }
  if (!torn_down && failure.ok()) {
    ncclResult_t async = ncclSuccess;
    ncclCommGetAsyncError(comm, &async);
    if (async != ncclSuccess && async != ncclInProgress) {
      MarkFailedLocked(NcclError(async, "NCCL failed asynchronously"));
    }
  }
}

void NcclCommunicator::Impl::TearDownLocked() {
  // What completed before the abort is a real result; what the device was
  // told to use and has not got makes the state computed after it wrong.
  for (const auto& op : pending) {
    if (!op->finished && cudaEventQuery(op->done) == cudaSuccess) {
      op->finished = true;
    } else if (op->used && !op->finished) {
      interrupted_after_use = true;
    }
  }
  torn_down = true;
  ncclComm_t c = comm;
  // ncclCommAbort can block for a long time (a peer's proxy, a hung
  // kernel): the lock is free meanwhile, so callers see the failure at once.
  mu.Unlock();
  if (c != nullptr) ncclCommAbort(c);
  mu.Lock();
}

void NcclCommunicator::Impl::WatchdogLoop() {
  // The current device is per thread: this one's for its CUDA calls.
  CudaDeviceGuard guard(options.device);
  absl::MutexLock lock(&mu);
  auto wake = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return stopping || MustTearDownLocked() || !pending.empty();
  };
  auto wake_early = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return stopping || MustTearDownLocked();
  };
  while (true) {
    if (pending.empty()) {
      mu.Await(absl::Condition(&wake));
    } else {
      mu.AwaitWithTimeout(absl::Condition(&wake_early), kWatchdogPoll);
    }
    PollLocked();
    // Stopping ends the grace: the communicator goes away now.
    if (MustTearDownLocked() || (stopping && !failure.ok() && !torn_down)) {
      TearDownLocked();
    }
    if (stopping) break;
  }
  watchdog_exited = true;
}

void NcclCommunicator::Impl::Finalize() {
  CudaDeviceGuard guard(options.device);
  {
    absl::MutexLock lock(&mu);
    if (!failure.ok() || torn_down) return;
    const ncclResult_t rc = ncclCommFinalize(comm);
    if (rc != ncclSuccess && rc != ncclInProgress) {
      MarkFailedLocked(NcclError(rc, "ncclCommFinalize"));
      return;
    }
  }
  // A nonblocking communicator finalizes in the background: flush it,
  // bounded by the timeout (past it the watchdog aborts it).
  if (!WaitIdle(absl::Now() + options.timeout, "ncclCommFinalize").ok()) {
    return;
  }
  absl::MutexLock lock(&mu);
  if (torn_down) return;
  torn_down = true;
  ncclCommDestroy(comm);
}

void NcclCommunicator::Impl::StopWatchdog() {
  if (!watchdog.joinable()) return;
  bool exited;
  {
    absl::MutexLock lock(&mu);
    stopping = true;
    exited = mu.AwaitWithTimeout(absl::Condition(&watchdog_exited),
                                 options.timeout + absl::Seconds(5));
  }
  if (exited) {
    watchdog.join();
    return;
  }
  // A teardown stuck inside NCCL: leave its thread (it holds this Impl) so
  // the daemon goes on; the process's exit ends it.
  LOG(ERROR) << "ncclCommAbort on cuda:" << options.device
             << " still blocked after "
             << absl::FormatDuration(options.timeout + absl::Seconds(5))
             << "; leaving it behind";
  watchdog.detach();
}

class NcclCommunicator::NcclWork final : public Work {
 public:
  NcclWork(std::shared_ptr<Impl> impl,
           absl::StatusOr<std::shared_ptr<NcclOp>> op)
      : impl_(std::move(impl)), op_(std::move(op)) {}
  absl::Status Wait() override {
    if (!op_.ok()) return op_.status();
    return impl_->Use(**op_);
  }

 private:
  std::shared_ptr<Impl> impl_;
  absl::StatusOr<std::shared_ptr<NcclOp>> op_;
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
  CudaDeviceGuard guard(options.device);
  if (absl::Status s = guard.status(options.device); !s.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot use cuda:", options.device, ": ", s.message()));
  }
  auto impl = std::make_shared<Impl>();
  impl->options = options;
  impl->stream = static_cast<cudaStream_t>(options.comm_stream);
  if (impl->stream == nullptr) {
    if (cudaError_t rc =
            cudaStreamCreateWithFlags(&impl->stream, cudaStreamNonBlocking);
        rc != cudaSuccess) {
      return CudaError(rc, "cannot create the communicator's stream");
    }
    impl->owns_stream = true;
  }
  if (cudaError_t rc =
          cudaEventCreateWithFlags(&impl->ready, cudaEventDisableTiming);
      rc != cudaSuccess) {
    return CudaError(rc, "cudaEventCreate");
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
    return NcclError(rc, "ncclCommInitRankConfig");
  }
  // From here a failure is torn down by the watchdog, as later ones are.
  impl->watchdog = std::thread([impl] { impl->WatchdogLoop(); });
  if (absl::Status s =
          impl->WaitIdle(absl::Now() + options.timeout, "ncclCommInitRank");
      !s.ok()) {
    impl->StopWatchdog();
    return s;
  }
  return std::unique_ptr<NcclCommunicator>(
      new NcclCommunicator(std::move(impl), rank, world_size));
}

NcclCommunicator::~NcclCommunicator() {
  impl_->Finalize();
  impl_->StopWatchdog();
}

std::unique_ptr<Work> NcclCommunicator::AllReduceSumAsync(void* data,
                                                          size_t count,
                                                          DataType type) {
  return AllReduceSumAsyncThen(data, count, type, nullptr);
}

std::unique_ptr<Work> NcclCommunicator::AllReduceSumAsyncThen(
    void* data, size_t count, DataType type, std::function<void()> on_done) {
  absl::StatusOr<ncclDataType_t> nccl_type = NcclType(type);
  absl::StatusOr<std::shared_ptr<NcclOp>> op =
      !nccl_type.ok()
          ? nccl_type.status()
          : impl_->Enqueue(
                [&](ncclComm_t comm, cudaStream_t stream) {
                  return ncclAllReduce(data, data, count, *nccl_type, ncclSum,
                                       comm, stream);
                },
                "ncclAllReduce");
  if (on_done) {
    // The timeline's completion time, without a host poll: the stream
    // calls back once it has run the operation.
    auto* f = new std::function<void()>(std::move(on_done));
    CudaDeviceGuard guard(impl_->options.device);
    if (!op.ok() ||
        cudaLaunchHostFunc(impl_->stream, RunHostCallback, f) != cudaSuccess) {
      RunHostCallback(f);
    }
  }
  return std::make_unique<NcclWork>(impl_, std::move(op));
}

absl::Status NcclCommunicator::Broadcast(void* data, size_t bytes, int root) {
  if (root < 0 || root >= world_size_) {
    return absl::InvalidArgumentError(absl::StrCat("bad root ", root));
  }
  return NcclWork(impl_, impl_->Enqueue(
                             [&](ncclComm_t comm, cudaStream_t stream) {
                               return ncclBroadcast(data, data, bytes,
                                                    ncclUint8, root, comm,
                                                    stream);
                             },
                             "ncclBroadcast"))
      .Wait();
}

void NcclCommunicator::Abort() {
  absl::MutexLock lock(&impl_->mu);
  if (impl_->failure.ok()) impl_->grace_until = absl::Now() + kAbortGrace;
  impl_->MarkFailedLocked(absl::AbortedError("communicator aborted"));
}

bool NcclCommunicator::InterruptedAfterUse() const {
  absl::MutexLock lock(&impl_->mu);
  // Known once the teardown has judged it (at most the grace after a
  // failure).
  auto judged = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(impl_->mu) {
    return impl_->failure.ok() || impl_->torn_down;
  };
  impl_->mu.AwaitWithTimeout(absl::Condition(&judged),
                             kAbortGrace + absl::Seconds(1));
  return impl_->interrupted_after_use ||
         (!impl_->torn_down && impl_->UsedUnfinishedLocked());
}

std::chrono::milliseconds NcclCommunicator::DeviceWaiting() const {
  absl::MutexLock lock(&impl_->mu);
  // Operations finish in order on the one stream: the first is the oldest
  // (one finished since the watchdog's last poll, at most 2 ms ago, still
  // counts).
  if (!impl_->failure.ok() || impl_->pending.empty()) {
    return std::chrono::milliseconds(0);
  }
  return std::chrono::milliseconds(
      absl::ToInt64Milliseconds(absl::Now() - impl_->pending.front()->issued) +
      1);
}

Communicator::DeviceStream NcclCommunicator::device_stream() const {
  return impl_->options.comm_stream_name;
}

}  // namespace ringleader
