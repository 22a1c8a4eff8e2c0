// The elastic policy through the Coordinator composition root, on a
// FakeClock: a job below min_workers fails after its rendezvous timeout
// (and a replacement in time lets it go on); an idle worker that arrives
// while a smaller generation runs joins at the next committed checkpoint,
// without spending the restart budget, or at once when its members keep
// their state.
#include <map>
#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "tests/testing/fake_clock_coordinator.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

class ElasticPolicyTest : public testing::FakeClockCoordinatorTest {
 protected:
  std::string Submit(v1::JobSpec spec) {
    // Where Commit's checkpoints go (a commit must lie inside it).
    spec.set_checkpoint_dir("/tmp/ckpt");
    return FakeClockCoordinatorTest::Submit(spec);
  }

  absl::StatusOr<v1::CommitCheckpointResponse> Commit(const std::string& job,
                                                      int64_t gen,
                                                      int64_t epoch,
                                                      int64_t step) {
    v1::CommitCheckpointRequest c;
    c.set_job_id(job);
    c.set_generation(gen);
    c.set_rank(0);
    c.set_epoch(epoch);
    c.set_step(step);
    c.set_epoch_sample_offset(epoch == 0 ? step * 20 : 0);
    c.set_path("/tmp/ckpt/grow-step" + std::to_string(step) + ".ckpt");
    return coordinator_->training_calls().CommitCheckpoint(workers_caller_, c);
  }
};

