// The trainer in process, against fakes of what it talks to: a coordinator
// link that records what it is sent, a clock that moves one second per
// step, and a communicator of one rank that can lose an all-reduce. Short
// jobs of an MLP on synthetic data: the job's end, its progress reports,
// rank 0's checkpoints, and a step that fails half way, kept and resumed.
#include "worker/train/trainer.h"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/fake_clock.h"
#include "gtest/gtest.h"
#include "worker/data/job_data.h"
#include "worker/train/job_error.h"
#include "worker/train/preempted.h"

namespace ringleader {
namespace {

constexpr int64_t kTrain = 64, kTest = 32, kBatch = 8;
constexpr int64_t kStepsPerEpoch = kTrain / kBatch;

// The coordinator as the trainer sees it: every report and commit, in
// order, answered OK; every step the heartbeats would carry. Each step
// moves the clock by one second. With report_every, a coordinator quick
// enough that no report waits behind another (so none is replaced): the
// step after a report is counted once the report arrived.
class FakeLink final : public CoordinatorLink {
 public:
  explicit FakeLink(FakeClock* clock) : clock_(clock) {}

  void set_report_every(int64_t steps) { report_every_ = steps; }

  absl::Status ReportProgress(const v1::ReportProgressRequest& report,
                              const std::atomic<bool>*) override {
    absl::MutexLock lock(&mu_);
    reports_.push_back(report);
    return absl::OkStatus();
  }
  absl::StatusOr<v1::CommitCheckpointResponse> CommitCheckpoint(
      const v1::CommitCheckpointRequest& commit,
      const std::atomic<bool>*) override {
    absl::MutexLock lock(&mu_);
    commits_.push_back(commit);
    v1::CommitCheckpointResponse answer;
    answer.set_checkpoint_id(static_cast<int64_t>(commits_.size()));
    return answer;
  }
  absl::StatusOr<v1::PreemptResponse> Preempt(
      const v1::PreemptRequest& r) override {
    absl::MutexLock lock(&mu_);
    preempts_.push_back(r);
    v1::PreemptResponse answer;
    answer.set_verdict(verdict_);
    answer.set_save_checkpoint(verdict_ == v1::PREEMPT_VERDICT_WHOLE &&
                               r.rank() == 0 && r.step() >= 0);
    answer.set_steps_agree(true);
    return answer;
  }
  // The worker's signal comes with step `step` (its boundary), and the
  // coordinator will answer `verdict`.
  void PreemptAt(int64_t step, std::atomic<bool>* flag,
                 v1::PreemptVerdict verdict) {
    absl::MutexLock lock(&mu_);
    preempt_at_ = step;
    preempt_flag_ = flag;
    verdict_ = verdict;
  }
  std::vector<v1::PreemptRequest> preempts() {
    absl::MutexLock lock(&mu_);
    return preempts_;
  }
  void SetStep(int64_t step) override {
    {
      absl::MutexLock lock(&mu_);
      if (preempt_flag_ != nullptr && step == preempt_at_) {
        preempt_flag_->store(true);
      }
    }
    clock_->Advance(absl::Seconds(1));
    absl::MutexLock lock(&mu_);
    const int64_t reported = step - 1;
    if (report_every_ > 0 && reported > 0 && reported % report_every_ == 0) {
      auto arrived = [this, reported]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        for (const v1::ReportProgressRequest& r : reports_) {
          if (r.step() == reported) return true;
        }
        return false;
      };
      mu_.AwaitWithTimeout(absl::Condition(&arrived), absl::Seconds(30));
    }
    steps_.push_back(step);
  }

  std::vector<v1::ReportProgressRequest> reports() {
    absl::MutexLock lock(&mu_);
    return reports_;
  }
  std::vector<v1::CommitCheckpointRequest> commits() {
    absl::MutexLock lock(&mu_);
    return commits_;
  }
  std::vector<int64_t> steps() {
    absl::MutexLock lock(&mu_);
    return steps_;
  }

