#include "coordinator/scheduler/reclaim.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/coordinator/scheduler/job_states.h"

namespace ringleader::scheduler {
namespace {

std::vector<std::string> Moves(const Reclaimed& r) {
  std::vector<std::string> out;
  for (const Decision& d : r.moves) {
    out.push_back(
        std::string(d.move == Move::kShrink ? "shrink " : "preempt ") +
        d.job_id + " " + std::to_string(d.workers));
  }
  return out;
}

TEST(ReclaimTest, ShrinksBeforePreemptingAndLowestPriorityFirst) {
  const JobState urgent = Job("urgent", 10, 2, 2, 0, 0);
  const JobState low = Job("low", 0, 2, 4, 0, 4);
  const JobState mid = Job("mid", 5, 1, 4, 0, 4);
  const QueueUsage usage({}, {low, mid});
  auto r = Reclaim(urgent, 3, {&mid, &low}, usage);
  ASSERT_TRUE(r.has_value());
  // low gives its 2 spare ranks, then mid 1: nobody is preempted.
  EXPECT_EQ(Moves(*r),
            (std::vector<std::string>{"shrink low 2", "shrink mid 3"}));
  EXPECT_EQ(r->freed, 3);
  EXPECT_EQ(r->moves[0].reason, "shrunk to 2 for job urgent, priority 10");
}

TEST(ReclaimTest, PreemptsWholeJobsOnlyWhenShrinkingCannotMakeRoom) {
  const JobState urgent = Job("urgent", 10, 4, 4, 0, 0);
  const JobState rigid_old = Job("rigid-old", 0, 2, 2, 100, 2);
  const JobState rigid_new = Job("rigid-new", 0, 2, 2, 10, 2);
  const JobState elastic = Job("elastic", 1, 2, 3, 0, 3);
  const QueueUsage usage({}, {rigid_old, rigid_new, elastic});
  auto r = Reclaim(urgent, 3, {&rigid_old, &rigid_new, &elastic}, usage);
  ASSERT_TRUE(r.has_value());
  // Shrinking frees 1; the newest of the lowest priority goes whole, and
  // the elastic job gives its spare rank for the rest.
  EXPECT_EQ(Moves(*r), (std::vector<std::string>{"preempt rigid-new 0",
                                                 "shrink elastic 2"}));
  EXPECT_EQ(r->freed, 3);
}

TEST(ReclaimTest, NothingWhenAllVictimsTogetherAreTooFew) {
  const JobState urgent = Job("urgent", 10, 8, 8, 0, 0);
  const JobState low = Job("low", 0, 2, 4, 0, 4);
  const JobState peer = Job("peer", 10, 1, 4, 0, 4);  // Same priority: kept.
  const QueueUsage usage({}, {low, peer});
  EXPECT_FALSE(Reclaim(urgent, 5, {&low, &peer}, usage).has_value());
}

TEST(ReclaimTest, AQueueWithinItsQuotaTakesBackOnlyWhatOthersBorrowed) {
  // Queue a owns 4 and runs nothing; queue b owns 2 and borrowed 3.
  const std::vector<QueueConfig> queues = {{"a", 4, 1, true},
                                           {"b", 2, 1, true}};
  const JobState mine = Job("mine", 0, 4, 4, 0, 0, "a");
  const JobState big = Job("big", 5, 1, 5, 0, 5, "b");  // Higher priority.
  const QueueUsage usage(queues, {big});
  auto r = Reclaim(mine, 3, {&big}, usage);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(Moves(*r), (std::vector<std::string>{"shrink big 2"}));
  EXPECT_EQ(r->moves[0].reason,
            "shrunk to 2 for job mine, its queue a under its quota");
  // More than b borrowed is not taken back.
  EXPECT_FALSE(Reclaim(mine, 4, {&big}, usage).has_value());
}

TEST(ReclaimTest, TheQueueMostOverItsShareGivesBackFirst) {
  const std::vector<QueueConfig> queues = {
      {"a", 0, 1, true}, {"b", 0, 1, true}, {"c", 0, 4, true}};
  const JobState urgent = Job("urgent", 10, 1, 1, 0, 0, "c");
  const JobState a = Job("in-a", 0, 1, 2, 0, 2, "a");
  const JobState b = Job("in-b", 0, 1, 4, 0, 4, "b");
  const QueueUsage usage(queues, {a, b});
  auto r = Reclaim(urgent, 1, {&a, &b}, usage);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(Moves(*r), (std::vector<std::string>{"shrink in-b 3"}));
}

TEST(ReclaimTest, AnotherQueueWithinItsQuotaKeepsItsWorkersFromPriority) {
  // Queue a owns the pool's 4 workers; b owns none. b's urgent job may not
  // take a's workers by priority: a's job would take them back by quota in
  // the next pass, and so on in turn.
  const std::vector<QueueConfig> queues = {{"a", 4, 1, true},
                                           {"b", 0, 1, true}};
  const JobState urgent = Job("urgent", 5, 4, 4, 0, 0, "b");
  const JobState owner = Job("owner", 0, 4, 4, 0, 4, "a");
  const QueueUsage usage(queues, {owner});
  EXPECT_FALSE(Reclaim(urgent, 4, {&owner}, usage).has_value());
}

TEST(ReclaimTest, EveryTakeFromAnotherQueueCountsAgainstWhatItBorrowed) {
  // a (quota 4) runs nothing; b (quota 2) holds 4, c (quota 0) holds 2.
  const std::vector<QueueConfig> queues = {
      {"a", 4, 1, true}, {"b", 2, 1, true}, {"c", 0, 1, true}};
  const JobState j = Job("j", 5, 4, 4, 0, 0, "a");
  const JobState low_b = Job("low-b", 0, 2, 2, 100, 2, "b");
  const JobState high_b = Job("high-b", 5, 2, 2, 10, 2, "b");
  const JobState high_c = Job("high-c", 5, 2, 2, 50, 2, "c");
  const QueueUsage usage(queues, {low_b, high_b, high_c});
  auto r = Reclaim(j, 4, {&low_b, &high_b, &high_c}, usage);
  ASSERT_TRUE(r.has_value());
  // low-b uses up b's 2 borrowed workers: high-b stays, high-c goes.
  EXPECT_EQ(Moves(*r),
            (std::vector<std::string>{"preempt low-b 0", "preempt high-c 0"}));
}

TEST(ReclaimTest, AVictimMadeNeedlessByABiggerOneIsSpared) {
  const JobState urgent = Job("urgent", 10, 4, 4, 0, 0);
  const JobState tiny = Job("tiny", 0, 1, 1, 0, 1);
  const JobState big = Job("big", 1, 4, 4, 0, 4);
  const QueueUsage usage({}, {tiny, big});
  auto r = Reclaim(urgent, 4, {&tiny, &big}, usage);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(Moves(*r), (std::vector<std::string>{"preempt big 0"}));
  EXPECT_EQ(r->freed, 4);
}

}  // namespace
}  // namespace ringleader::scheduler
