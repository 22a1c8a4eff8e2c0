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
// they overlap the compute stream. Each operation first waits (on the GPU,
// through an event) for the work already queued on the producer stream,
// typically LibTorch's current stream, so a bucket is all-reduced only after
// backward wrote it; Work::Wait makes the producer stream wait for the
// operation, again on the GPU (c10d's WorkNCCL::synchronizeStream): the host
// never blocks on a collective, so the GPU's queue is not drained each step.
//
// A watchdog thread of its own polls the outstanding operations: it frees
// finished ones' events for reuse, and tears the communicator down
// (ncclCommAbort) on NCCL's asynchronous error or once an operation is older
// than the timeout. Abort only flags: ncclCommAbort can block (PyTorch
// #102599, NVIDIA/nccl#829), so it runs on the watchdog thread, never on the
// caller's (the heartbeat thread, under the daemon's lock). The communicator
// is nonblocking, so its creation is bounded by the timeout and cancellable.
// Every CUDA call runs with the communicator's device set and is checked; a
// failure aborts the communicator. Thread-safe for Abort; collectives come
// from one thread.
class NcclCommunicator final : public Communicator {
 public:
  struct Options {
    int device = 0;
    absl::Duration timeout = absl::Seconds(60);
    // The stream whose queued work a collective must follow, and which
    // Wait orders after it (a cudaStream_t; null: the legacy default
    // stream).
    void* producer_stream = nullptr;
    // The stream the collectives run on (a cudaStream_t, not owned), with
    // LibTorch's name for it; null: the communicator creates its own.
    void* comm_stream = nullptr;
    DeviceStream comm_stream_name;
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
  // `on_done` runs on a CUDA host-callback thread when the stream has run
  // the operation, aborted or not (the stream goes on after an abort).
  std::unique_ptr<Work> AllReduceSumAsyncThen(
      void* data, size_t count, DataType type,
      std::function<void()> on_done) override;
  // Ordered as an all-reduce waited for: the producer stream follows it.
  absl::Status Broadcast(void* data, size_t bytes, int root) override;
  void Abort() override;
  bool InterruptedAfterUse() const override;
  DeviceStream device_stream() const override;
  std::chrono::milliseconds DeviceWaiting() const override;

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
