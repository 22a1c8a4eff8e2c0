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

// OPTIMIZER_KIND_SGD: torch::optim::SGD(lr, momentum, weight_decay),
// no dampening or Nesterov; OPTIMIZER_KIND_ADAM: torch::optim::Adam(lr,
// weight_decay as L2, betas (0.9, 0.999), eps 1e-8), the PyTorch defaults.
// InvalidArgument for an unknown kind, lr not finite and > 0, momentum
// outside [0, 1) (or non-zero for Adam), weight_decay not finite and >= 0,
// or no (or an undefined) parameter. Thread-safe.
absl::StatusOr<std::unique_ptr<torch::optim::Optimizer>> BuildOptimizer(
    const v1::OptimizerSpec& spec, std::vector<at::Tensor> params);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_MODEL_OPTIMIZER_H_
