#ifndef RINGLEADER_WORKER_CUDA_NCCL_COMMUNICATOR_H_
#define RINGLEADER_WORKER_CUDA_NCCL_COMMUNICATOR_H_

#include <atomic>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "worker/comm/communicator.h"

namespace ringleader {

// Collectives over CUDA device memory with NCCL, on a stream of its own so
// they overlap the compute stream: each operation first waits (on the GPU,
// through an event) for the work already queued on the producer stream,
// typically LibTorch's current stream, so a bucket is all-reduced only after
// backward wrote it, without a host synchronization and without staging
// through host memory. The NCCL communicator is nonblocking, so its creation
// is bounded by the timeout too, and Abort never waits behind a call into
// NCCL. Work::Wait blocks the host until the collective is
// done, polling NCCL's asynchronous error state; past the timeout, or after
// Abort, the communicator is torn down with ncclCommAbort so no rank hangs on
// a dead peer. Thread-safe for Abort; collectives come from one thread.
class NcclCommunicator final : public Communicator {
 public:
  struct Options {
    int device = 0;
    absl::Duration timeout = absl::Seconds(60);
    // The stream whose queued work a collective must follow (a cudaStream_t;
    // null: the legacy default stream).
    void* producer_stream = nullptr;
    // Creation gives up (ABORTED) once this turns true: the daemon's flag for
    // "the coordinator ended this generation". May be null.
    const std::atomic<bool>* cancelled = nullptr;
  };

  // `unique_id` is rank 0's ncclUniqueId (128 bytes), handed out by the
  // coordinator (PublishNcclId / FetchNcclId).
  static absl::StatusOr<std::unique_ptr<NcclCommunicator>> Create(
      const std::string& unique_id, int rank, int world_size, Options options);
  ~NcclCommunicator() override;

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  std::unique_ptr<Work> AllReduceSumAsync(void* data, size_t count,
                                          DataType type) override;
  absl::Status Broadcast(void* data, size_t bytes, int root) override;
  void Abort() override;

 private:
  struct Impl;
  class NcclWork;
  NcclCommunicator(std::shared_ptr<Impl> impl, int rank, int world_size)
      : impl_(std::move(impl)), rank_(rank), world_size_(world_size) {}

  std::shared_ptr<Impl> impl_;
  const int rank_;
  const int world_size_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_CUDA_NCCL_COMMUNICATOR_H_
