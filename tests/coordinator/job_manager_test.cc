#include "coordinator/job_manager.h"

#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/fake_clock.h"
#include "gtest/gtest.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

v1::JobSpec Spec(const std::string& name) {
  v1::JobSpec s = testing::MinimalJobSpec(name, 2, 2);
  s.set_max_restarts(1);
  s.set_checkpoint_dir("/tmp/ckpt");
  return s;
}

v1::ReportProgressRequest Final(const std::string& job, int64_t gen, int rank,
                                int correct) {
  v1::ReportProgressRequest r;
  r.set_job_id(job);
  r.set_generation(gen);
  r.set_rank(rank);
  r.set_step(10);
  r.set_total_steps(10);
  r.set_loss(0.25);
  r.set_finished(true);
  r.set_final_train_loss(0.25);
  r.set_test_correct(correct);
  r.set_test_samples(50);
  return r;
}

class JobManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = *StateStore::Open(":memory:");
    jobs_ = std::make_unique<JobManager>(store_.get(), &clock_);
    jobs_->SetFinishedHook([this](const v1::Job& j) { finished_ = j; });
  }
  FakeClock clock_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<JobManager> jobs_;
  std::optional<v1::Job> finished_;
};

TEST_F(JobManagerTest, SubmitAppliesDefaultsAndAssignsIds) {
  auto a = jobs_->Submit(Spec("mnist"));
  auto b = jobs_->Submit(Spec("mnist"));
  ASSERT_TRUE(a.ok() && b.ok()) << a.status();
  EXPECT_EQ(a->job_id(), "mnist-1");
  EXPECT_EQ(b->job_id(), "mnist-2");
  EXPECT_EQ(a->state(), v1::JOB_STATE_PENDING);
  EXPECT_GT(a->spec().progress_every_steps(), 0);  // A default was applied.
  EXPECT_EQ(jobs_->List({}).size(), 2u);
  EXPECT_EQ(jobs_->List({v1::JOB_STATE_RUNNING}).size(), 0u);
}

TEST_F(JobManagerTest, InvalidSpecNamesTheField) {
  v1::JobSpec s = Spec("x");
  s.set_batch_size(0);
  auto r = jobs_->Submit(s);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(r.status()));
  EXPECT_NE(r.status().message().find("batch_size"), std::string::npos);
}

TEST_F(JobManagerTest, LifecycleToSuccessWithCombinedAccuracy) {
  const std::string id = jobs_->Submit(Spec("life"))->job_id();
  ASSERT_TRUE(jobs_->OnJoin(id).ok());
  EXPECT_EQ(jobs_->Get(id)->state(), v1::JOB_STATE_RENDEZVOUS);
  ASSERT_TRUE(jobs_->OnGenerationFormed(id, 1, 2).ok());
  EXPECT_EQ(jobs_->Get(id)->state(), v1::JOB_STATE_RUNNING);
  // A report from an old generation is refused.
  EXPECT_TRUE(absl::IsAborted(jobs_->ReportProgress(Final(id, 0, 0, 1), "w")));
  ASSERT_TRUE(jobs_->ReportProgress(Final(id, 1, 0, 40), "w0").ok());
  EXPECT_FALSE(finished_.has_value());
  EXPECT_TRUE(jobs_->WorkerFinished(id, "w0"));
  EXPECT_FALSE(jobs_->WorkerFinished(id, "w1"));
  ASSERT_TRUE(jobs_->ReportProgress(Final(id, 1, 1, 45), "w1").ok());
  ASSERT_TRUE(finished_.has_value());
  EXPECT_EQ(finished_->state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_DOUBLE_EQ(finished_->progress().test_accuracy(), 85.0 / 100.0);
  EXPECT_TRUE(absl::IsFailedPrecondition(jobs_->Cancel(id).status()));
}

// The outline a worker's frequent calls read: the state and size, and
// whether the record names a worker as one of the job's ranks.
TEST_F(JobManagerTest, AnOutlineAndTheRanksTheRecordNames) {
  EXPECT_TRUE(absl::IsNotFound(jobs_->OutlineOf("none").status()));
  EXPECT_FALSE(jobs_->RanksName("none", "w0"));
  const std::string id = jobs_->Submit(Spec("outline"))->job_id();
  ASSERT_TRUE(jobs_->OnJoin(id).ok());
  ASSERT_TRUE(jobs_->OnGenerationFormed(id, 1, 2).ok());
  absl::StatusOr<JobManager::Outline> o = jobs_->OutlineOf(id);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->state, v1::JOB_STATE_RUNNING);
  EXPECT_EQ(o->max_workers, 2);
  EXPECT_FALSE(jobs_->RanksName(id, "w0"));
  ASSERT_TRUE(jobs_->ReportProgress(Final(id, 1, 0, 40), "w0").ok());
  EXPECT_TRUE(jobs_->RanksName(id, "w0"));
  EXPECT_FALSE(jobs_->RanksName(id, "w1"));
  ASSERT_TRUE(jobs_->ReportProgress(Final(id, 1, 1, 45), "w1").ok());
  EXPECT_EQ(jobs_->OutlineOf(id)->state, v1::JOB_STATE_SUCCEEDED);
}

