// The Reducer with fp16 and bf16 bucket compression, ranks as threads over
// the in-process communicator (which sums 16-bit values as shared memory
// does: float32 in rank order, rounded once): every gradient equals
// PyTorch's compression hook applied by hand to each rank's own gradients,
// bit for bit; buckets still launch during backward and send half the
// bytes; the error against uncompressed averaging is within the roundings'
// bound.
#include <torch/torch.h>

#include <vector>

#include "gtest/gtest.h"
#include "tests/worker/ddp/reducer_ranks.h"
#include "worker/ddp/reducer.h"

namespace ringleader {
namespace {

at::ScalarType Dtype(BucketCompression c) {
  return c == BucketCompression::kFp16 ? at::kHalf : at::kBFloat16;
}

// fp16_compress_hook / bf16_compress_hook on each rank's gradient
// (bucket.to(dtype).div_(world)), the all-reduce as float32 sums in rank
// order rounded once to the 16-bit type, then back to float32.
std::vector<torch::Tensor> HookByHand(
    const std::vector<std::vector<torch::Tensor>>& per_rank,
    BucketCompression c) {
  const int world = static_cast<int>(per_rank.size());
  std::vector<torch::Tensor> out;
  for (size_t i = 0; i < per_rank[0].size(); ++i) {
    torch::Tensor sum;
    for (int r = 0; r < world; ++r) {
      torch::Tensor sent = per_rank[r][i].to(Dtype(c)).div_(world);
      sum = r == 0 ? sent.to(at::kFloat) : sum + sent.to(at::kFloat);
    }
    out.push_back(sum.to(Dtype(c)).to(at::kFloat));
  }
  return out;
}

Reducer::Options SmallBuckets(BucketCompression c) {
  Reducer::Options o;
  o.first_bucket_bytes = 256;
  o.bucket_cap_bytes = 2048;
  o.compression = c;
  return o;
}

void ExpectBitEqual(const std::vector<torch::Tensor>& got,
                    const std::vector<torch::Tensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(torch::equal(got[i], want[i]))
        << "param " << i << ": max |diff| "
        << (got[i] - want[i]).abs().max().item<float>();
  }
}

int64_t Numel(const std::vector<torch::Tensor>& ts) {
  int64_t n = 0;
  for (const auto& t : ts) n += t.numel();
  return n;
}

TEST(CompressedReducerTest, GradientsAreTheHookAppliedByHand) {
  for (BucketCompression c :
       {BucketCompression::kFp16, BucketCompression::kBf16}) {
    for (int world : {2, 3}) {
      SCOPED_TRACE(::testing::Message()
                   << (c == BucketCompression::kFp16 ? "fp16" : "bf16")
                   << " world " << world);
      const auto want = HookByHand(PerRankGrads(world, 1), c);
      auto results = RunRanks(world, SmallBuckets(c), 1);
      for (const RankResult& r : results) {
        ASSERT_TRUE(r.status.ok()) << r.status;
        ExpectBitEqual(r.grads, want);
        // Overlapped as before, and 2 bytes per element on the wire.
        EXPECT_GE(r.buckets, 3u);
        EXPECT_EQ(r.stats.buckets_launched_during_backward,
                  static_cast<int64_t>(r.buckets));
        EXPECT_EQ(r.stats.allreduce_bytes, 2 * Numel(want));
      }
    }
  }
}

// Cast, division and sum each round once to the 16-bit type: relative to
// the ranks' mean magnitude, 3 half-ulps at most (2^-11 for fp16, 2^-8 for
// bf16), plus fp16's subnormal spacing for tiny gradients.
TEST(CompressedReducerTest, DeviationFromUncompressedIsBounded) {
  constexpr int kWorld = 3;
  const auto per_rank = PerRankGrads(kWorld, 1);
  const auto exact = ReferenceGrads(kWorld, 1);
  for (BucketCompression c :
       {BucketCompression::kFp16, BucketCompression::kBf16}) {
    const double half_ulp = c == BucketCompression::kFp16 ? 0x1p-11 : 0x1p-8;
    auto results = RunRanks(kWorld, SmallBuckets(c), 1);
    ASSERT_TRUE(results[0].status.ok());
    bool any_rounded = false;
    for (size_t i = 0; i < exact.size(); ++i) {
      torch::Tensor magnitude = torch::zeros_like(exact[i]);
      for (int r = 0; r < kWorld; ++r) magnitude += per_rank[r][i].abs();
      magnitude /= kWorld;
      const torch::Tensor err = (results[0].grads[i] - exact[i]).abs();
      EXPECT_TRUE((err <= 3 * half_ulp * magnitude + 2e-7).all().item<bool>())
          << "param " << i;
      any_rounded = any_rounded || !torch::equal(results[0].grads[i], exact[i]);
    }
    EXPECT_TRUE(any_rounded) << "compression changed nothing";
  }
}

TEST(CompressedReducerTest, AfterBackwardAndNoSyncCompressTheSameWay) {
  const BucketCompression c = BucketCompression::kBf16;
  Reducer::Options after = SmallBuckets(c);
  after.overlap = false;
  auto results = RunRanks(2, after, 1);
  ASSERT_TRUE(results[1].status.ok());
  EXPECT_EQ(results[1].stats.buckets_launched_during_backward, 0);
  ExpectBitEqual(results[1].grads, HookByHand(PerRankGrads(2, 1), c));
  // Three micro-steps, the last synchronizing: the accumulated sum is what
  // gets compressed, once.
  auto accumulated = RunRanks(2, SmallBuckets(c), 3);
  ASSERT_TRUE(accumulated[0].status.ok());
  EXPECT_EQ(accumulated[0].stats.allreduce_calls,
            static_cast<int64_t>(accumulated[0].buckets));
  ExpectBitEqual(accumulated[0].grads, HookByHand(PerRankGrads(2, 3), c));
}

// One rank communicates nothing, so nothing is rounded either.
TEST(CompressedReducerTest, OneRankKeepsItsFloat32Gradients) {
  auto results = RunRanks(1, SmallBuckets(BucketCompression::kFp16), 1);
  ASSERT_TRUE(results[0].status.ok());
  EXPECT_EQ(results[0].stats.allreduce_calls, 0);
  ExpectBitEqual(results[0].grads, PerRankGrads(1, 1)[0]);
}

}  // namespace
}  // namespace ringleader
