#ifndef RINGLEADER_WORKER_MODEL_CHANNELS_LAST_H_
#define RINGLEADER_WORKER_MODEL_CHANNELS_LAST_H_

// Image batches in the layout oneDNN's CPU convolutions run fastest.

#include <ATen/core/Tensor.h>

namespace ringleader {

// A CPU NCHW image batch as channels-last (NHWC), which oneDNN's convolutions
// and pooling run much faster, and which each layer then keeps. A
// contiguous 1-channel batch is NHWC in memory already: it becomes a view
// with NHWC strides (contiguous(ChannelsLast) would return it unchanged).
// Anything else is copied; tensors not on the CPU, not 4-D or not floating
// point are returned as they are. Same logical values: only the strides
// differ.
at::Tensor ChannelsLastOnCpu(const at::Tensor& images);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_MODEL_CHANNELS_LAST_H_
