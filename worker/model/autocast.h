#ifndef RINGLEADER_WORKER_MODEL_AUTOCAST_H_
#define RINGLEADER_WORKER_MODEL_AUTOCAST_H_

// bf16 mixed precision with torch.autocast's semantics: inside an
// AutocastScope, matrix products and convolutions run in bfloat16, while
// reductions, normalizations and losses run in float32; the parameters (the
// master weights) and the optimizer's state stay float32, and backward runs
// outside the scope, as PyTorch's AMP recipe has it.
//
// LibTorch 1.13's CPU autocast has no float32 rule for layer_norm and
// group_norm (its CUDA autocast has), and their CPU kernels reject a bf16
// input with float32 weights, so a transformer fails under CPU autocast
// ("expected scalar type BFloat16 but found Float"). This library registers
// the CUDA rule for the CPU too: both run in float32.

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

namespace ringleader {

// Not copyable; restores the thread's previous autocast state on exit.
class AutocastScope {
 public:
  // Turns bf16 autocast on for `device` when `enabled`; otherwise a no-op.
  AutocastScope(c10::DeviceType device, bool enabled);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  const c10::DeviceType device_;
  const bool enabled_;
  bool was_enabled_ = false;
  c10::ScalarType previous_dtype_ = c10::ScalarType::Undefined;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_MODEL_AUTOCAST_H_
