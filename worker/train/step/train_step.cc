#include "worker/train/step/train_step.h"

#include <ATen/ATen.h>
#include <torch/optim/optimizer.h>
#include <torch/utils.h>

#include <exception>
#include <vector>

#include "absl/strings/str_cat.h"
#include "worker/model/optimizer.h"
#include "worker/model/torch_status.h"
#include "worker/train/job_error.h"
#include "worker/train/step/batch_forward.h"
#include "worker/train/step/grad_clip.h"

namespace ringleader {

TrainStep::TrainStep(StepParts parts, int accumulate)
    : parts_(parts),
      accumulate_(std::max(1, accumulate)),
      params_(parts.model->Parameters()) {}

absl::StatusOr<at::Tensor> TrainStep::Micro(const Batch& batch, bool sync,
                                            std::optional<uint64_t> rng_seed) {
  if (rng_seed.has_value()) torch::manual_seed(*rng_seed);
  if (parts_.buffers != nullptr && micro_in_step_ > 0) {
    if (absl::Status s = parts_.buffers->Sync(); !s.ok()) {
      return CollectiveFailed(s);
    }
  }
  ++micro_in_step_;
  parts_.reducer->PrepareForBackward(sync);
  absl::StatusOr<at::Tensor> loss;
  {
    TimelineSpan span(parts_.timeline, "forward");
    loss = BatchLoss(*parts_.model, *parts_.task, batch, parts_.device);
  }
  if (!loss.ok()) {
    return JobError(loss.status(), parts_.data == nullptr
                                       ? std::string("training")
                                       : absl::StrCat("training on the ",
                                                      parts_.data->Describe()));
  }
  try {
    TimelineSpan span(parts_.timeline, "backward");
    (*loss / accumulate_).backward();
  } catch (const std::exception& e) {
    return JobError(TorchErrorToStatus(absl::StatusCode::kInvalidArgument,
                                       "backward failed", e));
  }
  {
    TimelineSpan span(sync ? parts_.timeline : nullptr, "allreduce_wait");
    if (absl::Status s = parts_.reducer->FinishBackward(); !s.ok()) {
      return CollectiveFailed(s);
    }
  }
  if (sync) {
    // This step's last forward is done: rank 0's buffers as the next step
    // will use them, on every rank before the step is applied.
    if (parts_.buffers != nullptr) {
      if (absl::Status s = parts_.buffers->Sync(); !s.ok()) {
        return CollectiveFailed(s);
      }
    }
    micro_in_step_ = 0;
  }
  return loss->detach();
}

std::optional<double> TrainStep::ClipGradients(bool measure) {
  const bool clip = parts_.clip_grad_norm > 0;
  if (!clip && !measure) return std::nullopt;
  TimelineSpan span(parts_.timeline, clip ? "clip_grad_norm" : "grad_norm");
  if (!parts_.device.is_cuda()) {
    return ClipGradNorm(params_, parts_.clip_grad_norm);
  }
  const at::Tensor total = ClipGradNormOnDevice(params_, parts_.clip_grad_norm);
  if (!total.defined()) return 0.0;
  // Read only for a report: reading waits for the device.
  if (!measure) return std::nullopt;
  return total.item<double>();
}

void TrainStep::Apply(double lr) {
  TimelineSpan span(parts_.timeline, "optimizer");
  SetLearningRate(*parts_.optimizer, lr);
  parts_.optimizer->step();
  parts_.reducer->ZeroGrad();
}

}  // namespace ringleader
