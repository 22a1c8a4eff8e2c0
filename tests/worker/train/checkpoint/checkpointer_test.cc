// Rank 0's checkpoints while the coordinator is away: each file is saved
// and its commit queued, training goes on, and old files are pruned only
// relative to commits the coordinator acknowledged, never a file whose
// commit is still queued. Written on the training thread
// (checkpoint_synchronous) and in the background: commits in order, each
// after its file, a failed write as the verdict, a scale-up stopping
// training at a checkpoint the training thread wrote.
#include "worker/train/checkpoint/checkpointer.h"

#include <torch/torch.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/model/builtin_models.h"
#include "worker/model/optimizer.h"

namespace ringleader {
namespace {

constexpr absl::Duration kWait = absl::Seconds(30);

std::string FreshDir(const std::string& name) {
  const char* d = std::getenv("TEST_TMPDIR");
  const std::string dir = std::string(d ? d : "/tmp") + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::set<int64_t> Steps(const std::string& dir) {
  std::set<int64_t> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string f = e.path().filename().string();
    out.insert(std::stoll(f.substr(f.find("-step") + 5)));
  }
  return out;
}

// The coordinator's side of the commits: a gate that holds them until it
// opens, what arrived, and a step at which it ends the generation.
class Coordinator {
 public:
  CommitQueue::Send Send() {
    return [this](const v1::CommitCheckpointRequest& c,
                  const std::atomic<bool>* cancel) -> CommitQueue::Answer {
      absl::MutexLock lock(&mu_);
      auto open = [this, &c]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return open_ &&
               (c.step() < hold_from_ ||
                (!release_on_.empty() && std::filesystem::exists(release_on_)));
      };
      while (!mu_.AwaitWithTimeout(absl::Condition(&open),
                                   absl::Milliseconds(10))) {
        if (cancel->load()) return absl::DeadlineExceededError("no answer");
      }
      received_.push_back(c);
      v1::CommitCheckpointResponse r;
      r.set_checkpoint_id(c.step());
      // As the coordinator: never at a commit the ranks trained past.
      r.set_generation_ended(c.step() == end_at_ && !c.trained_past());
      r.set_scale_up_pending(c.trained_past() && c.step() >= pend_from_);
      // The file is on disk when its commit arrives.
      files_present_ = files_present_ && std::filesystem::exists(c.path());
      return r;
    };
  }
  void SetOpen(bool open) {
    absl::MutexLock lock(&mu_);
    open_ = open;
  }
  // Commits from `step` on are held until the file `release_on` exists
  // (never, if empty); the check runs every 10 ms while one is held.
  void HoldFrom(int64_t step, const std::string& release_on) {
    absl::MutexLock lock(&mu_);
    hold_from_ = step;
    release_on_ = release_on;
  }
  void EndGenerationAt(int64_t step) {
    absl::MutexLock lock(&mu_);
    end_at_ = step;
  }
  // Workers wait to join from `step` on: a trained_past commit is answered
  // scale_up_pending.
  void PendFrom(int64_t step) {
    absl::MutexLock lock(&mu_);
    pend_from_ = step;
  }
  bool files_present() {
    absl::MutexLock lock(&mu_);
    return files_present_;
  }
  std::vector<v1::CommitCheckpointRequest> received() {
    absl::MutexLock lock(&mu_);
    return received_;
  }

 private:
  absl::Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = true;
  int64_t hold_from_ ABSL_GUARDED_BY(mu_) = INT64_MAX;
  std::string release_on_ ABSL_GUARDED_BY(mu_);
  int64_t end_at_ ABSL_GUARDED_BY(mu_) = -1;
  int64_t pend_from_ ABSL_GUARDED_BY(mu_) = INT64_MAX;
  bool files_present_ ABSL_GUARDED_BY(mu_) = true;
  std::vector<v1::CommitCheckpointRequest> received_ ABSL_GUARDED_BY(mu_);
};

class CheckpointerTest : public ::testing::Test {
 protected:
  void SetUp() override { Make(/*synchronous=*/true); }
  void Make(bool synchronous) {
    dir_ = FreshDir(synchronous ? "checkpointer" : "checkpointer-bg");
    gen_.mutable_spec()->set_checkpoint_synchronous(synchronous);
    gen_.set_generation(2);
    gen_.set_rank(0);
    gen_.set_world_size(2);
    gen_.mutable_spec()->set_name("job");
    gen_.mutable_spec()->set_checkpoint_dir(dir_);
    model_ = MakeMlp({8}, 1).value();
    v1::OptimizerSpec o;
    o.set_kind(v1::OPTIMIZER_KIND_SGD);
    o.set_learning_rate(0.1);
    optimizer_ = BuildOptimizer(o, model_->Parameters()).value();
    checkpointer_ = std::make_unique<Checkpointer>(
        coordinator_.Send(), "job-1", gen_, model_.get(), optimizer_.get(),
        /*resumed_checkpoint_id=*/7, /*train_size=*/640);
  }

