// JobHistory: the bounded series (thinning, a job that goes back), points
// fed from the job manager's reports, persistence across a restart on the
// flush cadence, deletion with the job, and GetJobHistory's answer.
#include "coordinator/job_history.h"

#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>

#include "common/fake_clock.h"
#include "coordinator/history_calls.h"
#include "coordinator/job_manager.h"
#include "coordinator/state_store.h"
#include "gtest/gtest.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

v1::HistoryPoint At(int64_t step) {
  v1::HistoryPoint p;
  p.set_step(step);
  p.set_loss(1.0 / static_cast<double>(step));
  return p;
}

TEST(AddHistoryPointTest, KeepsTheWholeShapeWithinTheBound) {
  v1::HistorySeries s;
  constexpr int64_t kMax = 100;
  for (int64_t step = 1; step <= 10'000; ++step) {
    AddHistoryPoint(s, At(step), kMax);
    ASSERT_LE(s.points_size(), kMax) << "after step " << step;
    ASSERT_EQ(s.points(s.points_size() - 1).step(), step);  // Latest kept.
  }
  EXPECT_EQ(s.points(0).step(), 1);  // First kept.
  EXPECT_GE(s.points_size(), kMax / 2);
  // Evenly spaced: every gap between grid points is the stride, a power of
  // two; only the latest may sit closer.
  const int64_t stride = s.stride();
  EXPECT_GT(stride, 1);
  EXPECT_EQ(stride & (stride - 1), 0);
  for (int i = 1; i + 1 < s.points_size(); ++i) {
    EXPECT_EQ(s.points(i).step() - s.points(i - 1).step(), stride) << i;
  }
  const int64_t last_gap = s.points(s.points_size() - 1).step() -
                           s.points(s.points_size() - 2).step();
  EXPECT_GE(last_gap, 1);
  EXPECT_LE(last_gap, stride);
}

TEST(AddHistoryPointTest, UnderTheBoundEveryPointIsKept) {
  v1::HistorySeries s;
  for (int64_t step = 10; step <= 100; step += 10) {
    AddHistoryPoint(s, At(step), 10);
  }
  ASSERT_EQ(s.points_size(), 10);
  EXPECT_EQ(s.stride(), 1);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(s.points(i).step(), 10 * (i + 1));
}

TEST(AddHistoryPointTest, AJobThatWentBackReplacesTheStepsItRedoes) {
  v1::HistorySeries s;
  for (int64_t step : {10, 20, 30, 40}) AddHistoryPoint(s, At(step), 100);
  // Resumed from the checkpoint at step 20: its next report is step 25.
  AddHistoryPoint(s, At(25), 100);
  ASSERT_EQ(s.points_size(), 3);
  EXPECT_EQ(s.points(0).step(), 10);
  EXPECT_EQ(s.points(1).step(), 20);
  EXPECT_EQ(s.points(2).step(), 25);
  // The same report twice (a retry) is one point.
  AddHistoryPoint(s, At(25), 100);
  EXPECT_EQ(s.points_size(), 3);
}

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = std::string(dir ? dir : "/tmp") + "/" + name;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::remove((path + suffix).c_str());
  }
  return path;
}

v1::ReportProgressRequest Window(const std::string& job, int rank, int64_t step,
                                 double loss) {
  v1::ReportProgressRequest r;
  r.set_job_id(job);
  r.set_generation(1);
  r.set_rank(rank);
  r.set_step(step);
  r.set_total_steps(1000);
  r.set_loss(loss);
  r.set_samples_per_sec(100 * (rank + 1));
  r.set_step_time_ms(10 + rank);
  r.set_grad_norm(2.0 + rank);
  r.set_learning_rate(0.05);
  r.set_data_wait_share(0.25 * rank);
  return r;
}

