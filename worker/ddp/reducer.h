#ifndef RINGLEADER_WORKER_DDP_REDUCER_H_
#define RINGLEADER_WORKER_DDP_REDUCER_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "worker/comm/communicator.h"
#include "worker/ddp/bucket_plan.h"
#include "worker/ddp/compression.h"
#include "worker/timeline/timeline.h"

namespace ringleader {

// The core of DistributedDataParallel. Each parameter's gradient lives in a
// slice of a flat bucket buffer (DDP's gradient_as_bucket_view), so autograd
// accumulates straight into what gets all-reduced. A post-hook on every
// parameter's gradient accumulator marks it ready; when all of a bucket's
// parameters are ready, the bucket's all-reduce is launched asynchronously
// (buckets strictly in index order, identically on every rank) while backward
// goes on. FinishBackward waits for them and averages by world size (or,
// with compression, widens the averaged 16-bit buckets back).
//
// Gradient accumulation without sync (no_sync): PrepareForBackward(false)
// lets micro-steps accumulate locally; the next synchronizing backward
// all-reduces the sum.
//
// Gradients must not be reset by an optimizer (that would detach them from
// the buckets): call ZeroGrad() instead of optimizer.zero_grad().
//
// Thread-safety: hooks may run on autograd's device threads; internal state is
// guarded. The public methods are called from one training thread.
class Reducer {
 public:
  struct Options {
    size_t first_bucket_bytes = 1 << 20;
    size_t bucket_cap_bytes = 25 << 20;
    // False: all-reduce every bucket only after backward (the reference
    // path the overlapped one is checked against).
    bool overlap = true;
    // A world of one rank communicates nothing, unless this is set: then
    // every bucket goes through the communicator as at any size, so one GPU
    // exercises hook -> event -> NCCL -> wait (PyTorch's DDP always
    // communicates).
    bool communicate_alone = false;
    // Buckets cross the wire as fp16 or bf16 (worker/ddp/compression.h):
    // each is cast and divided by the world size as it is launched, and
    // widened back once its all-reduce is done. A world of one rank
    // communicates nothing and rounds nothing.
    BucketCompression compression = BucketCompression::kNone;
    // When set and enabled, each bucket's all-reduce is recorded on its
    // communication track, from launch to completion (on the communicator's
    // thread), for the timeline's current step. Must outlive the reducer.
    Timeline* timeline = nullptr;
  };
  struct Stats {
    int64_t allreduce_calls = 0;
    int64_t allreduce_bytes = 0;  // As sent: 2 per element when compressed.
    // Buckets launched before backward returned (overlapped).
    int64_t buckets_launched_during_backward = 0;
    double wait_seconds = 0;  // Time FinishBackward blocked on communication.
  };

  // `params` are dense float32 tensors on the communicator's device, in
  // registration order. Replaces their .grad with bucket views.
  static absl::StatusOr<std::unique_ptr<Reducer>> Create(
      Communicator* comm, std::vector<at::Tensor> params, Options options);
  ~Reducer();

  // Copies every parameter from `root` (rank 0 at start), so all ranks
  // start from the same model. `extra` tensors (buffers) are broadcast too.
  absl::Status BroadcastParameters(const std::vector<at::Tensor>& extra = {},
                                   int root = 0);
  void ZeroGrad();
  // Call before each backward; `sync` false inside no_sync.
  void PrepareForBackward(bool sync);
  // Call after each backward. On a synchronizing step, returns once every
  // gradient is the average over ranks.
  absl::Status FinishBackward();

  const BucketPlan& plan() const;
  Stats stats() const;

 private:
  struct State;
  explicit Reducer(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DDP_REDUCER_H_
