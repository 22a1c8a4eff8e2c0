#include "worker/train/step/batch_forward.h"

#include <exception>
#include <vector>

#include "worker/model/torch_status.h"

namespace ringleader {

absl::StatusOr<ModelOutput> ForwardBatch(Model& model, const Task& task,
                                         const Batch& batch,
                                         const c10::Device& device,
                                         at::Tensor* targets) {
  try {
    std::vector<at::Tensor> inputs;
    inputs.reserve(batch.inputs.size());
    // Asynchronous from the loader's pinned batches (a GPU): the copies
    // queue on the stream like the kernels after them.
    for (const at::Tensor& t : batch.inputs) {
      inputs.push_back(t.to(device, /*non_blocking=*/true));
    }
    *targets = batch.targets.to(device, /*non_blocking=*/true);
    return model.Forward(inputs,
                         task.model_computes_loss() ? *targets : at::Tensor());
  } catch (const std::exception& e) {
    return TorchErrorToStatus(absl::StatusCode::kInvalidArgument,
                              "moving the batch to " + device.str(), e);
  }
}

absl::StatusOr<at::Tensor> BatchLoss(Model& model, const Task& task,
                                     const Batch& batch,
                                     const c10::Device& device) {
  at::Tensor targets;
  absl::StatusOr<ModelOutput> out =
      ForwardBatch(model, task, batch, device, &targets);
  if (!out.ok()) return out.status();
  try {
    return task.Loss(*out, targets, batch.sample_ids, batch.targets);
  } catch (const std::exception& e) {
    return TorchErrorToStatus(absl::StatusCode::kInvalidArgument, "loss", e);
  }
}

}  // namespace ringleader