// A coordinator's worth of wiring: the job manager feeds the history and
// tells it about deletions, as Coordinator does.
class JobHistoryTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(TempPath("history.db")); }

  void Open(const std::string& path) {
    path_ = path;
    calls_.reset();
    history_.reset();
    jobs_.reset();
    store_ = *StateStore::Open(path_);
    jobs_ = std::make_unique<JobManager>(store_.get(), &clock_);
    history_ = std::make_unique<JobHistory>(store_.get(), &clock_, &clock_,
                                            /*max_points=*/8);
    jobs_->SetHistoryHook([this](const std::string& id, v1::HistoryPoint p) {
      history_->Record(id, std::move(p));
    });
    jobs_->SetDeletedHook(
        [this](const std::string& id) { history_->Forget(id); });
    calls_ = std::make_unique<HistoryCalls>(*jobs_, *history_);
  }

  // A restarted coordinator over the same file.
  void Restart() {
    history_->Stop();
    Open(path_);
    ASSERT_TRUE(jobs_->Recover().ok());
    ASSERT_TRUE(history_->Load().ok());
    history_->Start();
  }

  std::string RunningJob(int world) {
    const std::string id =
        jobs_->Submit(testing::MinimalJobSpec("hist", world, world))->job_id();
    EXPECT_TRUE(jobs_->OnJoin(id).ok());
    EXPECT_TRUE(jobs_->OnGenerationFormed(id, 1, world).ok());
    return id;
  }

  v1::JobHistoryResponse Get(const std::string& id) {
    v1::GetJobHistoryRequest r;
    r.set_job_id(id);
    absl::StatusOr<v1::JobHistoryResponse> h = calls_->GetJobHistory(r);
    EXPECT_TRUE(h.ok()) << h.status();
    return h.ok() ? *h : v1::JobHistoryResponse();
  }

  FakeClock clock_;
  std::string path_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<JobManager> jobs_;
  std::unique_ptr<JobHistory> history_;
  std::unique_ptr<HistoryCalls> calls_;
};