v1::ReportProgressRequest Evaluated(const std::string& job, int64_t gen,
                                    int rank, int64_t epoch, int correct) {
  v1::ReportProgressRequest r;
  r.set_job_id(job);
  r.set_generation(gen);
  r.set_rank(rank);
  r.set_epoch(epoch);
  r.set_step(5 * epoch);
  r.set_loss(0.5);
  r.set_eval_epoch(epoch);
  r.set_eval_correct(correct);
  r.set_eval_samples(50);
  return r;
}

// An epoch's evaluation is recorded once every rank of the generation has
// it, pooled over their shards, stays recorded across a new generation and a
// coordinator restart, and the final result closes the list.
TEST_F(JobManagerTest, EpochEvaluationsArePooledAndKept) {
  const std::string id = jobs_->Submit(Spec("evals"))->job_id();
  ASSERT_TRUE(jobs_->OnGenerationFormed(id, 1, 2).ok());
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(jobs_->ReportProgress(Evaluated(id, 1, 0, 1, 30), "w0").ok());
  EXPECT_EQ(jobs_->Get(id)->progress().evaluations_size(), 0);
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(jobs_->ReportProgress(Evaluated(id, 1, 1, 1, 40), "w1").ok());
  ASSERT_EQ(jobs_->Get(id)->progress().evaluations_size(), 1);
  v1::EpochEvaluation first = jobs_->Get(id)->progress().evaluations(0);
  EXPECT_EQ(first.epoch(), 1);
  EXPECT_DOUBLE_EQ(first.test_accuracy(), 70.0 / 100.0);
  EXPECT_EQ(first.time_ms(), absl::ToUnixMillis(clock_.Now()));
  // Later reports repeat the same evaluation: not recorded twice.
  ASSERT_TRUE(jobs_->ReportProgress(Evaluated(id, 1, 0, 1, 30), "w0").ok());
  EXPECT_EQ(jobs_->Get(id)->progress().evaluations_size(), 1);
  // A rank fails before epoch 2's evaluation; the next generation starts
  // without any, and the recorded one survives a coordinator restart.
  ASSERT_TRUE(jobs_->ReportProgress(Evaluated(id, 1, 0, 2, 45), "w0").ok());
  ASSERT_TRUE(jobs_->OnGenerationEnded(id, 1, "worker died").ok());
  JobManager restarted(store_.get(), &clock_);
  ASSERT_TRUE(restarted.Recover().ok());
  ASSERT_EQ(restarted.Get(id)->progress().evaluations_size(), 1);
  ASSERT_TRUE(restarted.OnGenerationFormed(id, 2, 2).ok());
  ASSERT_TRUE(restarted.ReportProgress(Evaluated(id, 2, 0, 2, 44), "w0").ok());
  ASSERT_TRUE(restarted.ReportProgress(Evaluated(id, 2, 1, 2, 46), "w1").ok());
  v1::ReportProgressRequest f0 = Final(id, 2, 0, 47), f1 = Final(id, 2, 1, 48);
  f0.set_epoch(2);
  f1.set_epoch(2);
  ASSERT_TRUE(restarted.ReportProgress(f0, "w0").ok());
  ASSERT_TRUE(restarted.ReportProgress(f1, "w1").ok());
  const v1::JobProgress p = restarted.Get(id)->progress();
  ASSERT_EQ(p.evaluations_size(), 3);
  EXPECT_EQ(p.evaluations(1).epoch(), 2);
  EXPECT_DOUBLE_EQ(p.evaluations(1).test_accuracy(), 90.0 / 100.0);
  EXPECT_EQ(p.evaluations(2).epoch(), 3);
  EXPECT_DOUBLE_EQ(p.evaluations(2).test_accuracy(), p.test_accuracy());
}