 private:
  FakeClock* const clock_;
  int64_t report_every_ = 0;
  absl::Mutex mu_;
  std::vector<v1::ReportProgressRequest> reports_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::CommitCheckpointRequest> commits_ ABSL_GUARDED_BY(mu_);
  std::vector<int64_t> steps_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::PreemptRequest> preempts_ ABSL_GUARDED_BY(mu_);
  int64_t preempt_at_ ABSL_GUARDED_BY(mu_) = 0;
  std::atomic<bool>* preempt_flag_ ABSL_GUARDED_BY(mu_) = nullptr;
  v1::PreemptVerdict verdict_ ABSL_GUARDED_BY(mu_) =
      v1::PREEMPT_VERDICT_PARTIAL;
};

// A world of one rank: every collective completes at once with this rank's
// data (the sum over one rank), except the gradient all-reduce number
// `lose_gradient` (1-based; 0: none), which fails as a dead peer's would.
class SoloCommunicator final : public Communicator {
 public:
  explicit SoloCommunicator(int lose_gradient = 0)
      : lose_gradient_(lose_gradient) {}
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  std::unique_ptr<Work> AllReduceSumAsync(void*, size_t,
                                          DataType type) override {
    const bool lose =
        type == DataType::kFloat32 && ++gradients_ == lose_gradient_;
    return std::make_unique<DoneWork>(lose ? absl::UnavailableError("peer gone")
                                           : absl::OkStatus());
  }
  absl::Status Broadcast(void*, size_t, int) override {
    return absl::OkStatus();
  }
  void Abort() override {}

 private:
  struct DoneWork final : Work {
    explicit DoneWork(absl::Status s) : status(std::move(s)) {}
    absl::Status Wait() override { return status; }
    absl::Status status;
  };
  const int lose_gradient_;
  int gradients_ = 0;
};

std::string TestDir(const std::string& name) {
  const char* t = std::getenv("TEST_TMPDIR");
  const std::string dir =
      std::string(t != nullptr ? t : "/tmp") + "/trainer_test_" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Two epochs of an MLP on synthetic data, one rank: 16 optimizer steps.
v1::JoinRendezvousResponse Generation(int64_t generation = 1) {
  v1::JoinRendezvousResponse gen;
  gen.set_generation(generation);
  gen.set_rank(0);
  gen.set_world_size(1);
  v1::JobSpec& s = *gen.mutable_spec();
  s.set_name("mlp");
  s.mutable_model()->set_arch(v1::MODEL_ARCH_MLP);
  s.mutable_model()->add_hidden_sizes(16);
  s.mutable_dataset()->set_format(v1::DATASET_FORMAT_SYNTHETIC);
  s.mutable_dataset()->set_synthetic_train_size(kTrain);
  s.mutable_dataset()->set_synthetic_test_size(kTest);
  s.mutable_dataset()->set_shuffle(true);
  s.mutable_optimizer()->set_kind(v1::OPTIMIZER_KIND_SGD);
  s.mutable_optimizer()->set_learning_rate(0.05);
  s.set_seed(7);
  s.set_epochs(2);
  s.set_batch_size(kBatch);
  s.set_progress_every_steps(1000);  // Only the final report.
  return gen;
}

class TrainerTest : public ::testing::Test {
 protected:
  // Runs generation `gen` to its end over `comm`.
  absl::Status Train(const v1::JoinRendezvousResponse& gen,
                     Communicator* comm) {
    absl::StatusOr<JobData> data =
        LoadJobData(gen.spec().dataset(), gen.spec().seed());
    EXPECT_TRUE(data.ok()) << data.status();
    if (!data.ok()) return data.status();
    TrainerEnv env;
    env.link = &link_;
    env.send_timeout = absl::Seconds(30);
    env.clock = &clock_;
    env.comm = comm;
    env.data = &*data;
    env.aborted = &aborted_;
    env.preempt = &preempt_;
    env.kept = &kept_;
    return Trainer(env, "job-1", gen).Run();
  }

  FakeClock clock_;
  FakeLink link_{&clock_};
  std::atomic<bool> aborted_{false};
  std::atomic<bool> preempt_{false};
  KeptState kept_;
};

// The worker is signalled during step 3 and the whole generation leaves
// (WHOLE): the rank stops at that step's boundary, says so, and, as rank 0,
// commits a checkpoint of it at its exact sample position before it says
// it is finished (issue 34).
TEST_F(TrainerTest, APreemptionStopsAtTheBoundaryAndRankZeroSavesThatStep) {
  v1::JoinRendezvousResponse gen = Generation();
  const std::string dir = TestDir("preempt");
  gen.mutable_spec()->set_checkpoint_dir(dir);
  link_.PreemptAt(3, &preempt_, v1::PREEMPT_VERDICT_WHOLE);
  SoloCommunicator comm;
  const absl::Status s = Train(gen, &comm);
  EXPECT_TRUE(IsPreempted(s)) << s;
  EXPECT_EQ(link_.steps(), (std::vector<int64_t>{1, 2, 3}));
  const std::vector<v1::PreemptRequest> calls = link_.preempts();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].step(), 3);
  EXPECT_FALSE(calls[0].finished());
  EXPECT_EQ(calls[1].step(), 3);
  EXPECT_TRUE(calls[1].finished());
  const std::vector<v1::CommitCheckpointRequest> commits = link_.commits();
  ASSERT_EQ(commits.size(), 1u);
  EXPECT_EQ(commits[0].step(), 3);
  EXPECT_EQ(commits[0].epoch(), 0);
  EXPECT_EQ(commits[0].epoch_sample_offset(), 3 * kBatch);
  EXPECT_TRUE(std::filesystem::exists(dir + "/mlp-step3.ckpt"));
}