  std::string dir_;
  v1::JoinRendezvousResponse gen_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  Coordinator coordinator_;
  std::unique_ptr<Checkpointer> checkpointer_;
};

TEST_F(CheckpointerTest, PrunesOnlyRelativeToAcknowledgedCommits) {
  ASSERT_TRUE(checkpointer_->enabled());
  for (int64_t step : {10, 20, 30, 40}) {
    ASSERT_TRUE(checkpointer_->Save({0, step}, step * 16).ok());
  }
  // Answered at each checkpoint: the last three acknowledged stay.
  EXPECT_EQ(Steps(dir_), (std::set<int64_t>{20, 30, 40}));
  // The coordinator goes away: every save returns, and no file goes,
  // neither those of the queued commits nor those the coordinator still
  // offers.
  coordinator_.SetOpen(false);
  for (int64_t step : {50, 60, 70, 80}) {
    ASSERT_TRUE(checkpointer_->Save({0, step}, step * 16).ok());
  }
  EXPECT_EQ(Steps(dir_), (std::set<int64_t>{20, 30, 40, 50, 60, 70, 80}));
  EXPECT_TRUE(
      absl::IsDeadlineExceeded(checkpointer_->Drain(absl::Milliseconds(10))));
  // Back: the queued commits arrive in order, then the old files go.
  coordinator_.SetOpen(true);
  ASSERT_TRUE(checkpointer_->Drain(kWait).ok());
  EXPECT_EQ(Steps(dir_), (std::set<int64_t>{60, 70, 80}));
  std::vector<int64_t> steps;
  for (const v1::CommitCheckpointRequest& c : coordinator_.received()) {
    steps.push_back(c.step());
    // What the coordinator learns from each commit.
    EXPECT_EQ(c.job_id(), "job-1");
    EXPECT_EQ(c.generation(), 2);
    EXPECT_EQ(c.epoch_sample_offset(), c.step() * 16);
    EXPECT_EQ(c.resumed_checkpoint_id(), 7);
    EXPECT_EQ(c.train_size(), 640);
    EXPECT_EQ(c.path(),
              dir_ + "/job-step" + std::to_string(c.step()) + ".ckpt");
  }
  EXPECT_EQ(steps, (std::vector<int64_t>{10, 20, 30, 40, 50, 60, 70, 80}));
}

TEST_F(CheckpointerTest, AScaleUpAnsweredAtOnceStopsAtTheCheckpoint) {
  coordinator_.EndGenerationAt(20);
  ASSERT_TRUE(checkpointer_->Save({0, 10}, 160).ok());
  const absl::Status s = checkpointer_->Save({0, 20}, 320);
  EXPECT_TRUE(absl::IsAborted(s)) << s;
  EXPECT_TRUE(absl::IsAborted(checkpointer_->Verdict()));
}

TEST_F(CheckpointerTest, AScaleUpAnsweredLateIsTheVerdict) {
  coordinator_.EndGenerationAt(10);
  coordinator_.SetOpen(false);
  // Not answered within kCommitAnswerWait: training goes on.
  ASSERT_TRUE(checkpointer_->Save({0, 10}, 160).ok());
  EXPECT_TRUE(checkpointer_->Verdict().ok());
  coordinator_.SetOpen(true);
  EXPECT_TRUE(absl::IsAborted(checkpointer_->Drain(kWait)));
  EXPECT_TRUE(absl::IsAborted(checkpointer_->Verdict()));
}

class BackgroundCheckpointerTest : public CheckpointerTest {
 protected:
  void SetUp() override { Make(/*synchronous=*/false); }

