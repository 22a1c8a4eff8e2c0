#ifndef RINGLEADER_WORKER_DDP_BUFFER_SYNC_H_
#define RINGLEADER_WORKER_DDP_BUFFER_SYNC_H_

// DDP's broadcast_buffers=True: before each training forward, every rank
// takes rank 0's module buffers (BatchNorm's running mean and variance and
// its batch count), so the ranks' models stay one model even though each
// normalizes its own micro-batch. Coalesced as DDP's _sync_buffers does:
// one broadcast of all buffers packed into one flat byte tensor, not one
// collective per buffer (a ResNet has three per BatchNorm layer).

#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "worker/comm/communicator.h"

namespace ringleader {

// Not thread-safe: the training thread's.
class BufferSync {
 public:
  // `buffers`: the model's, contiguous, on the communicator's device; they
  // are written in place. InvalidArgument for a non-contiguous one.
  static absl::StatusOr<std::unique_ptr<BufferSync>> Create(
      Communicator* comm, std::vector<at::Tensor> buffers);

  // Copies rank `root`'s buffers to every rank. A no-op without buffers or
  // with one rank.
  absl::Status Sync(int root = 0);

 private:
  BufferSync(Communicator* comm, std::vector<at::Tensor> buffers,
             at::Tensor flat);

  Communicator* const comm_;
  const std::vector<at::Tensor> buffers_;
  at::Tensor flat_;  // uint8, all buffers' bytes back to back.
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DDP_BUFFER_SYNC_H_
