#include "worker/train/checkpoint/commit_queue.h"

#include <atomic>
#include <map>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

constexpr absl::Duration kWait = absl::Seconds(30);

v1::CommitCheckpointRequest Commit(int64_t step) {
  v1::CommitCheckpointRequest c;
  c.set_job_id("job");
  c.set_generation(3);
  c.set_step(step);
  return c;
}

// The coordinator's side of the sends: a gate that holds them (a
// coordinator that does not answer) until it opens, and an answer per step.
class Coordinator {
 public:
  CommitQueue::Send Send() {
    return [this](const v1::CommitCheckpointRequest& c,
                  const std::atomic<bool>* cancel) -> CommitQueue::Answer {
      absl::MutexLock lock(&mu_);
      ++attempts_;
      auto open = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return open_; };
      // Tries with a deadline each, as the client's, until cancelled.
      while (!mu_.AwaitWithTimeout(absl::Condition(&open),
                                   absl::Milliseconds(10))) {
        if (cancel->load()) return absl::DeadlineExceededError("no answer");
      }
      received_.push_back(c.step());
      auto it = answers_.find(c.step());
      if (it != answers_.end()) return it->second;
      v1::CommitCheckpointResponse ok;
      ok.set_checkpoint_id(c.step());
      return ok;
    };
  }
  CommitQueue::Committed Committed() {
    return [this](const v1::CommitCheckpointRequest& c,
                  const v1::CommitCheckpointResponse& r) {
      absl::MutexLock lock(&mu_);
      EXPECT_EQ(r.checkpoint_id(), c.step());
      committed_.push_back(c.step());
    };
  }
  void Answer(int64_t step, CommitQueue::Answer answer) {
    absl::MutexLock lock(&mu_);
    answers_.emplace(step, std::move(answer));
  }
  void EndGenerationAt(int64_t step) {
    v1::CommitCheckpointResponse ended;
    ended.set_checkpoint_id(step);
    ended.set_generation_ended(true);
    Answer(step, ended);
  }
  void Open() {
    absl::MutexLock lock(&mu_);
    open_ = true;
  }
  void WaitForAttempts(int n) {
    absl::MutexLock lock(&mu_);
    auto reached = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return attempts_ >= n;
    };
    ASSERT_TRUE(mu_.AwaitWithTimeout(absl::Condition(&reached), kWait));
  }
  std::vector<int64_t> received() {
    absl::MutexLock lock(&mu_);
    return received_;
  }
  std::vector<int64_t> committed() {
    absl::MutexLock lock(&mu_);
    return committed_;
  }

 private:
  absl::Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
  int attempts_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<int64_t, CommitQueue::Answer> answers_ ABSL_GUARDED_BY(mu_);
  std::vector<int64_t> received_ ABSL_GUARDED_BY(mu_);
  std::vector<int64_t> committed_ ABSL_GUARDED_BY(mu_);
};

TEST(CommitQueueTest, AnsweredAtOnceTheAnswerIsSeenAtTheCheckpoint) {
  Coordinator coordinator;
  coordinator.Open();
  coordinator.EndGenerationAt(20);
  CommitQueue queue(coordinator.Send(), coordinator.Committed());
  std::optional<CommitQueue::Answer> first = queue.Push(Commit(10), kWait);
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(first->ok()) << first->status();
  EXPECT_TRUE(queue.Verdict().ok());
  std::optional<CommitQueue::Answer> second = queue.Push(Commit(20), kWait);
  ASSERT_TRUE(second.has_value() && second->ok());
  EXPECT_TRUE((*second)->generation_ended());
  const absl::Status verdict = queue.Verdict();
  EXPECT_TRUE(absl::IsAborted(verdict)) << verdict;
  EXPECT_EQ(verdict.message(),
            "generation 3 of job job ended at checkpoint step 20 for a "
            "scale-up");
  // Nothing after the verdict is committed.
  std::optional<CommitQueue::Answer> after = queue.Push(Commit(30), kWait);
  ASSERT_TRUE(after.has_value());
  EXPECT_TRUE(absl::IsAborted(after->status()));
  EXPECT_TRUE(absl::IsAborted(queue.Drain(kWait)));
  EXPECT_EQ(coordinator.received(), (std::vector<int64_t>{10, 20}));
  EXPECT_EQ(coordinator.committed(), (std::vector<int64_t>{10, 20}));
}

