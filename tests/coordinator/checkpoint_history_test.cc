// The checkpoint history a new generation may resume from: newest first,
// bounded, this job's own (and, for a job submitted with `resume`, its
// predecessors'), never one that every rank found unreadable.
#include <cstdlib>
#include <filesystem>

#include "common/fake_clock.h"
#include "coordinator/job_manager.h"
#include "coordinator/state_store.h"
#include "gtest/gtest.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

v1::JobSpec Spec(const std::string& name) {
  v1::JobSpec s = testing::MinimalJobSpec(name, 2, 2);
  s.set_checkpoint_dir("/tmp/ckpt");
  return s;
}

std::vector<int64_t> Steps(const std::vector<v1::CheckpointRecord>& records) {
  std::vector<int64_t> out;
  for (const auto& r : records) out.push_back(r.step());
  return out;
}

class CheckpointHistoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = *StateStore::Open(":memory:");
    jobs_ = std::make_unique<JobManager>(store_.get(), &clock_);
  }
  std::string Start(const v1::JobSpec& spec) {
    absl::StatusOr<v1::Job> job = jobs_->Submit(spec);
    EXPECT_TRUE(job.ok()) << job.status();
    EXPECT_TRUE(jobs_->OnGenerationFormed(job->job_id(), 1, 2).ok());
    return job->job_id();
  }
  v1::CheckpointRecord Commit(const std::string& job, int64_t step) {
    v1::CheckpointRecord c;
    c.set_generation(1);
    c.set_epoch(step / 100);
    c.set_step(step);
    c.set_epoch_sample_offset(step * 10 % 1000);
    c.set_path("/tmp/ckpt/" + job + "-step" + std::to_string(step));
    absl::StatusOr<v1::CheckpointRecord> r = jobs_->CommitCheckpoint(job, c);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : c;
  }
  std::vector<int64_t> Candidates(const std::string& job) {
    absl::StatusOr<std::vector<v1::CheckpointRecord>> c =
        jobs_->ResumeCandidates(job, 3);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? Steps(*c) : std::vector<int64_t>{-1};
  }

  FakeClock clock_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<JobManager> jobs_;
};

TEST_F(CheckpointHistoryTest, NewestFirstBoundedAndOwnJobOnly) {
  const std::string a = Start(Spec("hist"));
  EXPECT_TRUE(Candidates(a).empty());  // From scratch.
  for (int64_t step : {10, 20, 30, 40}) Commit(a, step);
  EXPECT_EQ(Candidates(a), (std::vector<int64_t>{40, 30, 20}));
  absl::StatusOr<std::vector<v1::CheckpointRecord>> all =
      jobs_->ResumeCandidates(a, 10);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(Steps(*all), (std::vector<int64_t>{40, 30, 20, 10}));
  EXPECT_GT((*all)[0].checkpoint_id(), (*all)[1].checkpoint_id());
  EXPECT_EQ((*all)[0].path(), "/tmp/ckpt/" + a + "-step40");
  EXPECT_EQ((*all)[0].epoch_sample_offset(), 400);

  // A later job of the same name without `resume` starts from scratch and
  // never falls back into the earlier run's checkpoints.
  ASSERT_TRUE(jobs_->Cancel(a).ok());
  const std::string fresh = Start(Spec("hist"));
  EXPECT_TRUE(Candidates(fresh).empty());
  Commit(fresh, 5);
  EXPECT_EQ(Candidates(fresh), (std::vector<int64_t>{5}));
  ASSERT_TRUE(jobs_->Cancel(fresh).ok());

  // One submitted with `resume` continues the latest run of the name, and
  // the run's earlier checkpoints are its fallbacks.
  v1::JobSpec resume = Spec("hist");
  resume.set_resume(true);
  const std::string b = Start(resume);
  EXPECT_EQ(Candidates(b), (std::vector<int64_t>{5, 40, 30}));
}

TEST_F(CheckpointHistoryTest, ResumingFromAnOlderOneMarksTheNewerBad) {
  const std::string a = Start(Spec("torn"));
  for (int64_t step : {10, 20, 30}) Commit(a, step);
  absl::StatusOr<std::vector<v1::CheckpointRecord>> c =
      jobs_->ResumeCandidates(a, 3);
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->size(), 3u);
  // Every rank skipped step 30 and loaded step 20.
  ASSERT_TRUE(jobs_->ResumedFrom(a, (*c)[1], {(*c)[0]}).ok());
  EXPECT_EQ(jobs_->Get(a)->last_checkpoint().step(), 20);
  EXPECT_EQ(Candidates(a), (std::vector<int64_t>{20, 10}));
  // The generation continues from 20: its commits at 25 and 30 are taken
  // (they would be "older than the committed 30" without going back).
  Commit(a, 25);
  Commit(a, 30);
  EXPECT_EQ(Candidates(a), (std::vector<int64_t>{30, 25, 20}));
  v1::CheckpointRecord older;
  older.set_step(29);
  older.set_path("/x");
  EXPECT_TRUE(
      absl::IsFailedPrecondition(jobs_->CommitCheckpoint(a, older).status()));
  // Resuming from the newest changes nothing and marks nothing.
  c = jobs_->ResumeCandidates(a, 3);
  ASSERT_TRUE(jobs_->ResumedFrom(a, (*c)[0], {}).ok());
  EXPECT_EQ(Candidates(a), (std::vector<int64_t>{30, 25, 20}));

  // A `resume` job is never offered the bad one either.
  ASSERT_TRUE(jobs_->Cancel(a).ok());
  v1::JobSpec resume = Spec("torn");
  resume.set_resume(true);
  const std::string b = Start(resume);
  EXPECT_EQ(Candidates(b), (std::vector<int64_t>{30, 25, 20}));
  EXPECT_TRUE(absl::IsNotFound(jobs_->ResumeCandidates("nope", 3).status()));
}

TEST(StateStoreCheckpointsTest, BadMarksAndHistorySurviveReopen) {
  const char* d = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(d ? d : "/tmp") + "/history.db";
  std::filesystem::remove(path);
  int64_t newest = 0;
  {
    auto store = StateStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status();
    for (int64_t step : {1, 2, 3}) {
      v1::CheckpointRecord r;
      r.set_step(step);
      r.set_path("/c/" + std::to_string(step));
      auto id = (*store)->AddCheckpoint("job-1", "job", r);
      ASSERT_TRUE(id.ok());
      newest = *id;
    }
    ASSERT_TRUE((*store)->MarkCheckpointBad(newest, "torn").ok());
  }
  auto store = StateStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  auto recent = (*store)->RecentCheckpoints("job-1", "", newest, 5);
  ASSERT_TRUE(recent.ok()) << recent.status();
  EXPECT_EQ(Steps(*recent), (std::vector<int64_t>{2, 1}));
  recent = (*store)->RecentCheckpoints("job-1", "", newest - 2, 5);
  EXPECT_EQ(Steps(*recent), (std::vector<int64_t>{1}));
  recent = (*store)->RecentCheckpoints("job-2", "", newest, 5);
  EXPECT_TRUE(recent->empty());
  recent = (*store)->RecentCheckpoints("job-2", "job", newest, 1);
  EXPECT_EQ(Steps(*recent), (std::vector<int64_t>{2}));
  auto latest = (*store)->LatestCheckpoint("job");
  ASSERT_TRUE(latest.ok());
  ASSERT_TRUE(latest->has_value());
  EXPECT_EQ((*latest)->step(), 2);
}

}  // namespace
}  // namespace ringleader
