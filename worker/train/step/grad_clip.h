#ifndef RINGLEADER_WORKER_TRAIN_STEP_GRAD_CLIP_H_
#define RINGLEADER_WORKER_TRAIN_STEP_GRAD_CLIP_H_

// Gradient clipping by global norm (JobSpec.clip_grad_norm), as
// torch.nn.utils.clip_grad_norm_ does it. The trainer applies it to the
// averaged gradients, after the all-reduce and before the optimizer step:
// every rank holds the same gradients then, so every rank computes the same
// norm and scales alike, with no extra collective.

#include <ATen/core/Tensor.h>

#include <vector>

namespace ringleader {

// Returns the global L2 norm of the defined gradients of `params` before
// clipping (torch's: the norm of the per-tensor norms, in the gradients'
// dtype; 0 when none is defined). When `max_norm` > 0 and the norm is
// finite, scales every gradient in place by max_norm / (norm + 1e-6) if
// that is below 1; a non-finite norm leaves them alone (the caller fails the
// job). Not thread-safe with respect to the gradients.
double ClipGradNorm(const std::vector<at::Tensor>& params, double max_norm);

// The same without reading anything on the host, for a GPU (reading the
// norm waits for the device to finish the step): returns the norm as a
// scalar tensor on the gradients' device (undefined when no gradient is
// defined), and scales by the clamped factor on the device, as
// clip_grad_norm_ does; a non-finite norm then makes the gradients
// non-finite, which the loss shows at its next read.
at::Tensor ClipGradNormOnDevice(const std::vector<at::Tensor>& params,
                                double max_norm);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_STEP_GRAD_CLIP_H_
