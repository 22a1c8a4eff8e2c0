#ifndef RINGLEADER_WORKER_TRAIN_STEP_TRAIN_STEP_H_
#define RINGLEADER_WORKER_TRAIN_STEP_TRAIN_STEP_H_

// One optimizer step of DDP, policy and execution in one object: the
// micro-batches of a step (forward, the task's loss, backward with the
// reducer all-reducing gradient buckets as they fill, or accumulating
// locally inside no_sync until the step's last micro-batch), then the
// averaged gradients' norm measured and clipped, a non-finite norm refused,
// the scheduled learning rate set and the optimizer stepped. The step owns
// the reducer and the buffer sync (nothing else drives them) and counts the
// micro-batches and the optimizer steps: which micro-batch synchronizes,
// which stream its dropout draws from, which learning rate a step gets are
// decided here, from the job's recipe and where each micro-batch sits.
//
// Rank 0's buffers reach the other ranks before each forward as in DDP
// (broadcast_buffers), but for a step's first micro-batch they are sent at
// the end of the previous step, after its gradients' all-reduce and before
// the optimizer applies it (the same values, one collective earlier): so
// every rank that completes a step holds the job's whole state at its end,
// rank 0's BatchNorm running statistics included, which a peer recovery may
// take from any rank (worker/train/checkpoint/peer_recovery.h).
//
// The hot path adds nothing per parameter to what the reducer does: no
// allocation, lock or virtual call of its own.

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ringleader/v1/job.pb.h"
#include "worker/comm/communicator.h"
#include "worker/data/batch_loader.h"
#include "worker/data/dataset.h"
#include "worker/ddp/reducer.h"
#include "worker/model/model.h"
#include "worker/timeline/timeline.h"
#include "worker/train/step/task.h"

namespace torch::optim {
class Optimizer;
}  // namespace torch::optim

namespace ringleader {

class BufferSync;

// What every step of a job does, from its spec.
struct StepRecipe {
  int accumulate = 1;         // Micro-batches per optimizer step (>= 1).
  double clip_grad_norm = 0;  // Global L2 norm to clip to; 0: no clipping.
  uint64_t seed = 0;          // The job's: each micro-batch's dropout stream.
  v1::LrSchedule lr_schedule;
  double learning_rate = 0;  // The schedule's peak.
  // The job's planned optimizer steps (step_plan.h): the schedule's horizon.
  int64_t planned_steps = 0;
  Reducer::Options reducer;  // Its timeline is the step's.

  // The spec's gradient_accumulation_steps, clip_grad_norm, seed,
  // lr_schedule, optimizer learning rate and ddp section.
  static StepRecipe ForJob(const v1::JobSpec& spec, int64_t planned_steps);
};

// What the step works on; all outlive it.
struct StepParts {
  Model* model = nullptr;
  const Task* task = nullptr;
  torch::optim::Optimizer* optimizer = nullptr;
  Communicator* comm = nullptr;  // Gradients and buffers.
  Timeline* timeline = nullptr;  // May be null.
  c10::Device device = c10::Device(c10::kCPU);
  const Dataset* data = nullptr;  // Named in errors; may be null.
};

// Where a micro-batch sits in its epoch.
struct MicroBatchPlace {
  int64_t epoch = 0;
  // Its first sample's position in the epoch's permutation: its dropout
  // stream (worker/data/sample_stream.h), so a resumed run at the same
  // world size draws the same masks.
  int64_t position = 0;
  // The epoch's last micro-batch ends a step, whatever the accumulation.
  bool last_of_epoch = false;
  // What its loss weighs in the ranks' average (BatchSource::LossWeight):
  // its share of the global batch against the even share, 1 when even.
  double loss_weight = 1.0;
};

// Not thread-safe: the training thread's.
class TrainStep {
 public:
  struct MicroResult {
    // The micro-batch's loss, a detached scalar on the device (reading it
    // waits for the device).
    at::Tensor loss;
    // It was the step's last: the gradients are averaged over the ranks
    // and Apply is next.
    bool completes_step = false;
    // The host's time in forward and backward, without the waits for the
    // ranks' all-reduces and buffers: what the balancer compares.
    absl::Duration busy;
  };

  // `steps_done`: the optimizer steps the job made before (a resume).
  // Replaces the parameters' gradients with the reducer's bucket views.
  static absl::StatusOr<std::unique_ptr<TrainStep>> Create(
      StepParts parts, StepRecipe recipe, int64_t steps_done = 0);
  ~TrainStep();

  // Rank 0's parameters and buffers to every rank, gradients zeroed: the
  // replicas start alike. ABORTED when a collective fails.
  absl::Status BroadcastFromRoot();

  // Forward and backward of one micro-batch at `place`. A job error when
  // the model fails or does not fit the batch; ABORTED when a collective
  // failed (the step is then not applied).
  absl::StatusOr<MicroResult> Micro(const Batch& batch,
                                    const MicroBatchPlace& place);

  // After the micro-batch that completed the step: the averaged gradients'
  // global norm, measured when clipping (then they are clipped) or when
  // `measure_norm` (nullopt otherwise, and on a GPU unless `measure_norm`:
  // reading it waits for the device); then the optimizer step at the
  // scheduled learning rate, and zeroed gradients. A job error, with
  // nothing applied, when the measured norm is not finite (every rank holds
  // the same averaged gradients, so every rank that measured refuses).
  absl::StatusOr<std::optional<double>> Apply(bool measure_norm);

  // Rank 0's buffers to every rank (before an evaluation, as DDP's wrapper
  // does before any forward). ABORTED when the collective fails.
  absl::Status SyncBuffers();

  // Optimizer steps the job has made, the resumed ones included.
  int64_t done() const { return done_; }
  // The learning rate the latest applied step used (0: none yet).
  double learning_rate() const { return learning_rate_; }

 private:
  TrainStep(StepParts parts, StepRecipe recipe, int64_t steps_done,
            std::unique_ptr<Reducer> reducer,
            std::unique_ptr<BufferSync> buffers);
  // The norm as Apply describes it, clipping when the recipe says so.
  std::optional<double> ClipGradients(bool measure);

  const StepParts parts_;
  const StepRecipe recipe_;
  const std::vector<at::Tensor> params_;
  const std::unique_ptr<Reducer> reducer_;
  const std::unique_ptr<BufferSync> buffers_;
  int64_t done_ = 0;
  double learning_rate_ = 0;
  // Micro-batches run since the last step: the first of a step (0) already
  // holds rank 0's buffers.
  int micro_in_step_ = 0;
  // The epoch of the latest micro-batch (named in Apply's error).
  int64_t epoch_ = 0;
  // The latest micro-batch completed its step: Apply may run.
  bool ready_ = false;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_STEP_TRAIN_STEP_H_