TEST_F(JobHistoryTest, OnePointPerTrainingReportOfRankZero) {
  const std::string id = RunningJob(2);
  // Rank 1 first: no point (rank 0 sets the cadence).
  ASSERT_TRUE(jobs_->ReportProgress(Window(id, 1, 10, 3.0), "w1").ok());
  EXPECT_EQ(Get(id).points_size(), 0);
  ASSERT_TRUE(jobs_->ReportProgress(Window(id, 0, 10, 1.0), "w0").ok());
  v1::JobHistoryResponse h = Get(id);
  ASSERT_EQ(h.points_size(), 1);
  const v1::HistoryPoint& p = h.points(0);
  EXPECT_EQ(p.step(), 10);
  EXPECT_DOUBLE_EQ(p.loss(), 2.0);             // Mean over the ranks.
  EXPECT_DOUBLE_EQ(p.samples_per_sec(), 300);  // Sum over the ranks.
  EXPECT_DOUBLE_EQ(p.grad_norm(), 2.5);        // Mean over the ranks.
  EXPECT_DOUBLE_EQ(p.learning_rate(), 0.05);   // Rank 0's step's.
  EXPECT_EQ(p.generation(), 1);
  EXPECT_EQ(p.time_ms(), absl::ToUnixMillis(clock_.Now()));
  ASSERT_EQ(p.ranks_size(), 2);
  EXPECT_EQ(p.ranks(1).rank(), 1);
  EXPECT_DOUBLE_EQ(p.ranks(1).loss(), 3.0);
  EXPECT_DOUBLE_EQ(p.ranks(1).step_time_ms(), 11);
  EXPECT_DOUBLE_EQ(p.ranks(1).data_wait_share(), 0.25);
  EXPECT_EQ(h.state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(h.max_points(), 8);
  EXPECT_EQ(h.stride(), 1);

  // An evaluation's report (no step time) and the final one make no point.
  v1::ReportProgressRequest eval = Window(id, 0, 10, 0.5);
  eval.set_step_time_ms(0);
  eval.set_eval_epoch(1);
  ASSERT_TRUE(jobs_->ReportProgress(eval, "w0").ok());
  EXPECT_EQ(Get(id).points_size(), 1);
}

TEST_F(JobHistoryTest, BadLearningRateOrDataWaitIsRefused) {
  const std::string id = RunningJob(1);
  v1::ReportProgressRequest r = Window(id, 0, 1, 1.0);
  r.set_learning_rate(-1);
  EXPECT_TRUE(absl::IsInvalidArgument(jobs_->ReportProgress(r, "w0")));
  r = Window(id, 0, 1, 1.0);
  r.set_data_wait_share(1.5);
  EXPECT_TRUE(absl::IsInvalidArgument(jobs_->ReportProgress(r, "w0")));
  r.set_data_wait_share(std::nan(""));
  EXPECT_TRUE(absl::IsInvalidArgument(jobs_->ReportProgress(r, "w0")));
  EXPECT_EQ(Get(id).points_size(), 0);
}

TEST_F(JobHistoryTest, SavedOnTheFlushCadenceAndKeptAcrossARestart) {
  history_->Start();
  const std::string id = RunningJob(1);
  for (int64_t step = 1; step <= 20; ++step) {
    ASSERT_TRUE(
        jobs_->ReportProgress(Window(id, 0, step, 1.0 / step), "w0").ok());
  }
  // The report path wrote nothing.
  EXPECT_TRUE(store_->LoadHistories()->empty());
  clock_.Advance(JobHistory::kFlushInterval);
  absl::StatusOr<std::vector<v1::HistorySeries>> stored =
      store_->LoadHistories();
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(stored->size(), 1u);
  const v1::JobHistoryResponse before = Get(id);
  ASSERT_LE(before.points_size(), 8);
  EXPECT_EQ(before.points(0).step(), 1);
  EXPECT_EQ(before.points(before.points_size() - 1).step(), 20);
  EXPECT_GT(before.stride(), 1);

  Restart();
  const v1::JobHistoryResponse after = Get(id);
  ASSERT_EQ(after.points_size(), before.points_size());
  for (int i = 0; i < after.points_size(); ++i) {
    EXPECT_EQ(after.points(i).step(), before.points(i).step());
    EXPECT_EQ(after.points(i).loss(), before.points(i).loss());
  }
  EXPECT_EQ(after.stride(), before.stride());
  history_->Stop();
}

TEST_F(JobHistoryTest, DeletedWithTheJob) {
  const std::string id = RunningJob(1);
  ASSERT_TRUE(jobs_->ReportProgress(Window(id, 0, 5, 1.0), "w0").ok());
  ASSERT_TRUE(jobs_->Cancel(id).ok());
  ASSERT_TRUE(history_->Flush().ok());
  ASSERT_EQ(store_->LoadHistories()->size(), 1u);
  ASSERT_TRUE(jobs_->Delete(id).ok());
  EXPECT_TRUE(store_->LoadHistories()->empty());
  EXPECT_EQ(history_->Get(id).points_size(), 0);
  // A save that raced the deletion leaves no row behind.
  v1::HistorySeries late;
  late.set_job_id(id);
  *late.add_points() = At(5);
  ASSERT_TRUE(store_->SaveHistory(late).ok());
  EXPECT_TRUE(store_->LoadHistories()->empty());
  v1::GetJobHistoryRequest r;
  r.set_job_id(id);
  EXPECT_TRUE(absl::IsNotFound(calls_->GetJobHistory(r).status()));
}

TEST_F(JobHistoryTest, AnswerCarriesTheEvaluationsAndRefusesBadIds) {
  const std::string id = RunningJob(1);
  v1::ReportProgressRequest eval = Window(id, 0, 10, 0.5);
  eval.set_step_time_ms(0);
  eval.set_eval_epoch(1);
  eval.set_eval_correct(9);
  eval.set_eval_samples(10);
  ASSERT_TRUE(jobs_->ReportProgress(eval, "w0").ok());
  v1::JobHistoryResponse h = Get(id);
  ASSERT_EQ(h.evaluations_size(), 1);
  EXPECT_EQ(h.evaluations(0).epoch(), 1);
  EXPECT_DOUBLE_EQ(h.evaluations(0).test_accuracy(), 0.9);
  v1::GetJobHistoryRequest r;
  EXPECT_TRUE(absl::IsInvalidArgument(calls_->GetJobHistory(r).status()));
  r.set_job_id("no-such-job");
  EXPECT_TRUE(absl::IsNotFound(calls_->GetJobHistory(r).status()));
}

TEST_F(JobHistoryTest, ASmallerBoundThinsTheStoredSeriesOnLoad) {
  const std::string id = RunningJob(1);
  v1::HistorySeries s;
  s.set_job_id(id);
  for (int64_t step = 1; step <= 100; ++step) AddHistoryPoint(s, At(step), 100);
  ASSERT_TRUE(store_->SaveHistory(s).ok());
  ASSERT_TRUE(history_->Load().ok());
  const v1::HistorySeries loaded = history_->Get(id);
  EXPECT_LE(loaded.points_size(), 8);
  EXPECT_EQ(loaded.points(0).step(), 1);
  EXPECT_EQ(loaded.points(loaded.points_size() - 1).step(), 100);
}

}  // namespace
}  // namespace ringleader
