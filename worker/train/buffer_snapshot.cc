#include "worker/train/buffer_snapshot.h"

#include <utility>

#include "worker/model/tensor_copy.h"

namespace ringleader {

BufferSnapshot::BufferSnapshot(std::vector<at::Tensor> live)
    : live_(std::move(live)) {
  saved_.reserve(live_.size());
  for (const at::Tensor& t : live_) saved_.push_back(t.clone());
}

void BufferSnapshot::Take() {
  for (size_t i = 0; i < live_.size(); ++i) CopyTensor(live_[i], saved_[i]);
}

void BufferSnapshot::Restore() {
  for (size_t i = 0; i < live_.size(); ++i) CopyTensor(saved_[i], live_[i]);
}

}  // namespace ringleader
