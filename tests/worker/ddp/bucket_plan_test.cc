#include "worker/ddp/bucket_plan.h"

#include "gtest/gtest.h"

namespace ringleader {
namespace {

TEST(BucketPlanTest, ReverseOrderSmallFirstBucketThenCap) {
  // Sizes in elements of 4 bytes: first cap 40 B (10 elements), then 100 B.
  BucketPlan p = PlanBuckets({5, 20, 8, 4, 6}, 4, 40, 100);
  ASSERT_EQ(p.buckets.size(), 3u);
  EXPECT_EQ(p.buckets[0].params, (std::vector<size_t>{4, 3}));  // 6+4=10 full
  EXPECT_EQ(p.buckets[1].params, (std::vector<size_t>{2}));     // 8; +20 > 25
  EXPECT_EQ(p.buckets[2].params, (std::vector<size_t>{1, 0}));
  EXPECT_EQ(p.buckets[2].offsets, (std::vector<size_t>{0, 20}));
  EXPECT_EQ(p.buckets[2].numel, 25u);
  EXPECT_EQ(p.bucket_of[0], 2u);
  EXPECT_EQ(p.slot_of[0], 1u);
}

TEST(BucketPlanTest, OversizeParameterGetsOwnBucketAndAllAreCovered) {
  BucketPlan p = PlanBuckets({1000, 1, 1}, 4, 8, 16);
  ASSERT_EQ(p.buckets.size(), 2u);
  EXPECT_EQ(p.buckets[0].params, (std::vector<size_t>{2, 1}));
  EXPECT_EQ(p.buckets[1].params, (std::vector<size_t>{0}));
  size_t covered = 0;
  for (const auto& b : p.buckets) covered += b.params.size();
  EXPECT_EQ(covered, 3u);
}

TEST(BucketPlanTest, DefaultsPutASmallModelInOneBucket) {
  BucketPlan p = PlanBuckets({784 * 256, 256, 256 * 128, 128, 1280, 10}, 4,
                             1 << 20, 25 << 20);
  // 1 MiB first bucket takes the last layers, the big first layer follows.
  ASSERT_EQ(p.buckets.size(), 1u);
  BucketPlan empty = PlanBuckets({}, 4, 1, 1);
  EXPECT_TRUE(empty.buckets.empty());
}

}  // namespace
}  // namespace ringleader
