#include "common/shard_plan.h"

#include "gtest/gtest.h"

namespace ringleader {
namespace {

v1::JobSpec Spec(bool shuffle, bool drop_last) {
  v1::JobSpec s;
  s.set_seed(42);
  s.mutable_dataset()->set_shuffle(shuffle);
  s.mutable_dataset()->set_drop_last(drop_last);
  return s;
}

TEST(ShardPlanTest, TrainingShardsStartAtTheResumeOffsetInTheResumedEpoch) {
  ShardPlanInput in;
  in.epoch = 2;
  in.world_size = 3;
  in.rank = 1;
  in.dataset_size = 1000;
  in.resume = {2, 384};
  v1::ShardAssignment a = PlanShard(Spec(true, true), in);
  EXPECT_EQ(a.seed(), 42u);
  EXPECT_EQ(a.epoch(), 2);
  EXPECT_EQ(a.world_size(), 3);
  EXPECT_EQ(a.rank(), 1);
  EXPECT_EQ(a.dataset_size(), 1000);
  EXPECT_TRUE(a.shuffle());
  EXPECT_TRUE(a.drop_last());
  EXPECT_EQ(a.start_offset(), 384);
  // Later epochs start from their beginning, as does a fresh start.
  in.epoch = 3;
  EXPECT_EQ(PlanShard(Spec(true, true), in).start_offset(), 0);
  in.epoch = 2;
  in.resume = ShardResume();
  EXPECT_EQ(PlanShard(Spec(true, true), in).start_offset(), 0);
  // An offset past the split (a smaller copy of the data) is clamped.
  in.resume = {2, 5000};
  EXPECT_EQ(PlanShard(Spec(false, false), in).start_offset(), 1000);
}

TEST(ShardPlanTest, TheTestSplitIsEvaluatedOnceInOrder) {
  ShardPlanInput in;
  in.world_size = 2;
  in.rank = 0;
  in.dataset_size = 77;
  in.test_split = true;
  in.resume = {0, 10};
  v1::ShardAssignment a = PlanShard(Spec(true, true), in);
  EXPECT_FALSE(a.shuffle());
  EXPECT_FALSE(a.drop_last());
  EXPECT_EQ(a.start_offset(), 0);
  EXPECT_EQ(a.dataset_size(), 77);
}

}  // namespace
}  // namespace ringleader
