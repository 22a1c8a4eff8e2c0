#include "worker/train/checkpoint/state_digest.h"

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/optimizer.h>
#include <torch/optim/sgd.h>

#include <cstdint>
#include <cstring>

#include "absl/strings/str_format.h"
#include "worker/model/model.h"

namespace ringleader {
namespace {

class Fnv1a {
 public:
  void Add(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) {
      h_ = (h_ ^ p[i]) * 0x100000001b3ULL;
    }
  }
  void Add(int64_t v) { Add(&v, sizeof(v)); }
  // Dtype, shape and values; an undefined tensor (no momentum yet, Adam's
  // max_exp_avg_sq without amsgrad) as a marker of its own.
  void Add(const at::Tensor& t) {
    if (!t.defined()) {
      Add(int64_t{-1});
      return;
    }
    const at::Tensor host = t.detach().to(at::kCPU).contiguous();
    Add(static_cast<int64_t>(host.scalar_type()));
    Add(host.dim());
    for (int64_t d : host.sizes()) Add(d);
    Add(host.data_ptr(), static_cast<size_t>(host.numel()) *
                             static_cast<size_t>(host.element_size()));
  }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 0xcbf29ce484222325ULL;
};

void AddParamState(Fnv1a& h, const torch::optim::OptimizerParamState* s) {
  if (s == nullptr) {
    h.Add(int64_t{-2});  // No state yet (before the first step).
    return;
  }
  if (const auto* sgd = dynamic_cast<const torch::optim::SGDParamState*>(s)) {
    h.Add(sgd->momentum_buffer());
  } else if (const auto* a =
                 dynamic_cast<const torch::optim::AdamParamState*>(s)) {
    h.Add(a->step());
    h.Add(a->exp_avg());
    h.Add(a->exp_avg_sq());
    h.Add(a->max_exp_avg_sq());
  } else if (const auto* w =
                 dynamic_cast<const torch::optim::AdamWParamState*>(s)) {
    h.Add(w->step());
    h.Add(w->exp_avg());
    h.Add(w->exp_avg_sq());
    h.Add(w->max_exp_avg_sq());
  } else {
    h.Add(int64_t{-3});  // A kind BuildOptimizer does not make.
  }
}

}  // namespace

std::string StateDigest(const Model& model,
                        const torch::optim::Optimizer& optimizer) {
  Fnv1a h;
  for (const NamedTensor& p : model.NamedParameters()) h.Add(p.tensor);
  for (const NamedTensor& b : model.NamedBuffers()) h.Add(b.tensor);
  // The optimizer keys its state by the parameter's TensorImpl address, as
  // torch::optim does; walked in parameter order, not the map's.
  const auto& state = optimizer.state();
  for (const torch::optim::OptimizerParamGroup& g : optimizer.param_groups()) {
    for (const at::Tensor& p : g.params()) {
      auto it = state.find(c10::guts::to_string(p.unsafeGetTensorImpl()));
      AddParamState(h, it == state.end() ? nullptr : it->second.get());
    }
  }
  return absl::StrFormat("%016x", h.value());
}

}  // namespace ringleader