// Only this rank leaves (PARTIAL): nothing is saved, and the others go on.
TEST_F(TrainerTest, APartialPreemptionSavesNothing) {
  v1::JoinRendezvousResponse gen = Generation();
  gen.mutable_spec()->set_checkpoint_dir(TestDir("preempt_partial"));
  link_.PreemptAt(5, &preempt_, v1::PREEMPT_VERDICT_PARTIAL);
  SoloCommunicator comm;
  const absl::Status s = Train(gen, &comm);
  EXPECT_TRUE(IsPreempted(s)) << s;
  ASSERT_EQ(link_.preempts().size(), 1u);
  EXPECT_EQ(link_.preempts()[0].step(), 5);
  EXPECT_TRUE(link_.commits().empty());
}

// A signal at an epoch's last step lets that epoch end (its checkpoint and
// evaluation) first: the rank stops after the next step.
TEST_F(TrainerTest, APreemptionAtAnEpochsEndStopsAfterTheNextStep) {
  v1::JoinRendezvousResponse gen = Generation();
  link_.PreemptAt(kStepsPerEpoch, &preempt_, v1::PREEMPT_VERDICT_PARTIAL);
  SoloCommunicator comm;
  EXPECT_TRUE(IsPreempted(Train(gen, &comm)));
  ASSERT_EQ(link_.preempts().size(), 1u);
  EXPECT_EQ(link_.preempts()[0].step(), kStepsPerEpoch + 1);
}

TEST_F(TrainerTest, AShortJobTrainsEveryStepAndExports) {
  v1::JoinRendezvousResponse gen = Generation();
  const std::string dir = TestDir("short");
  gen.mutable_spec()->mutable_export_()->set_safetensors_path(
      dir + "/model.safetensors");
  gen.mutable_spec()->set_timeline_dir(dir + "/timeline");
  SoloCommunicator comm;
  ASSERT_TRUE(Train(gen, &comm).ok());
  std::vector<int64_t> want;
  for (int64_t s = 1; s <= 2 * kStepsPerEpoch; ++s) want.push_back(s);
  EXPECT_EQ(link_.steps(), want);
  const std::vector<v1::ReportProgressRequest> reports = link_.reports();
  ASSERT_EQ(reports.size(), 1u);
  const v1::ReportProgressRequest& last = reports.back();
  EXPECT_TRUE(last.finished());
  EXPECT_EQ(last.step(), 2 * kStepsPerEpoch);
  EXPECT_EQ(last.total_steps(), 2 * kStepsPerEpoch);
  EXPECT_TRUE(last.fatal_error().empty());
  EXPECT_GT(last.test_metrics_size(), 0);
  EXPECT_TRUE(link_.commits().empty());  // No checkpoint_dir.
  EXPECT_TRUE(std::filesystem::exists(dir + "/model.safetensors"));
  EXPECT_TRUE(
      std::filesystem::exists(dir + "/timeline/job-1-rank0.trace.json"));
  EXPECT_FALSE(kept_.HoldsJob("job-1"));  // Nothing kept: it finished.
}

// A report every fourth step, each with its window's loss, pace and the
// gradient norm measured on the step it reports, and each epoch's
// evaluation.
TEST_F(TrainerTest, ReportsProgressOnItsSchedule) {
  v1::JoinRendezvousResponse gen = Generation();
  gen.mutable_spec()->set_progress_every_steps(4);
  gen.mutable_spec()->set_evaluate_every_epoch(true);
  link_.set_report_every(4);
  SoloCommunicator comm;
  ASSERT_TRUE(Train(gen, &comm).ok());
  const std::vector<v1::ReportProgressRequest> reports = link_.reports();
  std::vector<int64_t> steps;
  for (const v1::ReportProgressRequest& r : reports) steps.push_back(r.step());
  // The first epoch's evaluation after step 8; the last epoch's is the
  // final report's.
  EXPECT_EQ(steps, (std::vector<int64_t>{4, 8, 8, 12, 16, 16}));
  for (size_t i : {0, 1, 3, 4}) {
    const v1::ReportProgressRequest& r = reports[i];
    EXPECT_EQ(r.job_id(), "job-1");
    EXPECT_GT(r.loss(), 0) << r.step();
    EXPECT_GT(r.grad_norm(), 0) << r.step();
    // Four steps of one batch each, one second apart on the fake clock.
    EXPECT_DOUBLE_EQ(r.samples_per_sec(), kBatch) << r.step();
  }
  EXPECT_EQ(reports[2].eval_epoch(), 1);
  EXPECT_GT(reports[2].eval_metrics_size(), 0);
  EXPECT_TRUE(reports.back().finished());
}

