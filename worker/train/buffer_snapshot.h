#ifndef RINGLEADER_WORKER_TRAIN_BUFFER_SNAPSHOT_H_
#define RINGLEADER_WORKER_TRAIN_BUFFER_SNAPSHOT_H_

// The model's buffers (BatchNorm's running statistics) as the last step
// boundary left them: the next step's forward changes them before its
// all-reduces can fail, and a rank that keeps its state for the next
// generation must hold the boundary's. Taken at every step, so the live
// tensors are found once and copied with CopyTensor (memcpy on the CPU): an
// ATen copy_ per buffer and the model's buffer list built each step cost a
// ResNet's step 0.1-0.2 ms (issue 37).

#include <ATen/core/Tensor.h>

#include <vector>

namespace ringleader {

// Not thread-safe: the training thread's.
class BufferSnapshot {
 public:
  // `live`: the model's buffers, which must stay the model's tensors (as
  // BufferSync also assumes); the snapshot starts as a copy of them.
  explicit BufferSnapshot(std::vector<at::Tensor> live);

  void Take();     // live -> snapshot.
  void Restore();  // snapshot -> live.

  size_t size() const { return live_.size(); }

 private:
  std::vector<at::Tensor> live_;
  std::vector<at::Tensor> saved_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_BUFFER_SNAPSHOT_H_
