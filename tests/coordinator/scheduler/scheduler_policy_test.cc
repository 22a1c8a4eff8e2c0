#include "coordinator/scheduler/scheduler_policy.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/coordinator/scheduler/job_states.h"

namespace ringleader::scheduler {
namespace {

std::vector<std::string> Moves(const Plan& p) {
  std::vector<std::string> out;
  for (const Decision& d : p.decisions) {
    const char* m = d.move == Move::kAdmit    ? "admit "
                    : d.move == Move::kGrow   ? "grow "
                    : d.move == Move::kShrink ? "shrink "
                                              : "preempt ";
    out.push_back(m + d.job_id + " " + std::to_string(d.workers));
  }
  return out;
}

std::vector<std::string> Waiting(const Plan& p) {
  std::vector<std::string> out;
  for (const WaitingJob& w : p.waiting) out.push_back(w.job_id + ": " + w.why);
  return out;
}

TEST(SchedulerPolicyTest, PriorityThenAgeAndWholeGangsOnly) {
  PoolState pool;
  pool.free_workers = 4;
  pool.jobs = {Job("old", 0, 2, 2, 300), Job("urgent", 9, 3, 3, 10),
               Job("new", 0, 2, 2, 100)};
  const Plan p = Schedule(pool, kNow);
  // urgent takes 3; old needs 2 and 1 is free: it waits with the pool's
  // last worker left idle rather than holding part of a gang.
  EXPECT_EQ(Moves(p), (std::vector<std::string>{"admit urgent 3"}));
  EXPECT_EQ(Waiting(p),
            (std::vector<std::string>{"old: needs 2 workers, 1 free",
                                      "new: needs 2 workers, 1 free"}));
}

TEST(SchedulerPolicyTest, AnUrgentJobShrinksAnElasticOneAndItRegrows) {
  PoolState pool;
  pool.free_workers = 0;
  JobState elastic = Job("elastic", 0, 2, 4, 600, /*workers=*/4);
  pool.jobs = {elastic, Job("urgent", 5, 2, 2, 1)};
  Plan p = Schedule(pool, kNow);
  EXPECT_EQ(Moves(p),
            (std::vector<std::string>{"shrink elastic 2", "admit urgent 2"}));
  EXPECT_EQ(p.decisions[0].reason, "shrunk to 2 for job urgent, priority 5");
  EXPECT_TRUE(p.waiting.empty());

  // The urgent job ended: its two workers go back to the shrunk job.
  elastic.workers = 2;
  pool.free_workers = 2;
  pool.jobs = {elastic};
  p = Schedule(pool, kNow + absl::Minutes(10));
  EXPECT_EQ(Moves(p), (std::vector<std::string>{"grow elastic 4"}));
}

TEST(SchedulerPolicyTest, WholeJobsArePreemptedOnlyWhenShrinkingIsNotEnough) {
  PoolState pool;
  pool.jobs = {Job("rigid", 0, 2, 2, 600, 2), Job("elastic", 0, 1, 2, 500, 2),
               Job("urgent", 5, 4, 4, 1)};
  const Plan p = Schedule(pool, kNow);
  // Shrinking frees 1 of the 4 needed: the newest victim goes whole
  // (elastic, 2), then rigid whole too (shrinking it frees nothing).
  EXPECT_EQ(Moves(p),
            (std::vector<std::string>{"preempt elastic 0", "preempt rigid 0",
                                      "admit urgent 4"}));
}

TEST(SchedulerPolicyTest, EqualPriorityWaitsInsteadOfPreempting) {
  PoolState pool;
  pool.jobs = {Job("running", 0, 1, 4, 600, 4), Job("later", 0, 2, 2, 1)};
  const Plan p = Schedule(pool, kNow);
  EXPECT_TRUE(p.decisions.empty());
  EXPECT_EQ(Waiting(p),
            (std::vector<std::string>{"later: needs 2 workers, 0 free"}));
}

TEST(SchedulerPolicyTest, BackfillStartsOnlyWhatDelaysNobodyAhead) {
  // 3 free; `first` (4 workers) waits for `ending`'s 2, which end in 10
  // minutes: from then it has 5 and needs 4, so 1 worker is spare for good.
  PoolState pool;
  pool.free_workers = 3;
  JobState ending = Job("ending", 0, 2, 2, 900, 2);
  ending.expected_end = kNow + absl::Minutes(10);
  pool.jobs = {ending, Job("first", 0, 4, 4, 600), Job("two", 0, 2, 2, 300),
               Job("one", 0, 1, 1, 100)};
  const Plan p = Schedule(pool, kNow);
  EXPECT_EQ(Moves(p), (std::vector<std::string>{"admit one 1"}));
  ASSERT_EQ(p.waiting.size(), 2u);
  EXPECT_EQ(p.waiting[0].job_id, "first");
  EXPECT_EQ(p.waiting[1].why,
            "needs 2 workers, 3 free; starting it now would delay a job "
            "ahead of it");
}

TEST(SchedulerPolicyTest, WithoutKnownEndsNothingStartsAheadOfAWaitingJob) {
  PoolState pool;
  pool.free_workers = 3;
  pool.jobs = {Job("running", 0, 2, 2, 900, 2), Job("first", 0, 4, 4, 600),
               Job("one", 0, 1, 1, 100)};
  const Plan p = Schedule(pool, kNow);
  // When `running` ends is not known, so `first` has no reservation, and
  // `one` starting now might take what `first` then needs.
  EXPECT_TRUE(p.decisions.empty());
  EXPECT_EQ(Waiting(p),
            (std::vector<std::string>{
                "first: needs 4 workers, 3 free",
                "one: needs 1 worker, 3 free; starting it now would delay a "
                "job ahead of it"}));
}

TEST(SchedulerPolicyTest, HigherPriorityAheadIsCountedInTheReason) {
  PoolState pool;
  pool.jobs = {Job("hold", 9, 2, 2, 900, 2), Job("a", 5, 2, 2, 300),
               Job("b", 5, 2, 2, 200), Job("mine", 1, 2, 2, 100)};
  const Plan p = Schedule(pool, kNow);
  ASSERT_EQ(p.waiting.size(), 3u);
  EXPECT_EQ(p.waiting[2].why,
            "needs 2 workers, 0 free, 2 jobs of higher priority ahead");
}

TEST(SchedulerPolicyTest, QuotasAndBorrowing) {
  PoolState pool;
  pool.free_workers = 6;
  pool.queues = {{"strict", 2, 1, false}, {"lender", 4, 1, true}};
  pool.jobs = {Job("s1", 0, 2, 2, 300, 0, "strict"),
               Job("s2", 0, 2, 2, 200, 0, "strict"),
               Job("borrower", 0, 3, 3, 100, 0, "lender")};
  const Plan p = Schedule(pool, kNow);
  EXPECT_EQ(Moves(p),
            (std::vector<std::string>{"admit s1 2", "admit borrower 3"}));
  ASSERT_EQ(p.waiting.size(), 1u);
  EXPECT_EQ(p.waiting[0].why,
            "needs 2 workers, 4 free; queue strict holds 2 and may not "
            "borrow past its quota");
}

TEST(SchedulerPolicyTest, AJobLargerThanThePoolHoldsNobodyBack) {
  PoolState pool;
  pool.free_workers = 2;
  pool.jobs = {Job("huge", 9, 8, 8, 900), Job("small", 0, 1, 2, 10)};
  const Plan p = Schedule(pool, kNow);
  EXPECT_EQ(Moves(p),
            (std::vector<std::string>{"admit small 1", "grow small 2"}));
  EXPECT_EQ(Waiting(p), (std::vector<std::string>{
                            "huge: needs 8 workers, 2 free; the pool has 2"}));
}

TEST(SchedulerPolicyTest, AmongEqualsTheQueueBorrowingLessGoesFirst) {
  PoolState pool;
  pool.free_workers = 2;
  pool.queues = {{"busy", 0, 1, true}, {"idle", 0, 1, true}};
  pool.jobs = {Job("runs", 0, 3, 3, 900, 3, "busy"),
               Job("busy-older", 0, 2, 2, 600, 0, "busy"),
               Job("idle-newer", 0, 2, 2, 10, 0, "idle")};
  const Plan p = Schedule(pool, kNow);
  EXPECT_EQ(Moves(p), (std::vector<std::string>{"admit idle-newer 2"}));
  EXPECT_EQ(Waiting(p),
            (std::vector<std::string>{"busy-older: needs 2 workers, 0 free"}));
}

TEST(SchedulerPolicyTest, AQueueUnderItsQuotaTakesBackWhatWasBorrowed) {
  // Team a owns 2 workers and runs nothing; team b owns 2 and borrowed a's
  // by growing its job to 4. a's job takes its 2 back by shrinking b's,
  // whatever the priorities.
  PoolState pool;
  pool.queues = {{"a", 2, 1, true}, {"b", 2, 1, true}};
  pool.jobs = {Job("b-job", 5, 2, 4, 900, 4, "b"),
               Job("a-job", 0, 2, 2, 10, 0, "a")};
  const Plan p = Schedule(pool, kNow);
  EXPECT_EQ(Moves(p),
            (std::vector<std::string>{"shrink b-job 2", "admit a-job 2"}));
  EXPECT_EQ(p.decisions[0].reason,
            "shrunk to 2 for job a-job, its queue a under its quota");
}

TEST(SchedulerPolicyTest, ATakeBackIsNotUndoneByPriorityInTheNextPass) {
  PoolState pool;
  pool.queues = {{"owner", 4, 1, true}, {"guest", 0, 1, true}};
  pool.jobs = {Job("guest-job", 5, 4, 4, 900, 4, "guest"),
               Job("owner-job", 0, 4, 4, 10, 0, "owner")};
  Plan p = Schedule(pool, kNow);
  EXPECT_EQ(Moves(p), (std::vector<std::string>{"preempt guest-job 0",
                                                "admit owner-job 4"}));
  // The next pass: the preempted guest job waits; it does not take the
  // owner's quota back by its higher priority.
  pool.jobs = {Job("guest-job", 5, 4, 4, 900, 0, "guest"),
               Job("owner-job", 0, 4, 4, 10, 4, "owner")};
  p = Schedule(pool, kNow + absl::Seconds(1));
  EXPECT_TRUE(p.decisions.empty());
  EXPECT_EQ(Waiting(p),
            (std::vector<std::string>{"guest-job: needs 4 workers, 0 free"}));
}

}  // namespace
}  // namespace ringleader::scheduler
