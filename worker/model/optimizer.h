#ifndef RINGLEADER_WORKER_MODEL_OPTIMIZER_H_
#define RINGLEADER_WORKER_MODEL_OPTIMIZER_H_

// The optimizer a job's OptimizerSpec describes. Declared against a forward
// declaration so this header stays cheap; callers that step or save the
// optimizer include <torch/optim/optimizer.h> themselves.

#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "ringleader/v1/job.pb.h"

namespace torch {
namespace optim {
class Optimizer;
}  // namespace optim
}  // namespace torch

namespace ringleader {

// The PyTorch optimizer of `spec`, with torch's defaults for what the spec
// leaves unset:
//   OPTIMIZER_KIND_SGD:   torch::optim::SGD(lr, momentum, weight_decay,
//                         nesterov), no dampening;
//   OPTIMIZER_KIND_ADAM:  torch::optim::Adam(lr, betas (0.9, 0.999), eps
//                         1e-8, weight_decay as L2);
//   OPTIMIZER_KIND_ADAMW: torch::optim::AdamW, the same with decoupled
//                         weight decay.
// One param group of `params`, or with no_decay_bias_and_norm two, as
// nanoGPT's configure_optimizers: the tensors of 2 or more dimensions with
// weight_decay, then the others (biases, normalization weights) with 0; an
// empty group is left out. InvalidArgument for an unknown kind, lr not
// finite and > 0, momentum outside [0, 1) (or non-zero for Adam), nesterov
// without momentum or with Adam, betas outside [0, 1) or eps <= 0 (or either
// with SGD), weight_decay not finite and >= 0, or no (or an undefined)
// parameter. Thread-safe.
absl::StatusOr<std::unique_ptr<torch::optim::Optimizer>> BuildOptimizer(
    const v1::OptimizerSpec& spec, std::vector<at::Tensor> params);

// Sets the learning rate of every param group (a scheduler's step).
void SetLearningRate(torch::optim::Optimizer& optimizer, double lr);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_MODEL_OPTIMIZER_H_