  // Workers wait to join from step 10 and the generation ends at 30.
  // Checkpoints 10 and 20 are written in the background before any answer
  // said so; then 10 is answered (workers wait) while 20 is held until the
  // file `release_on` exists (never, if empty). Returns once the
  // checkpointer knows workers wait: its next save is in place.
  void TwoCommitsAheadOfAScaleUp(const std::string& release_on) {
    coordinator_.PendFrom(10);
    coordinator_.EndGenerationAt(30);
    coordinator_.HoldFrom(10, "");
    ASSERT_TRUE(checkpointer_->Save({0, 10}, 160).ok());
    ASSERT_TRUE(checkpointer_->Save({0, 20}, 320).ok());
    EXPECT_FALSE(checkpointer_->scale_up_pending());
    coordinator_.HoldFrom(20, release_on);
    const absl::Time give_up = absl::Now() + kWait;
    while (!checkpointer_->scale_up_pending() && absl::Now() < give_up) {
      absl::SleepFor(absl::Milliseconds(1));  // Polling the answer of 10.
    }
    ASSERT_TRUE(checkpointer_->scale_up_pending());
  }
};

TEST_F(BackgroundCheckpointerTest, CommitsInOrderEachAfterItsFile) {
  for (int64_t step : {10, 20, 30, 40, 50}) {
    ASSERT_TRUE(checkpointer_->Save({0, step}, step * 16).ok());
  }
  ASSERT_TRUE(checkpointer_->Drain(kWait).ok());
  std::vector<int64_t> steps;
  for (const v1::CommitCheckpointRequest& c : coordinator_.received()) {
    steps.push_back(c.step());
    EXPECT_TRUE(c.trained_past());
    EXPECT_EQ(c.epoch_sample_offset(), c.step() * 16);
  }
  EXPECT_EQ(steps, (std::vector<int64_t>{10, 20, 30, 40, 50}));
  EXPECT_TRUE(coordinator_.files_present());
  // Pruned relative to the acknowledged commits, as when written in place.
  EXPECT_EQ(Steps(dir_), (std::set<int64_t>{30, 40, 50}));
}

TEST_F(BackgroundCheckpointerTest, NoFileIsPrunedWhileItsCommitIsQueued) {
  ASSERT_TRUE(checkpointer_->Save({0, 10}, 160).ok());
  ASSERT_TRUE(checkpointer_->Drain(kWait).ok());
  coordinator_.SetOpen(false);
  for (int64_t step : {20, 30, 40, 50}) {
    ASSERT_TRUE(checkpointer_->Save({0, step}, step * 16).ok());
  }
  EXPECT_TRUE(
      absl::IsDeadlineExceeded(checkpointer_->Drain(absl::Milliseconds(10))));
  // Each save waits for the previous write: all but the last are on disk;
  // a long enough Drain shows the last one too.
  coordinator_.SetOpen(true);
  ASSERT_TRUE(checkpointer_->Drain(kWait).ok());
  EXPECT_EQ(Steps(dir_), (std::set<int64_t>{30, 40, 50}));
  EXPECT_EQ(coordinator_.received().size(), 5u);
}

// Where a synchronous write's error goes (Save's status, the trainer's
// return), a background write's error goes too: the first Save or Verdict
// after it, and Drain.
TEST_F(BackgroundCheckpointerTest, AnUnwritableDirectoryIsTheVerdict) {
  // Not a directory: even root cannot create a file under it.
  const std::string not_a_dir = dir_ + "/plain-file";
  { std::ofstream(not_a_dir) << "x"; }
  gen_.mutable_spec()->set_checkpoint_dir(not_a_dir);
  checkpointer_ =
      std::make_unique<Checkpointer>(coordinator_.Send(), "job-1", gen_,
                                     model_.get(), optimizer_.get(), 7, 640);
  const absl::Status first = checkpointer_->Save({0, 10}, 160);
  const absl::Status drained = checkpointer_->Drain(kWait);
  EXPECT_EQ(drained.code(), absl::StatusCode::kInternal) << drained;
  EXPECT_THAT(std::string(drained.message()),
              ::testing::HasSubstr("cannot create " + not_a_dir));
  EXPECT_TRUE(first.ok() || first == drained) << first;
  EXPECT_EQ(checkpointer_->Verdict(), drained);
  EXPECT_EQ(checkpointer_->Save({0, 20}, 320), drained);
  EXPECT_TRUE(coordinator_.received().empty());  // Nothing committed.

  // The synchronous path fails with the same error.
  gen_.mutable_spec()->set_checkpoint_synchronous(true);
  Checkpointer sync(coordinator_.Send(), "job-1", gen_, model_.get(),
                    optimizer_.get(), 7, 640);
  const absl::Status s = sync.Save({0, 10}, 160);
  EXPECT_EQ(s.code(), drained.code());
  EXPECT_THAT(std::string(s.message()),
              ::testing::HasSubstr("cannot create " + not_a_dir));
}

// Training stops exactly at a checkpoint for a scale-up: the commit written
// in the background is only told that workers wait, and the next checkpoint
// is written and answered on the training thread, where the generation
// ends.
TEST_F(BackgroundCheckpointerTest,
       AScaleUpEndsAtTheNextCheckpointWrittenInPlace) {
  coordinator_.PendFrom(20);
  coordinator_.EndGenerationAt(30);
  ASSERT_TRUE(checkpointer_->Save({0, 10}, 160).ok());
  ASSERT_TRUE(checkpointer_->Save({0, 20}, 320).ok());
  // Answered scale_up_pending by the time the write and commit are done.
  ASSERT_TRUE(checkpointer_->Drain(kWait).ok());
  const absl::Status s = checkpointer_->Save({0, 30}, 480);
  EXPECT_TRUE(absl::IsAborted(s)) << s;
  const std::vector<v1::CommitCheckpointRequest> got = coordinator_.received();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_TRUE(got[0].trained_past());
  EXPECT_TRUE(got[1].trained_past());
  EXPECT_FALSE(got[2].trained_past());
}

// The same while a commit written in the background is still on its way:
// the in-place checkpoint's answer comes after it, and training must not go
// on past the checkpoint meanwhile (the elastic test once saw 85 steps per
// rank trained past it, and done again).
TEST_F(BackgroundCheckpointerTest, AScaleUpWaitsForTheCommitsAheadOfItsOwn) {
  // 20 is answered once 30's file is on disk.
  ASSERT_NO_FATAL_FAILURE(TwoCommitsAheadOfAScaleUp(dir_ + "/job-step30.ckpt"));
  const absl::Status s = checkpointer_->Save({0, 30}, 480);
  EXPECT_TRUE(absl::IsAborted(s)) << s;
  const std::vector<v1::CommitCheckpointRequest> got = coordinator_.received();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_FALSE(got[2].trained_past());
}

// The commits ahead still unanswered after kCommitAnswerWait (a slow or
// stopped coordinator): the in-place commit's answer would not be awaited
// either, so it goes as trained_past and the generation does not end at a
// checkpoint the ranks train past; the next one is written in place again.
TEST_F(BackgroundCheckpointerTest, AScaleUpWhoseCommitsAheadHangGoesOn) {
  ASSERT_NO_FATAL_FAILURE(TwoCommitsAheadOfAScaleUp(""));  // 20 is held.
  EXPECT_TRUE(checkpointer_->Save({0, 30}, 480).ok());
  coordinator_.HoldFrom(INT64_MAX, "");
  EXPECT_TRUE(checkpointer_->Drain(kWait).ok());
  const std::vector<v1::CommitCheckpointRequest> got = coordinator_.received();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_TRUE(got[2].trained_past());
  EXPECT_TRUE(checkpointer_->scale_up_pending());  // Still, for the next.
}

TEST(CheckpointerDisabledTest, OtherRanksHaveNoQueue) {
  v1::JoinRendezvousResponse gen;
  gen.set_rank(1);
  gen.mutable_spec()->set_checkpoint_dir("/tmp");
  Checkpointer c(nullptr, "job", gen, nullptr, nullptr, 0, 0);
  EXPECT_FALSE(c.enabled());
  EXPECT_TRUE(c.Verdict().ok());
  EXPECT_TRUE(c.Drain(absl::ZeroDuration()).ok());
}

}  // namespace
}  // namespace ringleader
