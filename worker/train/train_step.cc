#include "worker/train/train_step.h"

#include <ATen/ATen.h>
#include <torch/optim/optimizer.h>

#include <exception>
#include <vector>

#include "absl/strings/str_cat.h"
#include "worker/model/torch_status.h"
#include "worker/train/job_error.h"

namespace ringleader {

TrainStep::TrainStep(StepParts parts, int accumulate)
    : parts_(parts), accumulate_(std::max(1, accumulate)) {}

absl::StatusOr<at::Tensor> TrainStep::ForwardLoss(const Batch& batch) {
  TimelineSpan span(parts_.timeline, "forward");
  std::vector<at::Tensor> inputs;
  inputs.reserve(batch.inputs.size());
  for (const at::Tensor& t : batch.inputs)
    inputs.push_back(t.to(parts_.device));
  const at::Tensor targets = batch.targets.to(parts_.device);
  absl::StatusOr<ModelOutput> out = parts_.model->Forward(
      inputs, parts_.task->model_computes_loss() ? targets : at::Tensor());
  if (!out.ok()) return out.status();
  return parts_.task->Loss(*out, targets, batch.sample_ids);
}

absl::StatusOr<double> TrainStep::Micro(const Batch& batch, bool sync) {
  if (parts_.buffers != nullptr) {
    if (absl::Status s = parts_.buffers->Sync(); !s.ok()) {
      return CollectiveFailed(s);
    }
  }
  parts_.reducer->PrepareForBackward(sync);
  absl::StatusOr<at::Tensor> loss;
  try {
    loss = ForwardLoss(batch);
  } catch (const std::exception& e) {
    loss = TorchErrorToStatus(absl::StatusCode::kInvalidArgument, "loss", e);
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
  return loss->item<double>();
}

void TrainStep::Apply() {
  TimelineSpan span(parts_.timeline, "optimizer");
  parts_.optimizer->step();
  parts_.reducer->ZeroGrad();
}

}  // namespace ringleader
