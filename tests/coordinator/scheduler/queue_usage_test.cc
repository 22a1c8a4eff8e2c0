#include "coordinator/scheduler/queue_usage.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"

namespace ringleader::scheduler {
namespace {

JobState Running(const std::string& queue, int32_t workers) {
  JobState j;
  j.id = queue + "-job";
  j.queue = queue;
  j.workers = workers;
  return j;
}

TEST(QueueUsageTest, SharesAreBorrowedWorkersOverWeight) {
  QueueUsage u({{"a", 2, 1.0, true}, {"b", 2, 2.0, true}, {"c", 4, 1, false}},
               {Running("a", 4), Running("b", 4), Running("c", 3)});
  EXPECT_EQ(u.Used("a"), 4);
  EXPECT_EQ(u.Borrowed("a"), 2);
  EXPECT_DOUBLE_EQ(u.Share("a"), 2.0);
  EXPECT_DOUBLE_EQ(u.Share("b"), 1.0);  // Twice the weight.
  EXPECT_DOUBLE_EQ(u.Share("c"), 0.0);  // Within its quota.
  EXPECT_TRUE(u.MayTake("a", 100));
  EXPECT_TRUE(u.MayTake("c", 1));
  EXPECT_FALSE(u.MayTake("c", 2));  // May not borrow.
  EXPECT_EQ(u.Allowance("c"), 1);
  EXPECT_TRUE(u.WithinQuotaAfter("c", 1));
  EXPECT_FALSE(u.WithinQuotaAfter("a", 0));
  u.Add("a", -2);
  EXPECT_EQ(u.Borrowed("a"), 0);
}

TEST(QueueUsageTest, AnUnconfiguredQueueBorrowsEverything) {
  QueueUsage u({}, {Running("team", 3)});
  EXPECT_EQ(u.Borrowed("team"), 3);
  EXPECT_TRUE(u.MayTake("other", 50));
  EXPECT_EQ(u.Allowance("other"), std::numeric_limits<int32_t>::max());
}

TEST(QueueUsageTest, ZeroWeightGivesBackFirst) {
  QueueUsage u({{"free-rider", 0, 0.0, true}}, {Running("free-rider", 1)});
  EXPECT_EQ(u.Share("free-rider"), std::numeric_limits<double>::infinity());
  // A weight that is not a number sorts as that, not as NaN.
  QueueUsage nan({{"odd", 0, std::nan(""), true}}, {Running("odd", 1)});
  EXPECT_EQ(nan.Share("odd"), std::numeric_limits<double>::infinity());
}

}  // namespace
}  // namespace ringleader::scheduler
