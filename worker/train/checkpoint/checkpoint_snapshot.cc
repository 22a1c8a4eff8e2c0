#include "worker/train/checkpoint/checkpoint_snapshot.h"

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/serialize.h>
#include <torch/optim/sgd.h>
#include <torch/serialize/archive.h>

#include <typeinfo>

#include "absl/strings/str_cat.h"
#include "worker/model/torch_status.h"

namespace ringleader {
namespace {

using torch::optim::OptimizerParamGroup;
using torch::optim::OptimizerParamState;

// A deep copy on the host (undefined stays undefined: an optional buffer,
// Adam's max_exp_avg_sq without amsgrad). Strides and values are kept bit
// for bit.
at::Tensor HostCopy(const at::Tensor& t, int64_t& bytes) {
  if (!t.defined()) return t;
  bytes += t.numel() * static_cast<int64_t>(t.element_size());
  return t.detach().to(at::kCPU, /*non_blocking=*/false, /*copy=*/true);
}

std::unique_ptr<OptimizerParamState> CopyState(const OptimizerParamState& s,
                                               int64_t& bytes) {
  if (const auto* sgd = dynamic_cast<const torch::optim::SGDParamState*>(&s)) {
    auto out = std::make_unique<torch::optim::SGDParamState>(*sgd);
    out->momentum_buffer(HostCopy(sgd->momentum_buffer(), bytes));
    return out;
  }
  if (const auto* a = dynamic_cast<const torch::optim::AdamParamState*>(&s)) {
    auto out = std::make_unique<torch::optim::AdamParamState>(*a);
    out->exp_avg(HostCopy(a->exp_avg(), bytes));
    out->exp_avg_sq(HostCopy(a->exp_avg_sq(), bytes));
    out->max_exp_avg_sq(HostCopy(a->max_exp_avg_sq(), bytes));
    return out;
  }
  if (const auto* w = dynamic_cast<const torch::optim::AdamWParamState*>(&s)) {
    auto out = std::make_unique<torch::optim::AdamWParamState>(*w);
    out->exp_avg(HostCopy(w->exp_avg(), bytes));
    out->exp_avg_sq(HostCopy(w->exp_avg_sq(), bytes));
    out->max_exp_avg_sq(HostCopy(w->max_exp_avg_sq(), bytes));
    return out;
  }
  return nullptr;
}

// What torch::optim::serialize<ParamState, Options>(archive, optimizer)
// writes (Optimizer::save of SGD, Adam, AdamW), from the copies: a file
// LoadCheckpoint's optimizer->load reads the same way.
template <typename ParamState, typename Options>
void SaveAs(
    torch::serialize::OutputArchive& archive,
    const ska::flat_hash_map<std::string, std::unique_ptr<OptimizerParamState>>&
        state,
    const std::vector<OptimizerParamGroup>& groups) {
  archive.write("pytorch_version", c10::IValue("1.5.0"));
  torch::serialize::OutputArchive state_archive(archive.compilation_unit());
  torch::optim::detail::serialize<ParamState>(state_archive, state);
  archive.write("state", state_archive);
  torch::serialize::OutputArchive groups_archive(archive.compilation_unit());
  torch::optim::detail::serialize<Options>(groups_archive, groups);
  archive.write("param_groups", groups_archive);
}

}  // namespace

absl::StatusOr<CheckpointSnapshot> CheckpointSnapshot::Take(
    const Model& model, const torch::optim::Optimizer& optimizer,
    const CheckpointPosition& position) {
  CheckpointSnapshot snap;
  snap.position_ = position;
  snap.model_name_ = model.Describe();
  if (dynamic_cast<const torch::optim::SGD*>(&optimizer) != nullptr) {
    snap.save_optimizer_ =
        &SaveAs<torch::optim::SGDParamState, torch::optim::SGDOptions>;
  } else if (dynamic_cast<const torch::optim::Adam*>(&optimizer) != nullptr) {
    snap.save_optimizer_ =
        &SaveAs<torch::optim::AdamParamState, torch::optim::AdamOptions>;
  } else if (dynamic_cast<const torch::optim::AdamW*>(&optimizer) != nullptr) {
    snap.save_optimizer_ =
        &SaveAs<torch::optim::AdamWParamState, torch::optim::AdamWOptions>;
  } else {
    return absl::UnimplementedError(absl::StrCat(
        "no checkpoint snapshot for optimizer ", typeid(optimizer).name(),
        "; set checkpoint_synchronous to write on the training "
        "thread"));
  }
  try {
    for (const NamedTensor& p : model.NamedParameters()) {
      snap.parameters_.push_back({p.name, HostCopy(p.tensor, snap.bytes_)});
    }
    for (const NamedTensor& b : model.NamedBuffers()) {
      snap.buffers_.push_back({b.name, HostCopy(b.tensor, snap.bytes_)});
    }
    for (const auto& [key, state] : optimizer.state()) {
      std::unique_ptr<OptimizerParamState> copy =
          CopyState(*state, snap.bytes_);
      if (copy == nullptr) {
        return absl::UnimplementedError(
            absl::StrCat("no checkpoint snapshot for optimizer state ",
                         typeid(*state).name()));
      }
      snap.state_.emplace(key, std::move(copy));
    }
    // The copy constructor clones the options (the learning rate changes
    // with every step's schedule).
    for (const OptimizerParamGroup& g : optimizer.param_groups()) {
      snap.groups_.push_back(g);
    }
  } catch (const std::exception& e) {
    return TorchErrorToStatus(absl::StatusCode::kInternal,
                              "copying the state for a checkpoint", e);
  }
  return snap;
}

void CheckpointSnapshot::SaveModel(
    torch::serialize::OutputArchive& archive) const {
  WriteNamedTensors(parameters_, buffers_, archive);
}

void CheckpointSnapshot::SaveOptimizer(
    torch::serialize::OutputArchive& archive) const {
  save_optimizer_(archive, state_, groups_);
}

}  // namespace ringleader
