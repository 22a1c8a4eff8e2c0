#include "worker/train/evaluator.h"

#include <ATen/core/grad_mode.h>

#include <exception>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "worker/model/torch_status.h"
#include "worker/train/job_error.h"
#include "worker/train/step/batch_forward.h"

namespace ringleader {
absl::StatusOr<MetricSums> Evaluate(Model& model, const Task& task,
                                    BatchLoader* loader, const Dataset& data,
                                    const c10::Device& device) {
  MetricSums sums;
  if (loader == nullptr) return sums;
  model.Train(false);
  at::NoGradGuard no_grad;
  absl::Status status;
  while (std::optional<Batch> batch = loader->Next()) {
    at::Tensor targets;
    absl::StatusOr<ModelOutput> out =
        ForwardBatch(model, task, *batch, device, &targets);
    if (!out.ok()) {
      status = out.status();
      break;
    }
    try {
      status = task.Accumulate(*out, targets, batch->sample_ids, sums);
    } catch (const std::exception& e) {
      status =
          TorchErrorToStatus(absl::StatusCode::kInvalidArgument, "metrics", e);
    }
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
