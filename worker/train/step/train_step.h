#ifndef RINGLEADER_WORKER_TRAIN_STEP_TRAIN_STEP_H_
#define RINGLEADER_WORKER_TRAIN_STEP_TRAIN_STEP_H_

// One optimizer step of DDP, as micro-batches: buffers from rank 0
// (broadcast_buffers), forward, the task's loss, backward with the reducer
// all-reducing gradient buckets as they fill (or accumulating locally inside
// no_sync), then the averaged gradients' norm measured and clipped, the
// scheduled learning rate set and the optimizer stepped.
// Rank 0's buffers reach the other ranks before each forward as in DDP, but
// for a step's first micro-batch they are sent at the end of the previous
// step, after its gradients' all-reduce and before the optimizer applies it
// (the same values, one collective earlier): so every rank that completes a
// step holds the job's whole state at its end, rank 0's BatchNorm running
// statistics included, which a peer recovery may take from any rank
// (worker/train/peer_recovery.h). The trainer broadcasts the buffers before
// the first step (Reducer::BroadcastParameters).

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/data/batch_loader.h"
#include "worker/ddp/buffer_sync.h"
#include "worker/ddp/reducer.h"
#include "worker/model/model.h"
#include "worker/timeline/timeline.h"
#include "worker/train/step/task.h"

namespace torch::optim {
class Optimizer;
}  // namespace torch::optim

namespace ringleader {

struct StepParts {
  Model* model = nullptr;
  const Task* task = nullptr;
  Reducer* reducer = nullptr;
  BufferSync* buffers = nullptr;  // May be null: no buffers.
  torch::optim::Optimizer* optimizer = nullptr;
  Timeline* timeline = nullptr;  // May be null.
  c10::Device device = c10::Device(c10::kCPU);
  const Dataset* data = nullptr;  // Named in errors.
  // Clip the averaged gradients to this global L2 norm; 0: no clipping.
  double clip_grad_norm = 0;
};

// Not thread-safe: the training thread's.
class TrainStep {
 public:
  // `accumulate` micro-batches per optimizer step (>= 1).
  TrainStep(StepParts parts, int accumulate);

  // Forward and backward of one micro-batch; when `sync`, its backward
  // all-reduces the gradients accumulated since the last step and rank 0's
  // buffers are then broadcast (a failure there leaves the step unapplied,
  // ABORTED like the all-reduce's). Returns the
  // batch's loss, a detached scalar on the device (reading it waits for the
  // device: LossTracker reads it only when a report needs it). A job error when
  // the model fails or does not fit the batch; ABORTED when a collective
  // failed. `rng_seed`, when set, seeds LibTorch's default generators before
  // the forward, so that dropout draws from a stream of the batch's own (see
  // worker/data/sample_stream.h) rather than from whatever ran before.
  absl::StatusOr<at::Tensor> Micro(const Batch& batch, bool sync,
                                   std::optional<uint64_t> rng_seed = {});
  // After the synchronizing micro-batch: the global norm of the averaged
  // gradients before clipping, measured when clipping (then they are clipped
  // too) or when `measure`; nullopt when neither, and on a GPU unless
  // `measure` (reading it waits for the device). Equal on every rank.
  std::optional<double> ClipGradients(bool measure);
  // The optimizer step at learning rate `lr` (every param group's) on the
  // averaged gradients, then zeroed gradients.
  void Apply(double lr);

 private:
  const StepParts parts_;
  const int accumulate_;
  const std::vector<at::Tensor> params_;
  // Micro-batches run since the last synchronizing one: the first of a step
  // (0) already holds rank 0's buffers.
  int micro_in_step_ = 0;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_STEP_TRAIN_STEP_H_
