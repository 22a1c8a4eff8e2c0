#include "coordinator/generation_facts.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/fake_clock.h"
#include "coordinator/state_store.h"
#include "gtest/gtest.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

class GenerationFactsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    v1::JobSpec spec = testing::MinimalJobSpec("facts", 2, 2);
    spec.set_checkpoint_dir("/ckpt");
    job_ = jobs_.Submit(spec)->job_id();
  }

  // Commits checkpoints at steps 10, 20, ... `n` of them; returns their ids.
  std::vector<int64_t> Commit(int n) {
    std::vector<int64_t> ids;
    for (int i = 1; i <= n; ++i) {
      v1::CheckpointRecord r;
      r.set_generation(1);
      r.set_step(10 * i);
      r.set_path(absl::StrCat("/ckpt/facts-step", 10 * i, ".ckpt"));
      absl::StatusOr<v1::CheckpointRecord> c = jobs_.CommitCheckpoint(job_, r);
      EXPECT_TRUE(c.ok()) << c.status();
      ids.push_back(c.ok() ? c->checkpoint_id() : 0);
    }
    return ids;
  }

  std::vector<int64_t> OfferedIds(int64_t generation) {
    std::vector<int64_t> ids;
    for (const v1::CheckpointRecord& c : facts_.Offer(job_, generation)) {
      ids.push_back(c.checkpoint_id());
    }
    return ids;
  }

  FakeClock clock_;
  std::unique_ptr<StateStore> store_ = *StateStore::Open(":memory:");
  JobManager jobs_{store_.get(), &clock_};
  GenerationFacts facts_{jobs_};
  std::string job_;
};

TEST_F(GenerationFactsTest, AGenerationIsOfferedTheLastCommitsNewestFirst) {
  EXPECT_TRUE(facts_.Formed(job_, 1));
  EXPECT_TRUE(OfferedIds(1).empty());  // A fresh start.
  const std::vector<int64_t> ids = Commit(4);
  ASSERT_TRUE(facts_.Formed(job_, 2));
  EXPECT_EQ(OfferedIds(2), (std::vector<int64_t>{ids[3], ids[2], ids[1]}));
  EXPECT_TRUE(OfferedIds(1).empty());  // Not the job's generation.
}

TEST_F(GenerationFactsTest, AnOlderGenerationsLateFormationChangesNothing) {
  const std::vector<int64_t> ids = Commit(1);
  ASSERT_TRUE(facts_.Formed(job_, 3));
  EXPECT_FALSE(facts_.Formed(job_, 2));
  EXPECT_EQ(OfferedIds(3), std::vector<int64_t>{ids[0]});
}

TEST_F(GenerationFactsTest, TheFirstRankToNameACheckpointFixesTheChoice) {
  const std::vector<int64_t> ids = Commit(3);
  ASSERT_TRUE(facts_.Formed(job_, 2));
  // Rank 1 could not read the newest and loaded the one before.
  absl::StatusOr<std::optional<v1::CheckpointRecord>> resume =
      facts_.NoteShardRequest(job_, 2, 1, false, 100, ids[1]);
  ASSERT_TRUE(resume.ok()) << resume.status();
  ASSERT_TRUE(resume->has_value());
  EXPECT_EQ((*resume)->checkpoint_id(), ids[1]);
  // The job follows it back, and the skipped one is offered no more.
  EXPECT_EQ(jobs_.Get(job_)->last_checkpoint().checkpoint_id(), ids[1]);
  EXPECT_TRUE(absl::IsFailedPrecondition(
      facts_.NoteShardRequest(job_, 2, 0, false, 100, ids[2]).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      facts_.NoteShardRequest(job_, 2, 0, false, 100, 999).status()));
  // A commit that names the same choice agrees.
  EXPECT_TRUE(facts_.NoteTrainingFacts(job_, 2, 0, 100, ids[1]).ok());
}

TEST_F(GenerationFactsTest, EveryRankMustSeeTheSameDatasetSize) {
  ASSERT_TRUE(facts_.Formed(job_, 1));
  EXPECT_EQ(facts_.TrainSize(job_, 1), -1);
  ASSERT_TRUE(facts_.NoteShardRequest(job_, 1, 0, false, 100, 0).ok());
  const absl::Status other =
      facts_.NoteShardRequest(job_, 1, 1, false, 99, 0).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(other)) << other;
  EXPECT_EQ(other.message(),
            "rank 1 sees 99 samples but another rank saw 100: every worker "
            "needs the same dataset");
  // The test split is its own.
  EXPECT_TRUE(facts_.NoteShardRequest(job_, 1, 1, true, 20, 0).ok());
  EXPECT_TRUE(
      absl::IsFailedPrecondition(facts_.NoteTrainingFacts(job_, 1, 1, 99, 0)));
  EXPECT_EQ(facts_.TrainSize(job_, 1), 100);
}

TEST_F(GenerationFactsTest, FactsOfAnotherGenerationAreIgnored) {
  ASSERT_TRUE(facts_.Formed(job_, 2));
  EXPECT_TRUE(facts_.NoteTrainingFacts(job_, 1, 0, 50, 0).ok());
  EXPECT_EQ(facts_.TrainSize(job_, 2), -1);
  EXPECT_EQ(facts_.TrainSize(job_, 1), -1);
  EXPECT_TRUE(
      absl::IsInvalidArgument(facts_.NoteTrainingFacts(job_, 2, 0, -1, 0)));
}

TEST_F(GenerationFactsTest, AnAdoptedGenerationCanStillApplyItsChoice) {
  const std::vector<int64_t> ids = Commit(3);
  // Adopted after a restart: no offer kept, and no commit of it yet.
  facts_.Adopted(job_, 2);
  EXPECT_TRUE(OfferedIds(2).empty());
  ASSERT_TRUE(facts_.NoteTrainingFacts(job_, 2, 0, 100, ids[0]).ok());
  EXPECT_EQ(jobs_.Get(job_)->last_checkpoint().checkpoint_id(), ids[0]);
}

TEST_F(GenerationFactsTest, AFinishedJobsFactsAreForgotten) {
  Commit(1);
  ASSERT_TRUE(facts_.Formed(job_, 1));
  facts_.Forget(job_);
  EXPECT_TRUE(OfferedIds(1).empty());
  EXPECT_EQ(facts_.TrainSize(job_, 1), -1);
}

}  // namespace
}  // namespace ringleader
