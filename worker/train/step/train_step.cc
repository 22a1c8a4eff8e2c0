#include "worker/train/step/train_step.h"

#include <ATen/ATen.h>
#include <torch/optim/optimizer.h>
#include <torch/utils.h>

#include <cmath>
#include <exception>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "worker/data/sample_stream.h"
#include "worker/ddp/buffer_sync.h"
#include "worker/model/optimizer.h"
#include "worker/model/torch_status.h"
#include "worker/train/job_error.h"
#include "worker/train/step/batch_forward.h"
#include "worker/train/step/grad_clip.h"
#include "worker/train/step/lr_schedule.h"
#include "worker/train/step/reducer_options.h"

namespace ringleader {

StepRecipe StepRecipe::ForJob(const v1::JobSpec& spec, int64_t planned_steps) {
  StepRecipe r;
  r.accumulate = std::max(1, spec.gradient_accumulation_steps());
  r.clip_grad_norm = spec.clip_grad_norm();
  r.seed = spec.seed();
  r.lr_schedule = spec.lr_schedule();
  r.learning_rate = spec.optimizer().learning_rate();
  r.planned_steps = planned_steps;
  r.reducer = ReducerOptionsFor(spec.ddp());
  return r;
}

absl::StatusOr<std::unique_ptr<TrainStep>> TrainStep::Create(
    StepParts parts, StepRecipe recipe, int64_t steps_done) {
  recipe.accumulate = std::max(1, recipe.accumulate);
  recipe.reducer.timeline = parts.timeline;
  absl::StatusOr<std::unique_ptr<Reducer>> reducer =
      Reducer::Create(parts.comm, parts.model->Parameters(), recipe.reducer);
  if (!reducer.ok()) return reducer.status();
  std::vector<at::Tensor> buffers;
  for (const NamedTensor& b : parts.model->NamedBuffers()) {
    buffers.push_back(b.tensor);
  }
  absl::StatusOr<std::unique_ptr<BufferSync>> sync =
      BufferSync::Create(parts.comm, std::move(buffers));
  if (!sync.ok()) return sync.status();
  return std::unique_ptr<TrainStep>(
      new TrainStep(parts, std::move(recipe), steps_done, *std::move(reducer),
                    *std::move(sync)));
}

TrainStep::TrainStep(StepParts parts, StepRecipe recipe, int64_t steps_done,
                     std::unique_ptr<Reducer> reducer,
                     std::unique_ptr<BufferSync> buffers)
    : parts_(parts),
      recipe_(std::move(recipe)),
      params_(parts.model->Parameters()),
      reducer_(std::move(reducer)),
      buffers_(std::move(buffers)),
      done_(steps_done) {}

// The reducer waits for its all-reduces, which may still record into the
// timeline.
TrainStep::~TrainStep() = default;

absl::Status TrainStep::BroadcastFromRoot() {
  std::vector<at::Tensor> buffers;
  for (const NamedTensor& b : parts_.model->NamedBuffers()) {
    buffers.push_back(b.tensor);
  }
  if (absl::Status s = reducer_->BroadcastParameters(buffers); !s.ok()) {
    return CollectiveFailed(s);
  }
  reducer_->ZeroGrad();
  return absl::OkStatus();
}

absl::StatusOr<TrainStep::MicroResult> TrainStep::Micro(
    const Batch& batch, const MicroBatchPlace& place) {
  const bool sync =
      micro_in_step_ + 1 >= recipe_.accumulate || place.last_of_epoch;
  ready_ = false;
  epoch_ = place.epoch;
  torch::manual_seed(
      SampleStreamSeed(recipe_.seed, place.epoch, place.position));
  if (micro_in_step_ > 0) {
    if (absl::Status s = SyncBuffers(); !s.ok()) return s;
  }
  const absl::Time started = absl::Now();
  ++micro_in_step_;
  reducer_->PrepareForBackward(sync);
  absl::StatusOr<at::Tensor> loss;
  {
    TimelineSpan span(parts_.timeline, "forward", Phase::kForward);
    loss = BatchLoss(*parts_.model, *parts_.task, batch, parts_.device);
  }
  if (!loss.ok()) {
    return JobError(loss.status(), parts_.data == nullptr
                                       ? std::string("training")
                                       : absl::StrCat("training on the ",
                                                      parts_.data->Describe()));
  }
  if (sync) {
    // This step's last forward is done, and with it every change the step
    // makes to the buffers: rank 0's go out now, under backward, which
    // reads none of them, and every rank takes them after the all-reduce.
    TimelineSpan span(parts_.timeline, "buffer_sync", Phase::kBufferSync);
    if (absl::Status s = buffers_->Launch(); !s.ok()) {
      return CollectiveFailed(s);
    }
  }
  try {
    TimelineSpan span(parts_.timeline, "backward", Phase::kBackward);
    // Weighted, the ranks' sum of gradients divided by W is the global
    // batch's mean whatever its split.
    const at::Tensor scaled =
        place.loss_weight == 1.0
            ? *loss / recipe_.accumulate
            : *loss * (place.loss_weight / recipe_.accumulate);
    scaled.backward();
  } catch (const std::exception& e) {
    return JobError(TorchErrorToStatus(absl::StatusCode::kInvalidArgument,
                                       "backward failed", e));
  }
  const absl::Duration busy = absl::Now() - started;
  {
    TimelineSpan span(sync ? parts_.timeline : nullptr, "allreduce_wait",
                      Phase::kAllReduceWait);
    if (absl::Status s = reducer_->FinishBackward(); !s.ok()) {
      return CollectiveFailed(s);
    }
  }
  if (sync) {
    // Rank 0's buffers as the next step will use them, on every rank before
    // the step is applied.
    TimelineSpan span(parts_.timeline, "buffer_sync", Phase::kBufferSync);
    if (absl::Status s = buffers_->Finish(); !s.ok()) {
      return CollectiveFailed(s);
    }
    micro_in_step_ = 0;
    ready_ = true;
  }
  return MicroResult{loss->detach(), sync, busy};
}

std::optional<double> TrainStep::ClipGradients(bool measure) {
  const bool clip = recipe_.clip_grad_norm > 0;
  if (!clip && !measure) return std::nullopt;
  TimelineSpan span(parts_.timeline, clip ? "clip_grad_norm" : "grad_norm",
                    Phase::kOptimizer);
  if (!parts_.device.is_cuda()) {
    return ClipGradNorm(params_, recipe_.clip_grad_norm);
  }
  const at::Tensor total =
      ClipGradNormOnDevice(params_, recipe_.clip_grad_norm);
  if (!total.defined()) return 0.0;
  // Read only for a report: reading waits for the device.
  if (!measure) return std::nullopt;
  return total.item<double>();
}

absl::StatusOr<std::optional<double>> TrainStep::Apply(bool measure_norm) {
  if (!ready_) {
    return absl::FailedPreconditionError(
        "no micro-batch completed the step to apply");
  }
  ready_ = false;
  // Measured on every step when clipping, else only when asked: the norm
  // costs a pass over the gradients.
  const std::optional<double> norm = ClipGradients(measure_norm);
  if (norm.has_value() && !std::isfinite(*norm)) {
    // Stepping would make every parameter NaN.
    return JobError(absl::InvalidArgumentError(absl::StrCat(
        "the gradient norm is ", *norm, " at step ", done_ + 1, " (epoch ",
        epoch_,
        "; lower the learning rate, clip gradients or check the data)")));
  }
  const double lr = LearningRateAt(recipe_.lr_schedule, recipe_.learning_rate,
                                   done_, recipe_.planned_steps);
  {
    TimelineSpan span(parts_.timeline, "optimizer", Phase::kOptimizer);
    SetLearningRate(*parts_.optimizer, lr);
    parts_.optimizer->step();
    reducer_->ZeroGrad();
  }
  ++done_;
  learning_rate_ = lr;
  return norm;
}

absl::Status TrainStep::SyncBuffers() {
  TimelineSpan span(parts_.timeline, "buffer_sync", Phase::kBufferSync);
  if (absl::Status s = buffers_->Sync(); !s.ok()) return CollectiveFailed(s);
  return absl::OkStatus();
}

}  // namespace ringleader
