#include "coordinator/training_calls.h"

#include <string>
#include <tuple>
#include <vector>

#include "common/shard_plan.h"
#include "gtest/gtest.h"
#include "tests/testing/coordinator_managers.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

class TrainingCallsTest : public testing::CoordinatorManagersTest {
 protected:
  void SetUp() override {
    v1::JobSpec spec = testing::MinimalJobSpec("training", 2, 2);
    spec.set_checkpoint_dir("/ckpt");
    spec.set_epochs(2);
    job_ = Submit(spec);
    members_ = {Register(), Register()};
    gen_ = Form(job_, members_);
    ASSERT_EQ(gen_.number, 1);
  }

  void Formed(const std::string& job_id,
              const Rendezvous::Generation& gen) override {
    CoordinatorManagersTest::Formed(job_id, gen);
    facts_.Formed(job_id, gen.number);
  }

  const Caller& RankCaller(int rank) {
    return Holder(members_, gen_, rank).caller;
  }

  v1::ReportProgressRequest Report(int rank, int64_t step,
                                   bool finished = false) {
    v1::ReportProgressRequest r;
    r.set_job_id(job_);
    r.set_generation(1);
    r.set_rank(rank);
    r.set_step(step);
    r.set_total_steps(10);
    r.set_finished(finished);
    return r;
  }

  v1::CommitCheckpointRequest Commit(int rank, int64_t step) {
    v1::CommitCheckpointRequest c;
    c.set_job_id(job_);
    c.set_generation(1);
    c.set_rank(rank);
    c.set_step(step);
    c.set_path("/ckpt/training-step" + std::to_string(step) + ".ckpt");
    return c;
  }

  using Step = std::tuple<std::string, int64_t, std::string, int64_t, int64_t>;

  CallerChecks checks_{workers_, rendezvous_, jobs_};
  GenerationFacts facts_{jobs_};
  std::vector<Step> steps_;
  TrainingCalls calls_{
      checks_,
      workers_,
      jobs_,
      rendezvous_,
      facts_,
      [this](const std::string& job_id, int64_t gen,
             const std::string& worker_id, int64_t step, int64_t total) {
        steps_.emplace_back(job_id, gen, worker_id, step, total);
      }};
  std::string job_;
  std::vector<Worker> members_;
  Rendezvous::Generation gen_;
};

TEST_F(TrainingCallsTest, GetShardAnswersTheRanksOwnPlan) {
  v1::GetShardRequest r;
  r.set_job_id(job_);
  r.set_generation(1);
  r.set_rank(1);
  r.set_epoch(1);
  r.set_dataset_size(100);
  absl::StatusOr<v1::ShardAssignment> shard = calls_.GetShard(RankCaller(1), r);
  ASSERT_TRUE(shard.ok()) << shard.status();
  ShardPlanInput in;
  in.epoch = 1;
  in.world_size = 2;
  in.rank = 1;
  in.dataset_size = 100;
  EXPECT_EQ(shard->SerializeAsString(),
            PlanShard(Job(job_).spec(), in).SerializeAsString());
  r.set_epoch(2);
  EXPECT_TRUE(absl::IsOutOfRange(calls_.GetShard(RankCaller(1), r).status()));
  r.set_epoch(0);
  r.set_rank(0);
  r.set_dataset_size(99);
  EXPECT_TRUE(
      absl::IsFailedPrecondition(calls_.GetShard(RankCaller(0), r).status()));
}

TEST_F(TrainingCallsTest, AReportIsRecordedAndItsStepHeard) {
  ASSERT_TRUE(calls_.ReportProgress(RankCaller(0), Report(0, 5)).ok());
  ASSERT_EQ(steps_.size(), 1u);
  EXPECT_EQ(steps_[0], Step(job_, 1, Holder(members_, gen_, 0).id, 5, 10));
  EXPECT_EQ(Job(job_).progress().step(), 5);
  // Only the rank's holder reports for it.
  EXPECT_TRUE(absl::IsPermissionDenied(
      calls_.ReportProgress(RankCaller(1), Report(0, 6))));
}

TEST_F(TrainingCallsTest, AFinalReportFinishesTheGenerationAndIsSettled) {
  ASSERT_TRUE(calls_.ReportProgress(RankCaller(0), Report(0, 10, true)).ok());
  EXPECT_EQ(rendezvous_.StageOf(job_), Rendezvous::Stage::kFinishing);
  ASSERT_TRUE(calls_.ReportProgress(RankCaller(1), Report(1, 10, true)).ok());
  ASSERT_EQ(Job(job_).state(), v1::JOB_STATE_SUCCEEDED);
  // Sent again after its answer was lost: the same answer, from its sender.
  EXPECT_TRUE(calls_.ReportProgress(RankCaller(1), Report(1, 10, true)).ok());
  EXPECT_FALSE(calls_.ReportProgress(RankCaller(0), Report(1, 10, true)).ok());
  EXPECT_FALSE(calls_.ReportProgress(RankCaller(1), Report(1, 10)).ok());
}

TEST_F(TrainingCallsTest, AFatalErrorFailsTheJobWithIt) {
  v1::ReportProgressRequest r = Report(1, 3);
  r.set_fatal_error("cannot read the data");
  ASSERT_TRUE(calls_.ReportProgress(RankCaller(1), r).ok());
  EXPECT_EQ(Job(job_).state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(Job(job_).message(), "rank 1: cannot read the data");
}

TEST_F(TrainingCallsTest, RankZeroCommitsAndACommitSentAgainIsTheFirst) {
  EXPECT_TRUE(absl::IsPermissionDenied(
      calls_.CommitCheckpoint(RankCaller(1), Commit(1, 5)).status()));
  absl::StatusOr<v1::CommitCheckpointResponse> first =
      calls_.CommitCheckpoint(RankCaller(0), Commit(0, 5));
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<v1::CommitCheckpointResponse> again =
      calls_.CommitCheckpoint(RankCaller(0), Commit(0, 5));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->checkpoint_id(), first->checkpoint_id());
  EXPECT_FALSE(first->generation_ended());
  v1::CommitCheckpointRequest outside = Commit(0, 6);
  outside.set_path("/elsewhere/x.ckpt");
  EXPECT_TRUE(absl::IsInvalidArgument(
      calls_.CommitCheckpoint(RankCaller(0), outside).status()));
}

TEST_F(TrainingCallsTest, ACommitGrowsTheGenerationForWaitingWorkers) {
  v1::JobSpec spec = testing::MinimalJobSpec("grow", 1, 2);
  spec.set_checkpoint_dir("/ckpt");
  spec.set_epochs(2);
  job_ = Submit(spec);
  const Worker a = Register();
  gen_ = Form(job_, {a});
  members_ = {a};
  Join(job_, Register());  // Waits for the next generation.
  v1::CommitCheckpointRequest background = Commit(0, 5);
  background.set_path("/ckpt/grow-step5.ckpt");
  background.set_trained_past(true);
  absl::StatusOr<v1::CommitCheckpointResponse> out =
      calls_.CommitCheckpoint(a.caller, background);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->scale_up_pending());
  EXPECT_FALSE(out->generation_ended());
  v1::CommitCheckpointRequest here = Commit(0, 6);
  here.set_path("/ckpt/grow-step6.ckpt");
  out = calls_.CommitCheckpoint(a.caller, here);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->generation_ended());
}

}  // namespace
}  // namespace ringleader
