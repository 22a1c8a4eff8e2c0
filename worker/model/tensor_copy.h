#ifndef RINGLEADER_WORKER_MODEL_TENSOR_COPY_H_
#define RINGLEADER_WORKER_MODEL_TENSOR_COPY_H_

// Copies `from` into `to` (same number of elements). Two contiguous CPU
// tensors of one dtype take a plain memcpy: an ATen copy_ costs
// microseconds of dispatch, which the step pays once per small tensor (a
// ResNet has dozens of BatchNorm buffers, copied several times a step).
// Anything else (a device, a stride, a dtype change) is copy_, without
// recording autograd.

#include <ATen/core/Tensor.h>

namespace ringleader {

void CopyTensor(const at::Tensor& from, at::Tensor& to);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_MODEL_TENSOR_COPY_H_
