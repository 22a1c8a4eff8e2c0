#include "worker/ddp/buffer_sync.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "worker/ddp/collective_stream.h"
#include "worker/model/tensor_copy.h"

namespace ringleader {
namespace {

// `t`'s bytes as a flat uint8 view.
at::Tensor Bytes(const at::Tensor& t) { return t.view({-1}).view(at::kByte); }

}  // namespace

absl::StatusOr<std::unique_ptr<BufferSync>> BufferSync::Create(
    Communicator* comm, std::vector<at::Tensor> buffers) {
  int64_t bytes = 0;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (!buffers[i].is_contiguous()) {
      return absl::InvalidArgumentError(
          absl::StrCat("buffer ", i, " is not contiguous"));
    }
    bytes += buffers[i].numel() * buffers[i].element_size();
  }
  at::Tensor flat;
  if (bytes > 0) {
    flat = at::empty({bytes}, buffers[0].options().dtype(at::kByte));
  }
  return std::unique_ptr<BufferSync>(
      new BufferSync(comm, std::move(buffers), std::move(flat)));
}

BufferSync::BufferSync(Communicator* comm, std::vector<at::Tensor> buffers,
                       at::Tensor flat)
    : comm_(comm), buffers_(std::move(buffers)), flat_(std::move(flat)) {
  int64_t offset = 0;
  for (const at::Tensor& b : buffers_) {
    if (b.numel() == 0) continue;
    const int64_t n = b.numel() * b.element_size();
    slices_.emplace_back(flat_.narrow(0, offset, n), Bytes(b));
    offset += n;
  }
}

BufferSync::~BufferSync() {
  if (pending_ != nullptr) pending_->Wait().IgnoreError();
}

absl::Status BufferSync::Sync(int root) {
  if (absl::Status s = Launch(root); !s.ok()) return s;
  return Finish();
}

absl::Status BufferSync::Launch(int root) {
  if (!flat_.defined() || comm_->world_size() < 2) return absl::OkStatus();
  if (pending_ != nullptr) {
    return absl::FailedPreconditionError("a buffer broadcast is in flight");
  }
  at::NoGradGuard no_grad;
  receiving_ = comm_->rank() != root;
  if (!receiving_) {
    for (auto& [slice, bytes] : slices_) CopyTensor(bytes, slice);
  }
  RecordForCollective(flat_, *comm_);
  pending_ = comm_->BroadcastAsync(flat_.data_ptr(),
                                   static_cast<size_t>(flat_.numel()), root);
  return absl::OkStatus();
}

absl::Status BufferSync::Finish() {
  if (pending_ == nullptr) return absl::OkStatus();
  const absl::Status s = pending_->Wait();
  pending_ = nullptr;
  if (!s.ok()) return s;
  if (receiving_) {
    for (auto& [slice, bytes] : slices_) CopyTensor(slice, bytes);
  }
  return absl::OkStatus();
}

}  // namespace ringleader
