#include "worker/model/autocast.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/library.h>

namespace ringleader {

AutocastScope::AutocastScope(c10::DeviceType device, bool enabled)
    : device_(device), enabled_(enabled) {
  if (!enabled_) return;
  if (device_ == c10::DeviceType::CUDA) {
    was_enabled_ = at::autocast::is_enabled();
    previous_dtype_ = at::autocast::get_autocast_gpu_dtype();
    at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
    at::autocast::set_enabled(true);
  } else {
    was_enabled_ = at::autocast::is_cpu_enabled();
    previous_dtype_ = at::autocast::get_autocast_cpu_dtype();
    at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
    at::autocast::set_cpu_enabled(true);
  }
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!enabled_) return;
  // As torch.autocast's __exit__: the cast weights are cached for the
  // outermost scope only.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  if (device_ == c10::DeviceType::CUDA) {
    at::autocast::set_enabled(was_enabled_);
    at::autocast::set_autocast_gpu_dtype(previous_dtype_);
  } else {
    at::autocast::set_cpu_enabled(was_enabled_);
    at::autocast::set_autocast_cpu_dtype(previous_dtype_);
  }
}

namespace {

c10::optional<at::Tensor> Fp32(const c10::optional<at::Tensor>& t) {
  if (!t.has_value()) return t;
  return at::autocast::cached_cast(at::kFloat, *t, c10::DeviceType::CPU);
}

// The float32 rule of CUDA autocast (autocast_mode.cpp, CastPolicy::fp32):
// floating inputs cast to float32, the op run with autocast excluded.
at::Tensor LayerNormFp32(const at::Tensor& input, at::IntArrayRef shape,
                         const c10::optional<at::Tensor>& weight,
                         const c10::optional<at::Tensor>& bias, double eps,
                         bool cudnn_enable) {
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::DispatchKey::AutocastCPU);
  return at::layer_norm(
      at::autocast::cached_cast(at::kFloat, input, c10::DeviceType::CPU), shape,
      Fp32(weight), Fp32(bias), eps, cudnn_enable);
}

at::Tensor GroupNormFp32(const at::Tensor& input, int64_t groups,
                         const c10::optional<at::Tensor>& weight,
                         const c10::optional<at::Tensor>& bias, double eps,
                         bool cudnn_enabled) {
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::DispatchKey::AutocastCPU);
  return at::group_norm(
      at::autocast::cached_cast(at::kFloat, input, c10::DeviceType::CPU),
      groups, Fp32(weight), Fp32(bias), eps, cudnn_enabled);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, AutocastCPU, m) {
  m.impl("layer_norm", TORCH_FN(LayerNormFp32));
  m.impl("group_norm", TORCH_FN(GroupNormFp32));
}

}  // namespace ringleader