void AddSum(google::protobuf::RepeatedPtrField<v1::MetricSum>* list,
            const std::string& name, double sum, int64_t count) {
  v1::MetricSum* m = list->Add();
  m->set_name(name);
  m->set_sum(sum);
  m->set_count(count);
}

// A language model's ranks report summed token losses; the job's metrics are
// pooled per token and derived from the pooled loss, per epoch and at the
// end, and survive a coordinator restart.
TEST_F(JobManagerTest, TaskMetricsArePooledPerEpochAndAtTheEnd) {
  v1::JobSpec spec = Spec("lm");
  spec.mutable_model()->set_arch(v1::MODEL_ARCH_TORCHSCRIPT);
  spec.mutable_model()->set_torchscript_path("/models/gpt.pt");
  spec.mutable_task()->set_kind(v1::TASK_KIND_LANGUAGE_MODEL);
  const std::string id = jobs_->Submit(spec)->job_id();
  ASSERT_TRUE(jobs_->OnGenerationFormed(id, 1, 2).ok());
  for (int rank = 0; rank < 2; ++rank) {
    v1::ReportProgressRequest r = Evaluated(id, 1, rank, 1, 10);
    // 1000 tokens at a mean loss of 3 and 3000 at 1: 1.5 nats per token
    // (the mean of the ranks' means would say 2).
    AddSum(r.mutable_eval_metrics(), "loss", 3000, rank == 0 ? 1000 : 3000);
    ASSERT_TRUE(jobs_->ReportProgress(r, absl::StrCat("w", rank)).ok());
  }
  const v1::JobProgress evaluated = jobs_->Get(id)->progress();
  ASSERT_EQ(evaluated.evaluations_size(), 1);
  const v1::EpochEvaluation& ev = evaluated.evaluations(0);
  ASSERT_EQ(ev.metrics_size(), 3);
  EXPECT_EQ(ev.metrics(0).name(), "loss");
  EXPECT_DOUBLE_EQ(ev.metrics(0).value(), 1.5);
  EXPECT_EQ(ev.metrics(1).name(), "perplexity");
  EXPECT_DOUBLE_EQ(ev.metrics(1).value(), std::exp(1.5));
  EXPECT_EQ(ev.metrics(2).name(), "bits_per_token");
  EXPECT_DOUBLE_EQ(ev.metrics(2).value(), 1.5 / std::log(2.0));

  v1::ReportProgressRequest f0 = Final(id, 1, 0, 20);
  f0.set_epoch(1);
  AddSum(f0.mutable_test_metrics(), "loss", 2000, 1000);
  AddSum(f0.mutable_test_metrics(), "accuracy", 400, 1000);
  ASSERT_TRUE(jobs_->ReportProgress(f0, "w0").ok());
  EXPECT_EQ(jobs_->Get(id)->progress().test_metrics_size(), 0);
  // A coordinator restart in between: rank 0's sums were persisted.
  JobManager restarted(store_.get(), &clock_);
  ASSERT_TRUE(restarted.Recover({{id, 1}}).ok());
  v1::ReportProgressRequest f1 = Final(id, 1, 1, 30);
  f1.set_epoch(1);
  AddSum(f1.mutable_test_metrics(), "loss", 0, 1000);
  AddSum(f1.mutable_test_metrics(), "accuracy", 600, 1000);
  ASSERT_TRUE(restarted.ReportProgress(f1, "w1").ok());
  const v1::Job done = *restarted.Get(id);
  EXPECT_EQ(done.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_DOUBLE_EQ(done.progress().test_accuracy(), 50.0 / 100.0);
  const v1::JobProgress& p = done.progress();
  ASSERT_EQ(p.test_metrics_size(), 4);
  EXPECT_EQ(p.test_metrics(0).name(), "loss");
  EXPECT_DOUBLE_EQ(p.test_metrics(0).value(), 1.0);
  EXPECT_EQ(p.test_metrics(1).name(), "perplexity");
  EXPECT_DOUBLE_EQ(p.test_metrics(1).value(), std::exp(1.0));
  EXPECT_EQ(p.test_metrics(2).name(), "bits_per_token");
  EXPECT_EQ(p.test_metrics(3).name(), "accuracy");
  EXPECT_DOUBLE_EQ(p.test_metrics(3).value(), 0.5);
  ASSERT_EQ(p.evaluations_size(), 2);
  EXPECT_EQ(p.evaluations(1).metrics_size(), 4);
}

TEST_F(JobManagerTest, RestartBudgetIsPerJob) {
  const std::string id = jobs_->Submit(Spec("budget"))->job_id();
  ASSERT_TRUE(jobs_->OnGenerationFormed(id, 1, 2).ok());
  ASSERT_TRUE(jobs_->OnGenerationEnded(id, 1, "worker a died").ok());
  EXPECT_EQ(jobs_->Get(id)->state(), v1::JOB_STATE_RESTARTING);
  ASSERT_TRUE(jobs_->OnGenerationFormed(id, 2, 2).ok());
  ASSERT_TRUE(jobs_->OnGenerationEnded(id, 2, "worker b died").ok());
  auto job = jobs_->Get(id);
  EXPECT_EQ(job->state(), v1::JOB_STATE_FAILED);
  EXPECT_NE(job->message().find("worker b died"), std::string::npos);
  EXPECT_TRUE(finished_.has_value());
}

TEST_F(JobManagerTest, BadProgressValuesAreRejected) {
  const std::string id = jobs_->Submit(Spec("p"))->job_id();
  ASSERT_TRUE(jobs_->OnGenerationFormed(id, 1, 2).ok());
  auto r = Final(id, 1, 0, 10);
  r.set_loss(std::nan(""));
  EXPECT_TRUE(absl::IsInvalidArgument(jobs_->ReportProgress(r, "w")));
  r = Final(id, 1, 0, 60);  // More correct than samples.
  EXPECT_TRUE(absl::IsInvalidArgument(jobs_->ReportProgress(r, "w")));
  v1::ReportProgressRequest e = Evaluated("x", 1, 0, 1, 60);  // Of 50.
  EXPECT_TRUE(absl::IsInvalidArgument(jobs_->ReportProgress(e, "w")));
  // Metric sums are checked before anything is recorded.
  r = Final(id, 1, 0, 10);
  AddSum(r.mutable_test_metrics(), "loss", std::nan(""), 50);
  absl::Status s = jobs_->ReportProgress(r, "w");
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_EQ(s.message(),
            "progress report: test_metrics[0] (\"loss\") sum must be finite "
            "(got nan)");
  e = Evaluated(id, 1, 0, 1, 10);
  AddSum(e.mutable_eval_metrics(), "Loss", 1, 50);
  s = jobs_->ReportProgress(e, "w");
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_NE(s.message().find("eval_metrics[0].name"), std::string::npos) << s;
  EXPECT_EQ(jobs_->Get(id)->progress().ranks_size(), 0);
}

TEST_F(JobManagerTest, CheckpointsPersistAndResumeFindsThem) {
  const std::string id = jobs_->Submit(Spec("ck"))->job_id();
  ASSERT_TRUE(jobs_->OnGenerationFormed(id, 1, 2).ok());
  v1::CheckpointRecord c;
  c.set_step(5);
  c.set_epoch_sample_offset(100);
  c.set_path("/tmp/ckpt/5.pt");
  auto committed = jobs_->CommitCheckpoint(id, c);
  ASSERT_TRUE(committed.ok());
  EXPECT_GT(committed->checkpoint_id(), 0);
  c.set_step(3);
  EXPECT_TRUE(
      absl::IsFailedPrecondition(jobs_->CommitCheckpoint(id, c).status()));
  ASSERT_TRUE(jobs_->Cancel(id).ok());
  v1::JobSpec again = Spec("ck");
  again.set_resume(true);
  auto resumed = jobs_->Submit(again);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->last_checkpoint().step(), 5);
  v1::JobSpec nothing = Spec("never-ran");
  nothing.set_resume(true);
  EXPECT_TRUE(absl::IsFailedPrecondition(jobs_->Submit(nothing).status()));
}

