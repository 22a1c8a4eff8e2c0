// The calls workers queue and send again through a coordinator outage
// (worker/train/commit_queue.h, progress_reporter.h) are idempotent: a
// commit or final report whose answer was lost gets the first answer when it
// comes again, and the facts the queued calls carry (the training split's
// size) tighten the range checks as GetShard's did.
#include <memory>
#include <string>
#include <vector>

#include "common/fake_clock.h"
#include "coordinator/coordinator.h"
#include "coordinator/report_checks.h"
#include "coordinator/state_store.h"
#include "gtest/gtest.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

class QueuedCallsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = *StateStore::Open(":memory:");
    coord_ = std::make_unique<Coordinator>(CoordinatorOptions(), store_.get(),
                                           &clock_, &clock_);
    ASSERT_TRUE(coord_->Start().ok());
    v1::SubmitJobRequest sub;
    // 100 samples in batches of 10, 3 epochs.
    *sub.mutable_spec() = testing::MinimalJobSpec("queued", 2, 2);
    sub.mutable_spec()->set_epochs(3);
    sub.mutable_spec()->set_checkpoint_dir("/ckpt");
    absl::StatusOr<v1::SubmitJobResponse> job =
        coord_->user_calls().SubmitJob(sub);
    ASSERT_TRUE(job.ok()) << job.status();
    job_ = job->job_id();
    for (int pid : {11, 12}) {
      v1::RegisterRequest r;
      r.set_hostname("host");
      r.set_device("cpu");
      r.set_pid(pid);
      r.set_address("127.0.0.1");
      absl::StatusOr<v1::RegisterResponse> reg =
          coord_->worker_calls().Register(Caller(), r);
      ASSERT_TRUE(reg.ok()) << reg.status();
      callers_.push_back(Caller::Of(reg->worker_id(), reg->worker_token()));
      ids_.push_back(reg->worker_id());
      v1::HeartbeatRequest hb;
      hb.set_worker_id(reg->worker_id());
      absl::StatusOr<v1::HeartbeatResponse> beat =
          coord_->worker_calls().Heartbeat(callers_.back(), hb);
      ASSERT_TRUE(beat.ok() && beat->has_assignment());
    }
    holder_.assign(2, nullptr);
    for (int i = 0; i < 2; ++i) {
      v1::JoinRendezvousRequest j;
      j.set_job_id(job_);
      j.set_worker_id(ids_[i]);
      coord_->join_calls().JoinRendezvous(
          callers_[i], j,
          [this, i](absl::StatusOr<v1::JoinRendezvousResponse> g) {
            ASSERT_TRUE(g.ok()) << g.status();
            holder_[g->rank()] = &callers_[i];
          });
    }
    ASSERT_NE(holder_[0], nullptr);
    ASSERT_NE(holder_[1], nullptr);
  }

  v1::CommitCheckpointRequest Commit(int64_t step) const {
    v1::CommitCheckpointRequest c;
    c.set_job_id(job_);
    c.set_generation(1);
    c.set_rank(0);
    c.set_epoch(0);
    c.set_step(step);
    c.set_path("/ckpt/queued-step" + std::to_string(step) + ".ckpt");
    return c;
  }

  v1::ReportProgressRequest Report(int32_t rank, int64_t step,
                                   bool finished = false) const {
    v1::ReportProgressRequest r;
    r.set_job_id(job_);
    r.set_generation(1);
    r.set_rank(rank);
    r.set_step(step);
    r.set_finished(finished);
    return r;
  }

  v1::Job Job() {
    v1::GetJobRequest r;
    r.set_job_id(job_);
    return *coord_->user_calls().GetJob(r);
  }

  FakeClock clock_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<Coordinator> coord_;
  std::string job_;
  std::vector<std::string> ids_;
  std::vector<Caller> callers_;
  std::vector<const Caller*> holder_;  // By rank.
};

