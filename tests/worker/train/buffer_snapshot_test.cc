#include "worker/train/buffer_snapshot.h"

#include <torch/torch.h>

#include "gtest/gtest.h"

namespace ringleader {
namespace {

// BatchNorm's kinds of buffer: float statistics, an int64 count, and an
// empty one; plus a strided view, which takes the general copy.
TEST(BufferSnapshotTest, RestoresWhatTheLastTakeSaw) {
  at::Tensor mean = torch::full({3}, 1.5f);
  at::Tensor count = torch::tensor({int64_t{7}}, torch::kLong);
  at::Tensor empty = torch::empty({0});
  at::Tensor base = torch::arange(16, torch::kFloat).reshape({4, 4});
  at::Tensor strided = base.t();
  BufferSnapshot snap({mean, count, empty, strided});
  EXPECT_EQ(snap.size(), 4u);

  mean.fill_(2.5f);
  count.add_(1);
  base.mul_(2);
  snap.Take();  // The boundary: 2.5, 8, 2x.
  mean.fill_(-1.0f);
  count.add_(100);
  base.zero_();
  snap.Restore();

  EXPECT_TRUE(torch::equal(mean, torch::full({3}, 2.5f)));
  EXPECT_EQ(count.item<int64_t>(), 8);
  EXPECT_TRUE(torch::equal(
      base, torch::arange(16, torch::kFloat).reshape({4, 4}).mul(2)));
}

TEST(BufferSnapshotTest, StartsAsACopyOfTheLiveBuffers) {
  at::Tensor mean = torch::full({2}, 0.25f);
  BufferSnapshot snap({mean});
  mean.fill_(9.0f);
  snap.Restore();
  EXPECT_TRUE(torch::equal(mean, torch::full({2}, 0.25f)));
}

}  // namespace
}  // namespace ringleader