TEST_F(JobManagerTest, RecoverBringsLiveJobsBackAsRestarting) {
  const std::string id = jobs_->Submit(Spec("rec"))->job_id();
  ASSERT_TRUE(jobs_->OnGenerationFormed(id, 3, 2).ok());
  const std::string done = jobs_->Submit(Spec("done"))->job_id();
  ASSERT_TRUE(jobs_->Cancel(done).ok());
  JobManager restarted(store_.get(), &clock_);
  auto live = restarted.Recover();
  ASSERT_TRUE(live.ok());
  ASSERT_EQ(live->size(), 1u);
  EXPECT_EQ((*live)[0].job_id(), id);
  EXPECT_EQ((*live)[0].state(), v1::JOB_STATE_RESTARTING);
  EXPECT_EQ((*live)[0].generation(), 3);
  EXPECT_EQ(restarted.Get(done)->state(), v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(restarted.Submit(Spec("rec"))->job_id(), "rec-3");
}

TEST_F(JobManagerTest, WatchersSeeEveryChangeWithIncreasingVersions) {
  const std::string id = jobs_->Submit(Spec("w"))->job_id();
  std::vector<std::pair<v1::JobState, uint64_t>> seen;
  auto token = jobs_->Watch(id, [&](const v1::Job& j, uint64_t v) {
    seen.push_back({j.state(), v});
  });
  ASSERT_TRUE(token.ok());
  ASSERT_TRUE(jobs_->OnGenerationFormed(id, 1, 2).ok());
  ASSERT_TRUE(jobs_->Cancel(id).ok());
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].first, v1::JOB_STATE_PENDING);
  EXPECT_EQ(seen[2].first, v1::JOB_STATE_CANCELLED);
  EXPECT_LT(seen[0].second, seen[1].second);
  EXPECT_LT(seen[1].second, seen[2].second);
  jobs_->Unwatch(id, *token);
  EXPECT_TRUE(absl::IsNotFound(jobs_->Watch("nope", nullptr).status()));
}

