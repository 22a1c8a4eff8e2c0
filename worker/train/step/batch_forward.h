#ifndef RINGLEADER_WORKER_TRAIN_STEP_BATCH_FORWARD_H_
#define RINGLEADER_WORKER_TRAIN_STEP_BATCH_FORWARD_H_

// One batch through the model as the job's task feeds it: the inputs on the
// model's device, plus the targets as forward's last argument when the model
// computes its own loss. What the step, the evaluator and the model probe
// each need, written once.

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "absl/status/statusor.h"
#include "worker/data/batch_loader.h"
#include "worker/model/model.h"
#include "worker/train/step/task.h"

namespace ringleader {

// The model's output for `batch`; `targets` (not null) receives the batch's
// targets on `device`, for the task.
absl::StatusOr<ModelOutput> ForwardBatch(Model& model, const Task& task,
                                         const Batch& batch,
                                         const c10::Device& device,
                                         at::Tensor* targets);

// ForwardBatch, then the task's loss of it. torch's exceptions become
// InvalidArgument with its reason.
absl::StatusOr<at::Tensor> BatchLoss(Model& model, const Task& task,
                                     const Batch& batch,
                                     const c10::Device& device);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_STEP_BATCH_FORWARD_H_
