#include "worker/model/optimizer.h"

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/optimizer.h>
#include <torch/optim/sgd.h>

#include <cmath>
#include <exception>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ringleader/v1/job.pb.h"
#include "worker/model/torch_status.h"

namespace ringleader {
namespace {

using Groups = std::vector<torch::optim::OptimizerParamGroup>;

// `params` as param groups with `options`: one group, or the decayed
// (2+ dimensions) and the undecayed ones when the spec asks.
template <typename Options>
Groups ParamGroups(const v1::OptimizerSpec& spec,
                   std::vector<at::Tensor> params, const Options& options) {
  Groups groups;
  if (!spec.no_decay_bias_and_norm()) {
    groups.emplace_back(std::move(params), std::make_unique<Options>(options));
    return groups;
  }
  std::vector<at::Tensor> decay, no_decay;
  for (at::Tensor& p : params) {
    (p.dim() >= 2 ? decay : no_decay).push_back(std::move(p));
  }
  if (!decay.empty()) {
    groups.emplace_back(std::move(decay), std::make_unique<Options>(options));
  }
  if (!no_decay.empty()) {
    Options undecayed = options;
    undecayed.weight_decay(0);
    groups.emplace_back(std::move(no_decay),
                        std::make_unique<Options>(undecayed));
  }
  return groups;
}

// The spec's fields that belong to one family of optimizers, checked against
// its kind. Comparisons are written so that NaN fails them.
absl::Status CheckKindFields(const v1::OptimizerSpec& spec) {
  const bool sgd = spec.kind() == v1::OPTIMIZER_KIND_SGD;
  const double momentum = spec.momentum();
  if (sgd && !(momentum >= 0 && momentum < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("optimizer.momentum must be in [0, 1), got ", momentum));
  }
  if (!sgd && momentum != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("optimizer.momentum is only valid with SGD, got ",
                     momentum, " with ", v1::OptimizerKind_Name(spec.kind())));
  }
  if (spec.nesterov() && !(sgd && momentum > 0)) {
    return absl::InvalidArgumentError(
        "optimizer.nesterov needs SGD with momentum > 0");
  }
  for (const auto& [name, has, value] :
       {std::make_tuple("beta1", spec.has_beta1(), spec.beta1()),
        std::make_tuple("beta2", spec.has_beta2(), spec.beta2())}) {
    if (!has) continue;
    if (sgd || !(value >= 0 && value < 1)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "optimizer.", name, " must be in [0, 1) with Adam, got ", value));
    }
  }
  if (spec.has_eps() &&
      (sgd || !(spec.eps() > 0) || !std::isfinite(spec.eps()))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "optimizer.eps must be > 0 and finite with Adam, got ", spec.eps()));
  }
  return absl::OkStatus();
}

// Adam and AdamW share their options' shape.
template <typename Options>
Options AdamFamilyOptions(const v1::OptimizerSpec& spec) {
  Options options(spec.learning_rate());
  options.betas(std::make_tuple(spec.has_beta1() ? spec.beta1() : 0.9,
                                spec.has_beta2() ? spec.beta2() : 0.999));
  options.eps(spec.has_eps() ? spec.eps() : 1e-8);
  // Always set: AdamW's own default is 0.01.
  options.weight_decay(spec.weight_decay());
  return options;
}

absl::StatusOr<std::unique_ptr<torch::optim::Optimizer>> Make(
    const v1::OptimizerSpec& spec, std::vector<at::Tensor> params) {
  switch (spec.kind()) {
    case v1::OPTIMIZER_KIND_SGD: {
      const auto options = torch::optim::SGDOptions(spec.learning_rate())
                               .momentum(spec.momentum())
                               .weight_decay(spec.weight_decay())
                               .nesterov(spec.nesterov());
      return std::unique_ptr<torch::optim::Optimizer>(
          std::make_unique<torch::optim::SGD>(
              ParamGroups(spec, std::move(params), options), options));
    }
    case v1::OPTIMIZER_KIND_ADAM: {
      const auto options = AdamFamilyOptions<torch::optim::AdamOptions>(spec);
      return std::unique_ptr<torch::optim::Optimizer>(
          std::make_unique<torch::optim::Adam>(
              ParamGroups(spec, std::move(params), options), options));
    }
    case v1::OPTIMIZER_KIND_ADAMW: {
      const auto options = AdamFamilyOptions<torch::optim::AdamWOptions>(spec);
      return std::unique_ptr<torch::optim::Optimizer>(
          std::make_unique<torch::optim::AdamW>(
              ParamGroups(spec, std::move(params), options), options));
    }
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("optimizer.kind ", static_cast<int>(spec.kind()),
                       " is not a supported optimizer"));
  }
}

}  // namespace

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
  if (params.empty()) {
    return absl::InvalidArgumentError("optimizer: no parameters to optimize");
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].defined()) {
      return absl::InvalidArgumentError(
          absl::StrCat("optimizer: parameter ", i, " is undefined"));
    }
  }
  if (spec.kind() == v1::OPTIMIZER_KIND_SGD ||
      spec.kind() == v1::OPTIMIZER_KIND_ADAM ||
      spec.kind() == v1::OPTIMIZER_KIND_ADAMW) {
    if (absl::Status s = CheckKindFields(spec); !s.ok()) return s;
  }
  try {
    return Make(spec, std::move(params));
  } catch (const std::exception& e) {
    return TorchErrorToStatus(absl::StatusCode::kInvalidArgument,
                              "building the optimizer", e);
  }
}

void SetLearningRate(torch::optim::Optimizer& optimizer, double lr) {
  for (torch::optim::OptimizerParamGroup& group : optimizer.param_groups()) {
    group.options().set_lr(lr);
  }
}

}  // namespace ringleader
