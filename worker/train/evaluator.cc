#include "worker/train/evaluator.h"

#include <ATen/core/grad_mode.h>

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "worker/train/job_error.h"

namespace ringleader {
namespace {

std::vector<at::Tensor> ToDevice(const std::vector<at::Tensor>& inputs,
                                 const c10::Device& device) {
  std::vector<at::Tensor> out;
  out.reserve(inputs.size());
  for (const at::Tensor& t : inputs) out.push_back(t.to(device));
  return out;
}

}  // namespace

absl::StatusOr<MetricSums> Evaluate(Model& model, const Task& task,
                                    BatchLoader* loader, const Dataset& data,
                                    const c10::Device& device) {
  MetricSums sums;
  if (loader == nullptr) return sums;
  model.Train(false);
  at::NoGradGuard no_grad;
  absl::Status status;
  while (std::optional<Batch> batch = loader->Next()) {
    const at::Tensor targets = batch->targets.to(device);
    absl::StatusOr<ModelOutput> out =
        model.Forward(ToDevice(batch->inputs, device),
                      task.model_computes_loss() ? targets : at::Tensor());
    if (!out.ok()) {
      status = out.status();
      break;
    }
    status = task.Accumulate(*out, targets, batch->sample_ids, sums);
    if (!status.ok()) break;
  }
  model.Train(true);
  if (status.ok()) status = loader->status();
  if (!status.ok()) {
    return JobError(status,
                    absl::StrCat("evaluating on the ", data.Describe()));
  }
  return sums;
}

}  // namespace ringleader
