#include "worker/train/grad_clip.h"

#include <ATen/ATen.h>

#include <cmath>

namespace ringleader {

double ClipGradNorm(const std::vector<at::Tensor>& params, double max_norm) {
  std::vector<at::Tensor> grads;
  grads.reserve(params.size());
  for (const at::Tensor& p : params) {
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  if (grads.empty()) return 0;
  std::vector<at::Tensor> norms;
  norms.reserve(grads.size());
  for (const at::Tensor& g : grads) norms.push_back(g.detach().norm(2));
  const at::Tensor total =
      norms.size() == 1 ? norms[0] : at::stack(norms).norm(2);
  const double norm = total.item<double>();
  if (!(max_norm > 0) || !std::isfinite(norm)) return norm;
  // The coefficient as Python's clip_grad_norm_ computes it (max_norm /
  // tensor is reciprocal() * max_norm there, in the gradients' dtype), so a
  // job scales exactly as a PyTorch script would.
  const at::Tensor coef = (total + 1e-6).reciprocal() * max_norm;
  if (coef.item<double>() < 1) {
    for (at::Tensor& g : grads) g.detach().mul_(coef);
  }
  return norm;
}

}  // namespace ringleader
