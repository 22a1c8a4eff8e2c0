#include "worker/ddp/compression.h"

#include <torch/torch.h>

namespace ringleader {

DataType WireType(BucketCompression compression) {
  switch (compression) {
    case BucketCompression::kFp16:
      return DataType::kFloat16;
    case BucketCompression::kBf16:
      return DataType::kBFloat16;
    case BucketCompression::kNone:
      break;
  }
  return DataType::kFloat32;
}

at::Tensor NewWireBuffer(BucketCompression compression, int64_t numel,
                         const at::Tensor& like) {
  if (compression == BucketCompression::kNone) return at::Tensor();
  const at::ScalarType type =
      compression == BucketCompression::kFp16 ? at::kHalf : at::kBFloat16;
  return torch::empty({numel}, like.options().dtype(type).requires_grad(false));
}

void CompressBucket(const at::Tensor& bucket, int world_size,
                    at::Tensor& wire) {
  torch::NoGradGuard no_grad;
  // copy_ rounds to nearest even, as .to(torch.float16) does.
  wire.copy_(bucket);
  if (world_size > 1) wire.div_(world_size);
}

void DecompressBucket(const at::Tensor& wire, at::Tensor& bucket) {
  torch::NoGradGuard no_grad;
  bucket.copy_(wire);
}

}  // namespace ringleader