TEST_F(ElasticPolicyTest, BelowMinTheJobFailsAfterItsRendezvousTimeout) {
  v1::JobSpec spec = testing::MinimalJobSpec("short", 2, 2);
  spec.set_rendezvous_timeout_ms(20'000);
  const std::string job = Submit(spec);
  const std::string w1 = AddWorker(job);
  Join(job, w1);
  EXPECT_EQ(Job(job).state(), v1::JOB_STATE_RENDEZVOUS);
  clock_.Advance(absl::Milliseconds(19'999));
  EXPECT_TRUE(joined_.empty());
  clock_.Advance(absl::Milliseconds(1));
  const std::string want =
      "rendezvous timed out after 20s: 1 of min 2 workers joined";
  ASSERT_EQ(joined_.count(w1), 1u);
  EXPECT_TRUE(absl::IsDeadlineExceeded(joined_[w1].status()))
      << joined_[w1].status();
  EXPECT_EQ(joined_[w1].status().message(), want);
  EXPECT_EQ(Job(job).state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(Job(job).message(), want);
  // The worker is let go at its next heartbeat.
  v1::HeartbeatResponse hb = Heartbeat(w1, job, 0);
  ASSERT_TRUE(hb.has_abort());
  EXPECT_FALSE(hb.abort().rejoin());
}

TEST_F(ElasticPolicyTest, TheDefaultTimeoutIsTenMinutes) {
  const std::string job = Submit(testing::MinimalJobSpec("default", 2, 2));
  const std::string w1 = AddWorker(job);
  Join(job, w1);
  clock_.Advance(absl::Minutes(10) - absl::Milliseconds(1));
  EXPECT_EQ(Job(job).state(), v1::JOB_STATE_RENDEZVOUS);
  clock_.Advance(absl::Milliseconds(1));
  EXPECT_EQ(Job(job).state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(Job(job).message(),
            "rendezvous timed out after 10m: 1 of min 2 workers joined");
}

TEST_F(ElasticPolicyTest, AReplacementBeforeTheTimeoutLetsTheJobContinue) {
  v1::JobSpec spec = testing::MinimalJobSpec("replace", 2, 2);
  spec.set_rendezvous_timeout_ms(20'000);
  spec.set_max_restarts(2);
  const std::string job = Submit(spec);
  const std::string w1 = AddWorker(job), w2 = AddWorker(job);
  Join(job, w1);
  Join(job, w2);
  ASSERT_TRUE(joined_[w1].ok());
  v1::LeaveRequest leave;
  leave.set_worker_id(w2);
  ASSERT_TRUE(coordinator_->worker_calls().Leave(workers_caller_, leave).ok());
  EXPECT_EQ(Job(job).restarts(), 1);
  Join(job, w1);
  clock_.Advance(absl::Seconds(15));
  const std::string w3 = AddWorker(job);  // Gets w2's place.
  Join(job, w3);
  ASSERT_TRUE(joined_[w3].ok()) << joined_[w3].status();
  EXPECT_EQ(joined_[w3]->generation(), 2);
  EXPECT_EQ(joined_[w3]->job_restarts(), 1);
  clock_.Advance(absl::Minutes(5));
  EXPECT_EQ(Job(job).state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(Job(job).world_size(), 2);
}

class ScaleUpTest : public ElasticPolicyTest {
 protected:
  // A job of 2..3 workers with max_restarts 0 runs generation 1 on two of
  // them; a third arrives, is assigned and waits.
  void SetUp() override {
    ElasticPolicyTest::SetUp();
    v1::JobSpec spec = testing::MinimalJobSpec("grow", 2, 3);
    spec.set_epochs(2);
    spec.set_max_restarts(0);
    spec.set_checkpoint_dir("/tmp/ckpt");
    spec.set_checkpoint_every_steps(5);
    spec.set_rendezvous_last_call_ms(1000);
    job_ = Submit(spec);
    w1_ = AddWorker(job_);
    w2_ = AddWorker(job_);
    Join(job_, w1_);
    Join(job_, w2_);
    clock_.Advance(absl::Seconds(1));  // The last call for a third.
    ASSERT_TRUE(joined_[w1_].ok()) << joined_[w1_].status();
    ASSERT_EQ(joined_[w1_]->world_size(), 2);
    w3_ = AddWorker(job_);
    Join(job_, w3_);
    ASSERT_EQ(joined_.count(w3_), 0u);  // The generation is live.
  }
  std::string job_, w1_, w2_, w3_;
};

TEST_F(ScaleUpTest, ANewcomerJoinsAtTheNextCheckpointWithoutARestart) {
  auto commit = Commit(job_, 1, 0, 5);
  ASSERT_TRUE(commit.ok()) << commit.status();
  EXPECT_TRUE(commit->generation_ended());
  v1::Job job = Job(job_);
  EXPECT_EQ(job.state(), v1::JOB_STATE_RESTARTING);
  EXPECT_EQ(job.restarts(), 0);
  EXPECT_EQ(job.last_checkpoint().step(), 5);  // The commit itself holds.
  // A restarted coordinator must not adopt the generation that ended.
  auto stored = store_->LoadGenerations();
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_TRUE(stored->empty());
  // The other rank hears of it at its next heartbeat.
  v1::HeartbeatResponse hb = Heartbeat(w2_, job_, 1);
  ASSERT_TRUE(hb.has_abort());
  EXPECT_TRUE(hb.abort().rejoin());
  // The bigger generation forms once both members are back.
  Join(job_, w2_);
  EXPECT_EQ(joined_.count(w3_), 0u);
  Join(job_, w1_);
  for (const std::string& w : {w1_, w2_, w3_}) {
    ASSERT_EQ(joined_.count(w), 1u) << w;
    ASSERT_TRUE(joined_[w].ok()) << joined_[w].status();
    EXPECT_EQ(joined_[w]->generation(), 2);
    EXPECT_EQ(joined_[w]->world_size(), 3);
    EXPECT_EQ(joined_[w]->job_restarts(), 0);
    EXPECT_EQ(joined_[w]->resume_from().step(), 5);
  }
  stored = store_->LoadGenerations();
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(stored->size(), 1u);
  EXPECT_EQ((*stored)[0].number(), 2);
  job = Job(job_);
  EXPECT_EQ(job.state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(job.world_size(), 3);
  EXPECT_EQ(job.restarts(), 0);
  // At max_workers, commits end nothing.
  commit = Commit(job_, 2, 0, 10);
  ASSERT_TRUE(commit.ok()) << commit.status();
  EXPECT_FALSE(commit->generation_ended());
  // And a failure still spends the (empty) budget: the job fails.
  v1::LeaveRequest leave;
  leave.set_worker_id(w3_);
  ASSERT_TRUE(coordinator_->worker_calls().Leave(workers_caller_, leave).ok());
  EXPECT_EQ(Job(job_).state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(Job(job_).restarts(), 1);
}

// Every member hears of the scale-up from the coordinator the moment the
// commit ends the generation, not by its next collective failing (which a
// peer's communicator going away does not cause for NCCL within a host).
TEST_F(ScaleUpTest, TheCoordinatorTellsEveryMemberAtOnce) {
  std::map<std::string, v1::GenerationAbort> heard;
  for (const std::string& w : {w1_, w2_}) {
    coordinator_->generation_watchers().Watch(
        w, job_, 1, [&heard, w](absl::StatusOr<v1::GenerationEvent> e) {
          ASSERT_TRUE(e.ok()) << e.status();
          heard[w] = e->ended();
        });
  }
  auto commit = Commit(job_, 1, 0, 5);
  ASSERT_TRUE(commit.ok()) << commit.status();
  ASSERT_TRUE(commit->generation_ended());
  for (const std::string& w : {w1_, w2_}) {
    ASSERT_EQ(heard.count(w), 1u) << w << " was not told";
    EXPECT_EQ(heard[w].generation(), 1);
    EXPECT_TRUE(heard[w].rejoin());
    EXPECT_NE(heard[w].reason().find("scale-up"), std::string::npos)
        << heard[w].reason();
  }
}

TEST_F(ScaleUpTest, NoScaleUpAtTheLastCheckpoint) {
  // Epoch 2 of 2: only evaluation is left, nothing to gain from a restart.
  auto commit = Commit(job_, 1, 2, 40);
  ASSERT_TRUE(commit.ok()) << commit.status();
  EXPECT_FALSE(commit->generation_ended());
  EXPECT_EQ(Job(job_).state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(Job(job_).world_size(), 2);
}

TEST_F(ScaleUpTest, WithoutANewcomerCommitsEndNothing) {
  v1::LeaveRequest leave;
  leave.set_worker_id(w3_);
  ASSERT_TRUE(coordinator_->worker_calls()
                  .Leave(workers_caller_, leave)
                  .ok());  // Only a waiter: no restart.
  EXPECT_EQ(Job(job_).restarts(), 0);
  auto commit = Commit(job_, 1, 0, 5);
  ASSERT_TRUE(commit.ok()) << commit.status();
  EXPECT_FALSE(commit->generation_ended());
  EXPECT_EQ(Job(job_).state(), v1::JOB_STATE_RUNNING);
}

// Members that keep their state (memory recovery) lose no work wherever
// the generation ends: a newcomer gets in at once, not at a checkpoint, and
// a job without a checkpoint_dir grows too.
class ScaleUpFromMemoryTest : public ElasticPolicyTest {
 protected:
  void Start(bool members_keep_state, int64_t steps_done = 0) {
    v1::JobSpec spec = testing::MinimalJobSpec("grow-mem", 2, 3);
    spec.set_epochs(2);
    spec.set_rendezvous_last_call_ms(1000);
    job_ = FakeClockCoordinatorTest::Submit(spec);  // No checkpoint_dir.
    w1_ = AddWorker(job_);
    w2_ = AddWorker(job_);
    Join(job_, w1_, members_keep_state);
    Join(job_, w2_, members_keep_state);
    clock_.Advance(absl::Seconds(1));
    ASSERT_TRUE(joined_[w1_].ok()) << joined_[w1_].status();
    for (int32_t rank = 0; rank < 2 && steps_done > 0; ++rank) {
      v1::ReportProgressRequest r;
      r.set_job_id(job_);
      r.set_generation(1);
      r.set_rank(rank);
      r.set_step(steps_done);
      r.set_total_steps(kTotalSteps);
      r.set_loss(0.5);
      ASSERT_TRUE(coordinator_->training_calls()
                      .ReportProgress(workers_caller_, r)
                      .ok());
    }
    if (steps_done >= kTotalSteps) {
      // Nothing left to train: a newcomer is not even given the job.
      auto reg = RegisterAs(NewProcess());
      ASSERT_TRUE(reg.ok()) << reg.status();
      w3_ = reg->worker_id();
      EXPECT_FALSE(Heartbeat(w3_, "", 0).has_assignment());
      return;
    }
    w3_ = AddWorker(job_);
    Join(job_, w3_);
  }
  static constexpr int64_t kTotalSteps = 40;
  std::string job_, w1_, w2_, w3_;
};

TEST_F(ScaleUpFromMemoryTest, ANewcomerGetsInAtOnce) {
  Start(/*members_keep_state=*/true, /*steps_done=*/3);
  ASSERT_FALSE(HasFailure());
  v1::Job job = Job(job_);
  EXPECT_EQ(job.state(), v1::JOB_STATE_RESTARTING);
  EXPECT_EQ(job.restarts(), 0);  // A resize, not a failure.
  Join(job_, w2_, true);
  Join(job_, w1_, true);
  for (const std::string& w : {w1_, w2_, w3_}) {
    ASSERT_EQ(joined_.count(w), 1u) << w;
    ASSERT_TRUE(joined_[w].ok()) << joined_[w].status();
    EXPECT_EQ(joined_[w]->generation(), 2);
    EXPECT_EQ(joined_[w]->world_size(), 3);
  }
}

TEST_F(ScaleUpFromMemoryTest, MembersThatKeepNothingWaitForACheckpoint) {
  Start(/*members_keep_state=*/false);
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(joined_.count(w3_), 0u);
  EXPECT_EQ(Job(job_).state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(Job(job_).world_size(), 2);
}

TEST_F(ScaleUpFromMemoryTest, NoScaleUpOnceTrainingIsDone) {
  // Every planned step is done: only the final evaluation is left, and the
  // newcomer is not assigned the job (Start).
  Start(/*members_keep_state=*/true, /*steps_done=*/kTotalSteps);
  ASSERT_FALSE(HasFailure());
  const v1::Job job = Job(job_);
  ASSERT_EQ(job.progress().total_steps(), kTotalSteps);
  EXPECT_EQ(job.state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(joined_.count(w3_), 0u);
}

// Not elastic policy, but the same fixture: a join's answer names every
// member only when the request asks (a list in every answer is O(n^2) bytes
// for n workers); the rank and world size are always there.
TEST_F(ElasticPolicyTest, AJoinCarriesTheMemberListOnlyWhenAsked) {
  const std::string job = Submit(testing::MinimalJobSpec("members", 2, 2));
  const std::string w1 = AddWorker(job);
  const std::string w2 = AddWorker(job);
  Join(job, w1);
  v1::JoinRendezvousRequest r;
  r.set_job_id(job);
  r.set_worker_id(w2);
  r.set_timeout_ms(3600'000);
  r.set_include_members(true);
  std::optional<JoinResult> with_members;
  coordinator_->join_calls().JoinRendezvous(
      workers_caller_, r, [&](JoinResult g) { with_members = g; });
  ASSERT_EQ(joined_.count(w1), 1u);
  ASSERT_TRUE(joined_[w1].ok()) << joined_[w1].status();
  EXPECT_EQ(joined_[w1]->world_size(), 2);
  EXPECT_EQ(joined_[w1]->members_size(), 0);
  ASSERT_TRUE(with_members.has_value());
  ASSERT_TRUE(with_members->ok()) << with_members->status();
  EXPECT_EQ((*with_members)->world_size(), 2);
  ASSERT_EQ((*with_members)->members_size(), 2);
  EXPECT_NE(joined_[w1]->rank(), (*with_members)->rank());
  const v1::RendezvousMember& me =
      (*with_members)->members((*with_members)->rank());
  EXPECT_EQ(me.worker_id(), w2);
  EXPECT_EQ((*with_members)->members(joined_[w1]->rank()).worker_id(), w1);
}

}  // namespace
}  // namespace ringleader
