// The Reducer's bucketing, overlap and no_sync semantics, with ranks as
// threads over an in-process communicator. Cross-process equality with a
// single process is tested with Gloo under tests/integration.
#include "worker/ddp/reducer.h"

#include <torch/torch.h>

#include "gtest/gtest.h"
#include "tests/worker/ddp/in_process_communicator.h"
#include "tests/worker/ddp/reducer_ranks.h"

namespace ringleader {
namespace {

TEST(ReducerTest, AveragesGradientsOverRanks) {
  const auto ref = ReferenceGrads(3, 1);
  auto results = RunRanks(3, Reducer::Options(), 1);
  for (const auto& r : results) {
    ASSERT_TRUE(r.status.ok()) << r.status;
    ExpectGradsNear(r.grads, ref);
  }
}

TEST(ReducerTest, SmallBucketsLaunchDuringBackwardAndMatchTheAfterPath) {
  Reducer::Options overlapped;
  overlapped.first_bucket_bytes = 256;
  overlapped.bucket_cap_bytes = 2048;
  Reducer::Options after = overlapped;
  after.overlap = false;
  auto a = RunRanks(2, overlapped, 1);
  auto b = RunRanks(2, after, 1);
  ASSERT_TRUE(a[0].status.ok() && b[0].status.ok());
  EXPECT_GE(a[0].buckets, 3u);
  // Every bucket was launched from an autograd hook, before backward ended.
  EXPECT_EQ(a[0].stats.buckets_launched_during_backward,
            static_cast<int64_t>(a[0].buckets));
  EXPECT_EQ(b[0].stats.buckets_launched_during_backward, 0);
  EXPECT_EQ(a[0].stats.allreduce_calls, b[0].stats.allreduce_calls);
  for (int r = 0; r < 2; ++r) ExpectGradsNear(a[r].grads, b[r].grads);
  ExpectGradsNear(a[0].grads, ReferenceGrads(2, 1));
}

// With several buckets in flight (Gloo lanes) all-reduces complete out of
// issue order. Here every step's buckets complete newest first: the Reducer
// waits for each, so the averaged gradients are bit-identical to in-order
// completion, with and without compression.
TEST(ReducerTest, BucketsCompletingInReverseGiveTheSameGradients) {
  for (BucketCompression c :
       {BucketCompression::kNone, BucketCompression::kBf16}) {
    SCOPED_TRACE(static_cast<int>(c));
    Reducer::Options options;
    options.first_bucket_bytes = 256;
    options.bucket_cap_bytes = 2048;
    options.compression = c;
    auto in_order = RunRanks(3, options, 1);
    auto reversed = RunRanks(3, options, 1, /*init_seed_rank1=*/7,
                             CompletionOrder::kReversedUntilWaited);
    for (int r = 0; r < 3; ++r) {
      ASSERT_TRUE(in_order[r].status.ok()) << in_order[r].status;
      ASSERT_TRUE(reversed[r].status.ok()) << reversed[r].status;
      ASSERT_GE(reversed[r].buckets, 3u);
      // The buckets (after the broadcasts, which each complete before the
      // next is issued) did complete last-issued first.
      const std::vector<int64_t>& done = reversed[r].completion_order;
      const size_t buckets = reversed[r].buckets;
      ASSERT_GE(done.size(), buckets);
      for (size_t i = done.size() - buckets; i + 1 < done.size(); ++i) {
        EXPECT_GT(done[i], done[i + 1]) << "rank " << r;
      }
      ASSERT_EQ(in_order[r].grads.size(), reversed[r].grads.size());
      for (size_t i = 0; i < in_order[r].grads.size(); ++i) {
        EXPECT_TRUE(torch::equal(in_order[r].grads[i], reversed[r].grads[i]))
            << "rank " << r << " param " << i;
      }
    }
    if (c == BucketCompression::kNone) {
      ExpectGradsNear(reversed[0].grads, ReferenceGrads(3, 1));
    }
  }
}

TEST(ReducerTest, NoSyncAccumulatesMicroStepsThenSyncsOnce) {
  auto results = RunRanks(2, Reducer::Options(), 3);
  ASSERT_TRUE(results[0].status.ok());
  EXPECT_EQ(results[0].stats.allreduce_calls,
            static_cast<int64_t>(results[0].buckets));
  ExpectGradsNear(results[0].grads, ReferenceGrads(2, 3));
  ExpectGradsNear(results[1].grads, ReferenceGrads(2, 3));
}

TEST(ReducerTest, BroadcastMakesRanksStartFromRankZero) {
  // Rank 1 starts from other weights; after the broadcast both compute the
  // gradients of rank 0's model.
  auto results = RunRanks(2, Reducer::Options(), 1, /*init_seed_rank1=*/99);
  ASSERT_TRUE(results[1].status.ok());
  ExpectGradsNear(results[1].grads, ReferenceGrads(2, 1));
}

TEST(ReducerTest, OneRankLaunchesNothingAndKeepsItsGradients) {
  auto results = RunRanks(1, Reducer::Options(), 1);
  ASSERT_TRUE(results[0].status.ok()) << results[0].status;
  EXPECT_EQ(results[0].stats.allreduce_calls, 0);
  ExpectGradsNear(results[0].grads, ReferenceGrads(1, 1));
  // Micro-steps accumulate the same way.
  auto accumulated = RunRanks(1, Reducer::Options(), 3);
  ASSERT_TRUE(accumulated[0].status.ok());
  ExpectGradsNear(accumulated[0].grads, ReferenceGrads(1, 3));
}

// communicate_alone keeps the whole path at world size 1: every bucket is
// launched (during backward) and waited for, and the gradients are the
// rank's own, divided by one.
TEST(ReducerTest, OneRankCommunicatingAloneLaunchesEveryBucket) {
  Reducer::Options alone;
  alone.communicate_alone = true;
  alone.first_bucket_bytes = 256;
  alone.bucket_cap_bytes = 2048;
  auto results = RunRanks(1, alone, 1);
  ASSERT_TRUE(results[0].status.ok()) << results[0].status;
  EXPECT_EQ(results[0].stats.allreduce_calls,
            static_cast<int64_t>(results[0].buckets));
  EXPECT_GT(results[0].buckets, 1u);
  EXPECT_GT(results[0].stats.buckets_launched_during_backward, 0);
  ExpectGradsNear(results[0].grads, ReferenceGrads(1, 1));
}

TEST(ReducerTest, RejectsBadParameters) {
  InProcessGroup group(1);
  InProcessCommunicator comm(&group, 0);
  EXPECT_FALSE(Reducer::Create(&comm, {}, {}).ok());
  EXPECT_FALSE(
      Reducer::Create(nullptr, {torch::zeros({2}, torch::requires_grad())}, {})
          .ok());
  EXPECT_FALSE(
      Reducer::Create(&comm,
                      {torch::zeros({2}, torch::kFloat64).requires_grad_()}, {})
          .ok());
  EXPECT_FALSE(Reducer::Create(&comm, {torch::zeros({2})}, {}).ok());
}

}  // namespace
}  // namespace ringleader