// Rank 0 checkpoints every fourth step and at each epoch's end, in the
// background, and commits each in order with where the epoch stands.
TEST_F(TrainerTest, CheckpointsAndCommitsInOrder) {
  v1::JoinRendezvousResponse gen = Generation();
  const std::string dir = TestDir("checkpoints");
  gen.mutable_spec()->set_checkpoint_dir(dir);
  gen.mutable_spec()->set_checkpoint_every_steps(4);
  SoloCommunicator comm;
  ASSERT_TRUE(Train(gen, &comm).ok());
  const std::vector<v1::CommitCheckpointRequest> commits = link_.commits();
  ASSERT_EQ(commits.size(), 4u);
  const int64_t want[4][3] = {// step, epoch, epoch sample offset
                              {4, 0, 4 * kBatch},
                              {8, 1, 0},
                              {12, 1, 4 * kBatch},
                              {16, 2, 0}};
  for (size_t i = 0; i < commits.size(); ++i) {
    EXPECT_EQ(commits[i].step(), want[i][0]) << i;
    EXPECT_EQ(commits[i].epoch(), want[i][1]) << i;
    EXPECT_EQ(commits[i].epoch_sample_offset(), want[i][2]) << i;
    EXPECT_EQ(commits[i].train_size(), kTrain) << i;
    EXPECT_TRUE(commits[i].trained_past()) << i;  // Written in the background.
  }
  // The three newest files; older ones pruned once newer commits were
  // acknowledged.
  for (int64_t step : {8, 12, 16}) {
    EXPECT_TRUE(std::filesystem::exists(dir + "/mlp-step" +
                                        std::to_string(step) + ".ckpt"))
        << step;
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/mlp-step4.ckpt"));
}

// The third step's gradient all-reduce fails (a peer died): the generation
// ends ABORTED, not as the job's error, and the rank keeps the state after
// step 2; the next generation recovers from it and trains the rest.
TEST_F(TrainerTest, AFailureMidStepKeepsTheLastStepAndTheNextGenerationGoesOn) {
  v1::JoinRendezvousResponse gen = Generation();
  gen.mutable_spec()->mutable_ddp()->set_communicate_alone(true);
  SoloCommunicator failing(/*lose_gradient=*/3);
  const absl::Status s = Train(gen, &failing);
  EXPECT_TRUE(absl::IsAborted(s)) << s;
  EXPECT_FALSE(IsJobError(s));
  EXPECT_EQ(link_.steps(), (std::vector<int64_t>{1, 2}));
  for (const v1::ReportProgressRequest& r : link_.reports()) {
    EXPECT_TRUE(r.fatal_error().empty()) << r.fatal_error();
  }
  ASSERT_TRUE(kept_.HoldsJob("job-1"));
  EXPECT_EQ(kept_.position.epoch, 0);
  EXPECT_EQ(kept_.position.step, 2);
  EXPECT_EQ(kept_.epoch_sample_offset, 2 * kBatch);

  SoloCommunicator healthy;
  ASSERT_TRUE(Train(Generation(/*generation=*/2), &healthy).ok());
  std::vector<int64_t> want = {1, 2};
  for (int64_t step = 3; step <= 2 * kStepsPerEpoch; ++step) {
    want.push_back(step);
  }
  EXPECT_EQ(link_.steps(), want);
  EXPECT_TRUE(link_.reports().back().finished());
  EXPECT_EQ(link_.reports().back().step(), 2 * kStepsPerEpoch);
}

// A loss that is not finite is the job's own error: reported to the
// coordinator as the rank's fatal error, nothing kept.
TEST_F(TrainerTest, ANonFiniteLossIsReportedAsTheJobsError) {
  v1::JoinRendezvousResponse gen = Generation();
  gen.mutable_spec()->mutable_optimizer()->set_learning_rate(1e30);
  SoloCommunicator comm;
  const absl::Status s = Train(gen, &comm);
  ASSERT_TRUE(IsJobError(s)) << s;
  const std::vector<v1::ReportProgressRequest> reports = link_.reports();
  ASSERT_FALSE(reports.empty());
  EXPECT_EQ(reports.back().fatal_error(), s.message());
  EXPECT_FALSE(kept_.HoldsJob("job-1"));
}

}  // namespace
}  // namespace ringleader
