// CompressBucket gives the bits of PyTorch's hook, bucket.to(fp16 or
// bf16).div_(world_size), for gradients of every magnitude (subnormal and
// overflowing ones included) and world sizes that divide exactly and that do
// not; DecompressBucket widens exactly. (The per-transport sums are in
// tests/worker/compressed_allreduce_test.cc.)
#include "worker/ddp/compression.h"

#include <torch/torch.h>

#include "gtest/gtest.h"

namespace ringleader {
namespace {

torch::Tensor Gradients() {
  torch::manual_seed(3);
  std::vector<torch::Tensor> parts;
  for (double scale : {1e-9, 1e-6, 1e-3, 1.0, 1e2, 1e4, 1e5}) {
    parts.push_back(torch::randn({20000}) * scale);
  }
  return torch::cat(parts);
}

TEST(CompressionTest, CompressIsTheHooksCastAndDivision) {
  const torch::Tensor g = Gradients();
  for (BucketCompression c :
       {BucketCompression::kFp16, BucketCompression::kBf16}) {
    const at::ScalarType dtype =
        c == BucketCompression::kFp16 ? at::kHalf : at::kBFloat16;
    for (int world : {1, 2, 3, 5, 7, 12}) {
      SCOPED_TRACE(::testing::Message() << dtype << " world " << world);
      torch::Tensor bucket = g.clone();
      torch::Tensor wire = NewWireBuffer(c, bucket.numel(), bucket);
      CompressBucket(bucket, world, wire);
      torch::Tensor hook = g.to(dtype);
      if (world > 1) hook.div_(world);
      EXPECT_TRUE(torch::equal(wire.view(at::kShort), hook.view(at::kShort)));
      DecompressBucket(wire, bucket);
      EXPECT_TRUE(torch::equal(bucket, hook.to(at::kFloat)));
    }
  }
}

}  // namespace
}  // namespace ringleader
