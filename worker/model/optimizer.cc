#include "worker/model/optimizer.h"

#include <torch/optim/adam.h>
#include <torch/optim/optimizer.h>
#include <torch/optim/sgd.h>

#include <cmath>
#include <exception>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ringleader/v1/job.pb.h"
#include "worker/model/torch_status.h"

namespace ringleader {

absl::StatusOr<std::unique_ptr<torch::optim::Optimizer>> BuildOptimizer(
    const v1::OptimizerSpec& spec, std::vector<at::Tensor> params) {
  // Comparisons are written so that NaN fails them.
  const double lr = spec.learning_rate();
  if (!(lr > 0) || !std::isfinite(lr)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "optimizer.learning_rate must be > 0 and finite, got ", lr));
  }
  const double wd = spec.weight_decay();
  if (!(wd >= 0) || !std::isfinite(wd)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "optimizer.weight_decay must be >= 0 and finite, got ", wd));
  }
  const double momentum = spec.momentum();
  if (params.empty()) {
    return absl::InvalidArgumentError("optimizer: no parameters to optimize");
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].defined()) {
      return absl::InvalidArgumentError(
          absl::StrCat("optimizer: parameter ", i, " is undefined"));
    }
  }
  try {
    switch (spec.kind()) {
      case v1::OPTIMIZER_KIND_SGD:
        if (!(momentum >= 0 && momentum < 1)) {
          return absl::InvalidArgumentError(absl::StrCat(
              "optimizer.momentum must be in [0, 1), got ", momentum));
        }
        return std::unique_ptr<torch::optim::Optimizer>(
            std::make_unique<torch::optim::SGD>(
                std::move(params),
                torch::optim::SGDOptions(lr).momentum(momentum).weight_decay(
                    wd)));
      case v1::OPTIMIZER_KIND_ADAM:
        if (momentum != 0) {
          return absl::InvalidArgumentError(
              absl::StrCat("optimizer.momentum is only valid with SGD, got ",
                           momentum, " with Adam"));
        }
        return std::unique_ptr<torch::optim::Optimizer>(
            std::make_unique<torch::optim::Adam>(
                std::move(params),
                torch::optim::AdamOptions(lr).weight_decay(wd)));
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("optimizer.kind ", static_cast<int>(spec.kind()),
                         " is not a supported optimizer"));
    }
  } catch (const std::exception& e) {
    return TorchErrorToStatus(absl::StatusCode::kInvalidArgument,
                              "building the optimizer", e);
  }
}

}  // namespace ringleader
