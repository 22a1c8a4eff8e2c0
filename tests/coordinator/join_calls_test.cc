#include "coordinator/join_calls.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/coordinator_managers.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

using JoinResult = absl::StatusOr<v1::JoinRendezvousResponse>;

class JoinCallsTest : public testing::CoordinatorManagersTest {
 protected:
  JoinCallsTest() {
    rendezvous_.SetResizedHook(
        [this](const std::string&, int64_t gen, const std::string&) {
          resized_.push_back(gen);
        });
  }

  void Formed(const std::string& job_id,
              const Rendezvous::Generation& gen) override {
    CoordinatorManagersTest::Formed(job_id, gen);
    facts_.Formed(job_id, gen.number);
  }

  // A join of `w` through the calls; its answer lands in answers_[w.id].
  Canceller CallJoin(const std::string& job_id, const Worker& w,
                     bool keeps_state = false, bool include_members = false) {
    v1::JoinRendezvousRequest r;
    r.set_job_id(job_id);
    r.set_worker_id(w.id);
    r.set_keeps_state(keeps_state);
    r.set_include_members(include_members);
    return calls_.JoinRendezvous(
        w.caller, r, [this, id = w.id](JoinResult g) { answers_[id] = g; });
  }

  CallerChecks checks_{workers_, rendezvous_, jobs_};
  GenerationFacts facts_{jobs_};
  JoinCalls calls_{checks_, workers_, jobs_,       rendezvous_,
                   facts_,  &clock_,  WaitLimits()};
  std::map<std::string, JoinResult> answers_;
  std::vector<int64_t> resized_;
};

TEST_F(JoinCallsTest, JoinersAreAnsweredWithTheirRankTheSpecAndTheOffer) {
  v1::JobSpec spec = testing::MinimalJobSpec("join", 2, 2);
  spec.set_checkpoint_dir("/ckpt");
  const std::string job = Submit(spec);
  v1::CheckpointRecord c;
  c.set_step(10);
  c.set_path("/ckpt/join-step10.ckpt");
  const int64_t id = jobs_.CommitCheckpoint(job, c)->checkpoint_id();
  const Worker a = Register(), b = Register();
  ASSERT_TRUE(workers_.SetJob(a.id, job).ok());
  ASSERT_TRUE(workers_.SetJob(b.id, job).ok());
  EXPECT_NE(CallJoin(job, a, false, /*include_members=*/true), nullptr);
  CallJoin(job, b);
  ASSERT_TRUE(answers_[a.id].ok()) << answers_[a.id].status();
  ASSERT_TRUE(answers_[b.id].ok()) << answers_[b.id].status();
  const v1::JoinRendezvousResponse& out = *answers_[a.id];
  EXPECT_EQ(out.generation(), 1);
  EXPECT_EQ(out.world_size(), 2);
  EXPECT_NE(out.rank(), answers_[b.id]->rank());
  EXPECT_EQ(out.spec().name(), "join");
  EXPECT_EQ(out.members_size(), 2);
  EXPECT_EQ(answers_[b.id]->members_size(), 0);  // Only for who asks.
  EXPECT_EQ(out.resume_from().checkpoint_id(), id);
  ASSERT_EQ(out.resume_candidates_size(), 1);
  EXPECT_EQ(Job(job).state(), v1::JOB_STATE_RUNNING);
}

TEST_F(JoinCallsTest, AWorkerJoinsOnlyTheJobItIsAssignedTo) {
  const std::string job = Submit(testing::MinimalJobSpec("assigned", 1, 1));
  const Worker a = Register();
  EXPECT_EQ(CallJoin(job, a), nullptr);
  EXPECT_TRUE(absl::IsFailedPrecondition(answers_[a.id].status()))
      << answers_[a.id].status();
  ASSERT_TRUE(workers_.SetJob(a.id, job).ok());
  v1::JoinRendezvousRequest r;
  r.set_job_id(job);
  r.set_worker_id(a.id);
  JoinResult stranger;
  calls_.JoinRendezvous(Register().caller, r,
                        [&](JoinResult g) { stranger = std::move(g); });
  EXPECT_TRUE(absl::IsUnauthenticated(stranger.status())) << stranger.status();
}

TEST_F(JoinCallsTest, AWithdrawnJoinNoLongerCounts) {
  const std::string job = Submit(testing::MinimalJobSpec("withdrawn", 2, 2));
  const Worker a = Register();
  ASSERT_TRUE(workers_.SetJob(a.id, job).ok());
  Canceller cancel = CallJoin(job, a);
  ASSERT_NE(cancel, nullptr);
  EXPECT_EQ(rendezvous_.waiter_count(), 1u);
  cancel();
  EXPECT_TRUE(absl::IsCancelled(answers_[a.id].status()));
  EXPECT_EQ(rendezvous_.waiter_count(), 0u);
}

TEST_F(JoinCallsTest, ANewcomerGrowsAGenerationWhoseMemberKeepsItsState) {
  const std::string job = Submit(testing::MinimalJobSpec("grow", 1, 2));
  const Worker a = Register(), b = Register();
  ASSERT_TRUE(workers_.SetJob(a.id, job).ok());
  CallJoin(job, a, /*keeps_state=*/true);
  clock_.Advance(absl::ZeroDuration());
  ASSERT_TRUE(answers_[a.id].ok());
  ASSERT_TRUE(workers_.SetJob(b.id, job).ok());
  CallJoin(job, b);
  EXPECT_EQ(resized_, std::vector<int64_t>{1});
}

TEST_F(JoinCallsTest, ANewcomerWaitsForACommitWhenNoMemberKeepsState) {
  const std::string job = Submit(testing::MinimalJobSpec("wait", 1, 2));
  const Worker a = Register(), b = Register();
  ASSERT_TRUE(workers_.SetJob(a.id, job).ok());
  CallJoin(job, a);
  clock_.Advance(absl::ZeroDuration());
  ASSERT_TRUE(workers_.SetJob(b.id, job).ok());
  CallJoin(job, b);
  EXPECT_TRUE(resized_.empty());
  EXPECT_TRUE(rendezvous_.IsWaiting(job, b.id));
}

}  // namespace
}  // namespace ringleader
