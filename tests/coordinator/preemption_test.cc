// Preemption through the Coordinator on a FakeClock (issue 34): the window
// a signalled member opens, the WHOLE and PARTIAL verdicts, a step mismatch,
// callers that may not preempt, and a PREEMPTED job that spends no restart
// and waits for workers without the rendezvous timeout failing it. Each
// case fails on the code before preemption (no Preempt call, no
// PREEMPTED state; a member leaving ended the generation as a failure).
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/testing/fake_clock_coordinator.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

constexpr absl::Duration kWindow = absl::Seconds(5);
constexpr absl::Duration kFinishWait = absl::Seconds(60);
constexpr int kWorld = 3;

class PreemptionTest : public testing::FakeClockCoordinatorTest {
 protected:
  using Answer = absl::StatusOr<v1::PreemptResponse>;

  CoordinatorOptions Options() const override {
    CoordinatorOptions o = FakeClockCoordinatorTest::Options();
    o.preemption.window = kWindow;
    o.preemption.finish_wait = kFinishWait;
    return o;
  }

  // Generation 1 of a 3-rank job with a 10-minute rendezvous timeout and
  // no restart to spend: a preemption that counted one would fail it.
  void SetUp() override {
    FakeClockCoordinatorTest::SetUp();
    v1::JobSpec spec = testing::MinimalJobSpec("pre", 2, kWorld);
    spec.set_max_restarts(0);
    spec.set_rendezvous_timeout_ms(600'000);
    job_ = Submit(spec);
    for (int i = 0; i < kWorld; ++i) w_.push_back(AddWorker(job_));
    for (const std::string& id : w_) Join(job_, id, /*keeps_state=*/true);
    ASSERT_TRUE(joined_[w_[0]].ok()) << joined_[w_[0]].status();
    ASSERT_EQ(Job(job_).state(), v1::JOB_STATE_RUNNING);
    for (int rank = 0; rank < kWorld; ++rank) {
      ASSERT_EQ(joined_[w_[rank]]->rank(), rank);
    }
  }

  // Rank `rank` stopped after `step`; its answer lands in answers_[rank].
  void Preempt(int rank, int64_t step, int64_t gen = 1) {
    answers_.erase(rank);
    v1::PreemptRequest r;
    r.set_job_id(job_);
    r.set_generation(gen);
    r.set_rank(rank);
    r.set_step(step);
    coordinator_->preempt_calls().Preempt(
        workers_caller_, r, [this, rank](Answer a) { answers_[rank] = a; });
  }
  absl::Status Finish(int rank, int64_t step) {
    v1::PreemptRequest r;
    r.set_job_id(job_);
    r.set_generation(1);
    r.set_rank(rank);
    r.set_step(step);
    r.set_finished(true);
    absl::Status out = absl::UnknownError("not answered");
    coordinator_->preempt_calls().Preempt(
        workers_caller_, r, [&out](Answer a) { out = a.status(); });
    return out;
  }
  absl::Status Leave(int rank) {
    v1::LeaveRequest r;
    r.set_worker_id(w_[rank]);
    r.set_reason("preempted");
    return coordinator_->worker_calls().Leave(workers_caller_, r);
  }

  std::string job_;
  std::vector<std::string> w_;
  std::map<int, Answer> answers_;
};

TEST_F(PreemptionTest, EveryMemberInTheWindowIsWholeAndThePreemptedJobWaits) {
  Preempt(1, 7);
  Preempt(2, 7);
  EXPECT_TRUE(answers_.empty()) << "the verdict waits for the window";
  Preempt(0, 7);
  ASSERT_EQ(answers_.size(), 3u);
  for (int rank = 0; rank < kWorld; ++rank) {
    ASSERT_TRUE(answers_[rank].ok()) << answers_[rank].status();
    EXPECT_EQ(answers_[rank]->verdict(), v1::PREEMPT_VERDICT_WHOLE);
    EXPECT_TRUE(answers_[rank]->steps_agree());
    EXPECT_EQ(answers_[rank]->save_checkpoint(), rank == 0) << rank;
  }
  // The others leave before rank 0 committed: no failure, no restart.
  ASSERT_TRUE(Leave(1).ok());
  ASSERT_TRUE(Leave(2).ok());
  EXPECT_EQ(Job(job_).state(), v1::JOB_STATE_RUNNING);
  ASSERT_TRUE(Finish(0, 7).ok());
  v1::Job job = Job(job_);
  EXPECT_EQ(job.state(), v1::JOB_STATE_PREEMPTED);
  EXPECT_EQ(job.restarts(), 0);
  EXPECT_TRUE(absl::StrContains(job.message(), "checkpoint at step 7"))
      << job.message();
  ASSERT_TRUE(Leave(0).ok());
  // No rendezvous timeout while nobody comes back.
  clock_.Advance(absl::Hours(2));
  EXPECT_EQ(Job(job_).state(), v1::JOB_STATE_PREEMPTED);
  // Restarted workers are offered the job and resume it.
  std::vector<std::string> back;
  for (int i = 0; i < kWorld; ++i) back.push_back(AddWorker(job_));
  for (const std::string& id : back) Join(job_, id);
  ASSERT_TRUE(joined_[back[0]].ok()) << joined_[back[0]].status();
  EXPECT_EQ(joined_[back[0]]->generation(), 2);
  job = Job(job_);
  EXPECT_EQ(job.state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(job.restarts(), 0);
}

TEST_F(PreemptionTest, TheWindowEndingFirstIsPartialAndTheOthersGoOn) {
  Preempt(2, 7);
  // The others hear it (heartbeat or stream), abort the step they are
  // blocked in and join again: that does not end the held generation.
  EXPECT_TRUE(Heartbeat(w_[0], job_, 1, 7).has_abort());
  Join(job_, w_[0], /*keeps_state=*/true);
  Join(job_, w_[1], /*keeps_state=*/true);
  EXPECT_EQ(Job(job_).generation(), 1);
  EXPECT_EQ(Job(job_).state(), v1::JOB_STATE_RUNNING);
  clock_.Advance(kWindow - absl::Milliseconds(1));
  EXPECT_TRUE(answers_.empty());
  clock_.Advance(absl::Milliseconds(1));
  ASSERT_TRUE(answers_[2].ok()) << answers_[2].status();
  EXPECT_EQ(answers_[2]->verdict(), v1::PREEMPT_VERDICT_PARTIAL);
  EXPECT_FALSE(answers_[2]->save_checkpoint());
  // The two that stay form generation 2 at once, without waiting for the
  // one that left; no restart is spent (the budget is 0).
  ASSERT_TRUE(joined_[w_[0]].ok()) << joined_[w_[0]].status();
  EXPECT_EQ(joined_[w_[0]]->generation(), 2);
  EXPECT_EQ(joined_[w_[0]]->world_size(), 2);
  ASSERT_TRUE(Leave(2).ok());
  v1::Job job = Job(job_);
  EXPECT_EQ(job.state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(job.generation(), 2);
  EXPECT_EQ(job.restarts(), 0);
}

TEST_F(PreemptionTest, AStepMismatchIsWholeWithRankZerosStateNamed) {
  Preempt(0, 7);
  Preempt(1, 7);
  Preempt(2, 6);
  for (int rank = 0; rank < kWorld; ++rank) {
    ASSERT_TRUE(answers_[rank].ok()) << answers_[rank].status();
    EXPECT_EQ(answers_[rank]->verdict(), v1::PREEMPT_VERDICT_WHOLE);
    EXPECT_FALSE(answers_[rank]->steps_agree());
  }
  EXPECT_TRUE(answers_[0]->save_checkpoint());
}

TEST_F(PreemptionTest, RankZeroWithoutStateEndsItAtOnce) {
  Preempt(0, -1);
  Preempt(1, 7);
  Preempt(2, 7);
  ASSERT_TRUE(answers_[0].ok());
  EXPECT_FALSE(answers_[0]->save_checkpoint());
  EXPECT_EQ(Job(job_).state(), v1::JOB_STATE_PREEMPTED);
}

TEST_F(PreemptionTest, NoFinishWithinTheWaitStillPreemptsTheJob) {
  for (int rank = 0; rank < kWorld; ++rank) Preempt(rank, 7);
  clock_.Advance(kFinishWait);
  v1::Job job = Job(job_);
  EXPECT_EQ(job.state(), v1::JOB_STATE_PREEMPTED);
  EXPECT_EQ(job.restarts(), 0);
  EXPECT_TRUE(absl::StrContains(job.message(), "did not commit"))
      << job.message();
}

TEST_F(PreemptionTest, CallersThatMayNotPreemptAreRefused) {
  // Another worker's rank: the caller holds rank 0, not rank 1.
  v1::PreemptRequest r;
  r.set_job_id(job_);
  r.set_generation(1);
  r.set_rank(1);
  r.set_step(7);
  Answer out = absl::UnknownError("not answered");
  coordinator_->preempt_calls().Preempt(Caller::Of(w_[0], "wrong-token"), r,
                                        [&out](Answer a) { out = a; });
  EXPECT_FALSE(out.ok());
  EXPECT_NE(out.status().code(), absl::StatusCode::kUnknown);
  Preempt(kWorld, 7);  // No such rank.
  EXPECT_EQ(answers_[kWorld].status().code(),
            absl::StatusCode::kInvalidArgument);
  Preempt(0, 7, /*gen=*/2);  // Not formed.
  EXPECT_EQ(answers_[0].status().code(), absl::StatusCode::kFailedPrecondition);
  Preempt(1, -2);
  EXPECT_EQ(answers_[1].status().code(), absl::StatusCode::kInvalidArgument);
  // Finished before any verdict, or by a rank other than 0.
  EXPECT_EQ(Finish(0, 7).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Finish(1, 7).code(), absl::StatusCode::kInvalidArgument);
  // None of it opened a window.
  EXPECT_EQ(coordinator_->preemption().Size(), 0u);
  EXPECT_FALSE(coordinator_->rendezvous().IsHeld(job_));
}

TEST_F(PreemptionTest, AFinishedGenerationIsNotPreempted) {
  coordinator_->rendezvous().Advance(job_, 1, Rendezvous::Stage::kTrained);
  Preempt(0, 7);
  EXPECT_EQ(answers_[0].status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(PreemptionTest, AWithdrawnCallStillCounts) {
  v1::PreemptRequest r;
  r.set_job_id(job_);
  r.set_generation(1);
  r.set_rank(1);
  r.set_step(7);
  Answer withdrawn = absl::UnknownError("not answered");
  Canceller cancel = coordinator_->preempt_calls().Preempt(
      workers_caller_, r, [&withdrawn](Answer a) { withdrawn = a; });
  ASSERT_TRUE(cancel != nullptr);
  cancel();
  EXPECT_EQ(withdrawn.status().code(), absl::StatusCode::kCancelled);
  Preempt(0, 7);
  Preempt(2, 7);
  ASSERT_TRUE(answers_[0].ok());
  EXPECT_EQ(answers_[0]->verdict(), v1::PREEMPT_VERDICT_WHOLE);
}

TEST_F(PreemptionTest, AMemberGoneDuringTheWindowEndsNothingUntilTheVerdict) {
  Preempt(1, 7);
  ASSERT_TRUE(Leave(0).ok());  // Its lease, its stream, or a Leave.
  EXPECT_EQ(Job(job_).generation(), 1);
  EXPECT_EQ(Job(job_).state(), v1::JOB_STATE_RUNNING);
  Join(job_, w_[2], /*keeps_state=*/true);
  clock_.Advance(kWindow);
  ASSERT_TRUE(answers_[1].ok());
  EXPECT_EQ(answers_[1]->verdict(), v1::PREEMPT_VERDICT_PARTIAL);
  // Rank 2 waits alone below min_workers: a round like any other, no
  // restart spent.
  v1::Job job = Job(job_);
  EXPECT_EQ(job.state(), v1::JOB_STATE_RESTARTING);
  EXPECT_EQ(job.restarts(), 0);
}

}  // namespace
}  // namespace ringleader
