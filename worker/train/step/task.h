#ifndef RINGLEADER_WORKER_TRAIN_STEP_TASK_H_
#define RINGLEADER_WORKER_TRAIN_STEP_TASK_H_

// What a job's model learns (JobSpec.task): how a batch's output and targets
// make the training loss, and the sums behind the evaluation metrics -
// torch's nn.CrossEntropyLoss / MSELoss / L1Loss, or the loss the model
// computed itself.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ringleader/v1/job.pb.h"
#include "worker/model/model.h"
#include "worker/train/metric_sums.h"

namespace ringleader {

// Immutable; thread-safe.
class Task {
 public:
  // `spec` as validated by common/job_spec_validator.h.
  explicit Task(const v1::TaskSpec& spec);

  // Whether forward takes the targets and returns its loss (LOSS_KIND_MODEL).
  bool model_computes_loss() const { return loss_ == v1::LOSS_KIND_MODEL; }

  // The training loss of one batch (a scalar, the mean over its samples or
  // tokens). InvalidArgument, naming the sample by its dataset index
  // (`sample_ids`, one per batch row), when the output does not fit the
  // targets: shapes, dtypes, a class id outside the model's classes.
  // `host_targets`, when given, are `targets` still in host memory: the
  // class-id check reads them instead, so a GPU step does not wait for the
  // device (a per-step synchronization).
  absl::StatusOr<at::Tensor> Loss(
      const ModelOutput& out, const at::Tensor& targets,
      const std::vector<int64_t>& sample_ids,
      const at::Tensor& host_targets = at::Tensor()) const;

  // Adds one evaluation batch to `sums` (call without gradients):
  // classification "loss", "accuracy", "top<k>_accuracy"; language model
  // "loss" (per token), "accuracy"; regression "mse", "mae"; a model's own
  // loss without an output, "loss". Loss here is without label smoothing.
  absl::Status Accumulate(const ModelOutput& out, const at::Tensor& targets,
                          const std::vector<int64_t>& sample_ids,
                          MetricSums& sums) const;

 private:
  bool classes() const { return kind_ != v1::TASK_KIND_REGRESSION; }
  // The output as [N, C] logits and the targets as [N] ids, checked.
  // `host_targets`: as for Loss (may be undefined).
  absl::Status CheckClasses(
      const at::Tensor& output, const at::Tensor& targets,
      const std::vector<int64_t>& sample_ids,
      const at::Tensor& host_targets = at::Tensor()) const;
  absl::Status CheckRegression(const at::Tensor& output,
                               const at::Tensor& targets) const;
  void AccumulateClasses(const at::Tensor& output, const at::Tensor& targets,
                         MetricSums& sums) const;

  const v1::TaskKind kind_;
  const v1::LossKind loss_;
  const int64_t ignore_index_;
  const double label_smoothing_;
  const int64_t top_k_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_STEP_TASK_H_