TEST(CommitQueueTest, CommitsQueueInOrderWhileTheCoordinatorIsAway) {
  Coordinator coordinator;
  CommitQueue queue(coordinator.Send(), coordinator.Committed());
  // The first commit of the outage waits its bounded while, in vain.
  EXPECT_FALSE(queue.Push(Commit(10), absl::Milliseconds(20)).has_value());
  coordinator.WaitForAttempts(1);
  // The later ones do not wait at all: they cannot be answered before it.
  const absl::Time before = absl::Now();
  EXPECT_FALSE(queue.Push(Commit(20), absl::Hours(1)).has_value());
  EXPECT_FALSE(queue.Push(Commit(30), absl::Hours(1)).has_value());
  EXPECT_LT(absl::Now() - before, absl::Minutes(1));
  EXPECT_EQ(queue.pending(), 3);
  EXPECT_TRUE(queue.Verdict().ok());
  EXPECT_TRUE(coordinator.committed().empty());
  EXPECT_TRUE(absl::IsDeadlineExceeded(queue.Drain(absl::Milliseconds(10))));
  // Back: every commit arrives, in order.
  coordinator.Open();
  ASSERT_TRUE(queue.Drain(kWait).ok());
  EXPECT_EQ(coordinator.received(), (std::vector<int64_t>{10, 20, 30}));
  EXPECT_EQ(coordinator.committed(), (std::vector<int64_t>{10, 20, 30}));
  EXPECT_EQ(queue.pending(), 0);
}

TEST(CommitQueueTest, AnAnswerThatComesLateIsTheVerdict) {
  Coordinator coordinator;
  coordinator.EndGenerationAt(10);
  CommitQueue queue(coordinator.Send(), coordinator.Committed());
  EXPECT_FALSE(queue.Push(Commit(10), absl::Milliseconds(20)).has_value());
  EXPECT_TRUE(queue.Verdict().ok());  // Training goes on meanwhile.
  EXPECT_FALSE(queue.Push(Commit(20), absl::Milliseconds(20)).has_value());
  coordinator.Open();
  EXPECT_TRUE(absl::IsAborted(queue.Drain(kWait)));
  EXPECT_TRUE(absl::IsAborted(queue.Verdict()));
  EXPECT_EQ(coordinator.received(), (std::vector<int64_t>{10}));
}

TEST(CommitQueueTest, ARefusalIsFinal) {
  Coordinator coordinator;
  coordinator.Open();
  coordinator.Answer(20, absl::AbortedError("generation 3 ended"));
  CommitQueue queue(coordinator.Send(), coordinator.Committed());
  ASSERT_TRUE(queue.Push(Commit(10), kWait).has_value());
  std::optional<CommitQueue::Answer> refused = queue.Push(Commit(20), kWait);
  ASSERT_TRUE(refused.has_value());
  EXPECT_TRUE(absl::IsAborted(refused->status()));
  EXPECT_EQ(queue.Verdict().message(), "generation 3 ended");
  EXPECT_EQ(coordinator.committed(), (std::vector<int64_t>{10}));
}

TEST(CommitQueueTest, GoingAwayGivesUpWhatIsNotDelivered) {
  Coordinator coordinator;
  {
    CommitQueue queue(coordinator.Send(), coordinator.Committed());
    queue.Push(Commit(10), absl::ZeroDuration());
    coordinator.WaitForAttempts(1);
    queue.Push(Commit(20), absl::ZeroDuration());
  }  // Returns although the coordinator never answers.
  EXPECT_TRUE(coordinator.received().empty());
  EXPECT_TRUE(coordinator.committed().empty());
}

}  // namespace
}  // namespace ringleader