TEST_F(QueuedCallsTest, ACommitSentAgainIsRecordedOnce) {
  absl::StatusOr<v1::CommitCheckpointResponse> first =
      coord_->training_calls().CommitCheckpoint(*holder_[0], Commit(10));
  ASSERT_TRUE(first.ok()) << first.status();
  // Its answer was lost: the queue sends it again, in the same generation.
  absl::StatusOr<v1::CommitCheckpointResponse> again =
      coord_->training_calls().CommitCheckpoint(*holder_[0], Commit(10));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->checkpoint_id(), first->checkpoint_id());
  absl::StatusOr<v1::CommitCheckpointResponse> next =
      coord_->training_calls().CommitCheckpoint(*holder_[0], Commit(20));
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(Job().last_checkpoint().checkpoint_id(), next->checkpoint_id());
  // The history holds each checkpoint once.
  absl::StatusOr<std::vector<v1::CheckpointRecord>> history =
      store_->RecentCheckpoints(job_, "", next->checkpoint_id(), 10);
  ASSERT_TRUE(history.ok()) << history.status();
  ASSERT_EQ(history->size(), 2u);
  EXPECT_EQ((*history)[0].step(), 20);
  EXPECT_EQ((*history)[1].step(), 10);
  // A queue delivers in order, so only the latest commit comes again: an
  // older one is still refused.
  EXPECT_TRUE(
      absl::IsFailedPrecondition(coord_->training_calls()
                                     .CommitCheckpoint(*holder_[0], Commit(10))
                                     .status()));
}

TEST_F(QueuedCallsTest, AFinalReportSentAgainAfterTheJobSucceededIsOk) {
  ASSERT_TRUE(coord_->training_calls()
                  .ReportProgress(*holder_[0], Report(0, 30, true))
                  .ok());
  ASSERT_TRUE(coord_->training_calls()
                  .ReportProgress(*holder_[1], Report(1, 30, true))
                  .ok());
  ASSERT_EQ(Job().state(), v1::JOB_STATE_SUCCEEDED);
  // Rank 0's answer was lost: its report comes again and gets the first
  // answer, not "job is SUCCEEDED" (which would read as a failure).
  EXPECT_TRUE(coord_->training_calls()
                  .ReportProgress(*holder_[0], Report(0, 30, true))
                  .ok());
  EXPECT_EQ(Job().state(), v1::JOB_STATE_SUCCEEDED);
  // Only its sender's: another worker naming rank 0, and a report that is
  // not final, still find the job over.
  EXPECT_TRUE(
      absl::IsFailedPrecondition(coord_->training_calls().ReportProgress(
          *holder_[1], Report(0, 30, true))));
  EXPECT_TRUE(
      absl::IsFailedPrecondition(coord_->training_calls().ReportProgress(
          *holder_[0], Report(0, 30, false))));
  v1::ReportProgressRequest other_generation = Report(0, 30, true);
  other_generation.set_generation(2);
  EXPECT_FALSE(coord_->training_calls()
                   .ReportProgress(*holder_[0], other_generation)
                   .ok());
}

TEST_F(QueuedCallsTest, TheTrainSizeAReportCarriesBoundsTheSteps) {
  // 100 samples in batches of 10 over 3 epochs: at most
  // (10 + 1 + 1) * 3 = 36 steps once the size is known.
  v1::JobSpec spec = Job().spec();
  ASSERT_EQ(MaxJobSteps(spec, 100, 1), 36);
  // Not known yet: only the loose bound.
  EXPECT_TRUE(
      coord_->training_calls().ReportProgress(*holder_[1], Report(1, 37)).ok());
  v1::ReportProgressRequest sized = Report(0, 5);
  sized.set_train_size(100);
  ASSERT_TRUE(coord_->training_calls().ReportProgress(*holder_[0], sized).ok());
  absl::Status past =
      coord_->training_calls().ReportProgress(*holder_[1], Report(1, 37));
  EXPECT_TRUE(absl::IsInvalidArgument(past)) << past;
  v1::CommitCheckpointRequest beyond = Commit(10);
  beyond.set_epoch_sample_offset(101);
  EXPECT_TRUE(absl::IsInvalidArgument(
      coord_->training_calls().CommitCheckpoint(*holder_[0], beyond).status()));
  // Another size than the generation's first is refused, naming both.
  v1::ReportProgressRequest other = Report(1, 6);
  other.set_train_size(99);
  absl::Status s = coord_->training_calls().ReportProgress(*holder_[1], other);
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_EQ(s.message(),
            "rank 1 sees 99 samples but another rank saw 100: every worker "
            "needs the same dataset");
  other.set_train_size(-1);
  EXPECT_TRUE(absl::IsInvalidArgument(
      coord_->training_calls().ReportProgress(*holder_[1], other)));
}

}  // namespace
}  // namespace ringleader