TEST_F(JobManagerTest, AResizeRestartsWithoutSpendingTheBudget) {
  v1::JobSpec spec = Spec("grow");
  spec.set_max_workers(3);
  spec.set_max_restarts(0);
  const std::string id = jobs_->Submit(spec)->job_id();
  ASSERT_TRUE(jobs_->OnGenerationFormed(id, 1, 2).ok());
  ASSERT_TRUE(
      jobs_->OnGenerationResized(id, 1, "scale-up: 1 worker(s) waiting").ok());
  auto job = jobs_->Get(id);
  EXPECT_EQ(job->state(), v1::JOB_STATE_RESTARTING);
  EXPECT_EQ(job->restarts(), 0);
  EXPECT_NE(job->message().find("generation 1 resized: scale-up"),
            std::string::npos)
      << job->message();
  ASSERT_TRUE(jobs_->OnGenerationFormed(id, 2, 3).ok());
  EXPECT_EQ(jobs_->Get(id)->world_size(), 3);
  // A failure is what the budget counts: the first one spends it.
  ASSERT_TRUE(jobs_->OnGenerationEnded(id, 2, "worker c died").ok());
  job = jobs_->Get(id);
  EXPECT_EQ(job->state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(job->restarts(), 1);
  EXPECT_NE(job->message().find("restart budget of 0 spent"),
            std::string::npos);
  // Nothing more happens to a finished job.
  EXPECT_TRUE(jobs_->OnGenerationResized(id, 2, "late").ok());
  EXPECT_EQ(jobs_->Get(id)->state(), v1::JOB_STATE_FAILED);
}

// The rendezvous runs its hooks outside its lock, so they arrive in any
// order (issue 17, point 9): each applies by its generation number.
TEST_F(JobManagerTest, AnEndThatArrivesAfterTheNextFormationChangesNoState) {
  v1::JobSpec spec = Spec("late-end");
  spec.set_max_restarts(3);
  const std::string id = jobs_->Submit(spec)->job_id();
  ASSERT_TRUE(jobs_->OnGenerationFormed(id, 2, 2).ok());
  ASSERT_TRUE(jobs_->OnGenerationFormed(id, 3, 2).ok());
  ASSERT_TRUE(jobs_->OnGenerationEnded(id, 2, "worker a rejoined").ok());
  ASSERT_TRUE(jobs_->OnGenerationResized(id, 2, "scale-up").ok());
  auto job = jobs_->Get(id);
  EXPECT_EQ(job->state(), v1::JOB_STATE_RUNNING) << job->message();
  EXPECT_EQ(job->generation(), 3);
  EXPECT_EQ(job->restarts(), 1);  // The failure still counts.
  EXPECT_TRUE(jobs_->ReportProgress(Final(id, 3, 0, 40), "w0").ok());
}

TEST_F(JobManagerTest, AFormationThatArrivesLateIsIgnored) {
  v1::JobSpec spec = Spec("late-formed");
  spec.set_max_restarts(3);
  const std::string id = jobs_->Submit(spec)->job_id();
  ASSERT_TRUE(jobs_->OnGenerationFormed(id, 1, 2).ok());
  // Generation 2 formed and ended before its formed hook ran.
  ASSERT_TRUE(jobs_->OnGenerationEnded(id, 2, "worker b died").ok());
  ASSERT_TRUE(jobs_->OnGenerationFormed(id, 2, 2).ok());
  EXPECT_EQ(jobs_->Get(id)->state(), v1::JOB_STATE_RESTARTING);
  ASSERT_TRUE(jobs_->OnGenerationFormed(id, 4, 2).ok());
  // Generation 3 formed (and ended) before 4; its news is old now.
  ASSERT_TRUE(jobs_->OnGenerationFormed(id, 3, 2).ok());
  auto job = jobs_->Get(id);
  EXPECT_EQ(job->state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(job->generation(), 4);
  EXPECT_TRUE(absl::IsAborted(jobs_->ReportProgress(Final(id, 3, 0, 1), "w")));
  EXPECT_TRUE(jobs_->ReportProgress(Final(id, 4, 0, 1), "w").ok());
}

}  // namespace
}  // namespace ringleader
