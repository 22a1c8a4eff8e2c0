#include "worker/train/step/grad_clip.h"

#include <ATen/ATen.h>

#include <cmath>

namespace ringleader {

namespace {

std::vector<at::Tensor> DefinedGrads(const std::vector<at::Tensor>& params) {
  std::vector<at::Tensor> grads;
  grads.reserve(params.size());
  for (const at::Tensor& p : params) {
    if (p.grad().defined()) grads.push_back(p.grad().detach());
  }
  return grads;
}

// torch's total norm: the norm of the per-tensor norms.
at::Tensor TotalNorm(const std::vector<at::Tensor>& grads) {
  std::vector<at::Tensor> norms;
  norms.reserve(grads.size());
  for (const at::Tensor& g : grads) norms.push_back(g.norm(2));
  return norms.size() == 1 ? norms[0] : at::stack(norms).norm(2);
}

// The coefficient as Python's clip_grad_norm_ computes it (max_norm /
// tensor is reciprocal() * max_norm there, in the gradients' dtype), so a
// job scales exactly as a PyTorch script would.
at::Tensor ClipCoefficient(const at::Tensor& total, double max_norm) {
  return (total + 1e-6).reciprocal() * max_norm;
}

}  // namespace

double ClipGradNorm(const std::vector<at::Tensor>& params, double max_norm) {
  std::vector<at::Tensor> grads = DefinedGrads(params);
  if (grads.empty()) return 0;
  const at::Tensor total = TotalNorm(grads);
  const double norm = total.item<double>();
  if (!(max_norm > 0) || !std::isfinite(norm)) return norm;
  const at::Tensor coef = ClipCoefficient(total, max_norm);
  if (coef.item<double>() < 1) {
    for (at::Tensor& g : grads) g.mul_(coef);
  }
  return norm;
}

at::Tensor ClipGradNormOnDevice(const std::vector<at::Tensor>& params,
                                double max_norm) {
  std::vector<at::Tensor> grads = DefinedGrads(params);
  if (grads.empty()) return at::Tensor();
  const at::Tensor total = TotalNorm(grads);
  if (!(max_norm > 0)) return total;
  // clamp(max=1) and an unconditional multiply, as clip_grad_norm_ does: a
  // factor of exactly 1 leaves every gradient's bits as they were.
  const at::Tensor coef = ClipCoefficient(total, max_norm).clamp_max(1.0);
  for (at::Tensor& g : grads) g.mul_(coef);
  return total;
}

}  // namespace ringleader
