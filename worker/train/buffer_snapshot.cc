#include "worker/train/buffer_snapshot.h"

#include <ATen/ATen.h>

#include <cstring>
#include <utility>

namespace ringleader {

BufferSnapshot::BufferSnapshot(std::vector<at::Tensor> live)
    : live_(std::move(live)) {
  saved_.reserve(live_.size());
  for (const at::Tensor& t : live_) saved_.push_back(t.clone());
}

void BufferSnapshot::Copy(const at::Tensor& from, at::Tensor& to) {
  if (from.is_cpu() && to.is_cpu() && from.is_contiguous() &&
      to.is_contiguous() && from.scalar_type() == to.scalar_type() &&
      from.numel() == to.numel()) {
    if (from.numel() > 0) {
      std::memcpy(to.data_ptr(), from.data_ptr(),
                  from.numel() * from.element_size());
    }
    return;
  }
  at::NoGradGuard no_grad;
  to.copy_(from);
}

void BufferSnapshot::Take() {
  for (size_t i = 0; i < live_.size(); ++i) Copy(live_[i], saved_[i]);
}

void BufferSnapshot::Restore() {
  for (size_t i = 0; i < live_.size(); ++i) Copy(saved_[i], live_[i]);
}

}  // namespace ringleader
