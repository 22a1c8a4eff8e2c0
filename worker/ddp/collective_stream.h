#ifndef RINGLEADER_WORKER_DDP_COLLECTIVE_STREAM_H_
#define RINGLEADER_WORKER_DDP_COLLECTIVE_STREAM_H_

#include <ATen/core/Tensor.h>
#include <c10/core/Stream.h>

#include "worker/comm/communicator.h"

namespace ringleader {

// Tells LibTorch's caching allocator that `comm`'s device stream uses `t`'s
// memory, so that memory is not handed to another tensor until the work
// queued on that stream so far is done, even if `t` is freed first
// (Tensor::record_stream, as ProcessGroupNCCL does for every tensor it
// hands to NCCL). Nothing for host backends and host tensors.
inline void RecordForCollective(const at::Tensor& t, const Communicator& comm) {
  const Communicator::DeviceStream s = comm.device_stream();
  if (!s.valid || !t.defined() || t.is_cpu()) return;
  t.record_stream(c10::Stream(
      c10::Stream::UNSAFE,
      c10::Device(static_cast<c10::DeviceType>(s.device_type), s.device_index),
      s.id));
}

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DDP_COLLECTIVE_STREAM_H_
