// GenerationWatchers: each watch is answered once, by the end of its
// generation (or an older one's end that reaches it), by its job's end, or
// by a newer watch of the same worker; a withdrawn watch is not answered.
#include "coordinator/generation_watchers.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ringleader {
namespace {

// What each watch was answered, by a name the test gives it.
class Answers {
 public:
  GenerationWatchers::Answer For(const std::string& name) {
    return [this, name](absl::StatusOr<v1::GenerationEvent> a) {
      got_[name].push_back(std::move(a));
    };
  }
  int Count(const std::string& name) const {
    auto it = got_.find(name);
    return it == got_.end() ? 0 : static_cast<int>(it->second.size());
  }
  const absl::StatusOr<v1::GenerationEvent>& First(const std::string& name) {
    return got_.at(name).front();
  }

 private:
  std::map<std::string, std::vector<absl::StatusOr<v1::GenerationEvent>>> got_;
};

TEST(GenerationWatchersTest, EndAnswersThatGenerationAndOlderOnly) {
  GenerationWatchers w;
  Answers a;
  w.Watch("w1", "job", 3, a.For("w1"));
  w.Watch("w2", "job", 2, a.For("w2"));
  w.Watch("w3", "job", 4, a.For("w3"));
  w.Watch("w4", "other", 3, a.For("w4"));
  EXPECT_EQ(w.Size(), 4);

  w.Ended("job", 3, "worker w9 missed its lease", /*rejoin=*/true);

  ASSERT_EQ(a.Count("w1"), 1);
  ASSERT_TRUE(a.First("w1").ok()) << a.First("w1").status();
  const v1::GenerationAbort& ended = a.First("w1")->ended();
  EXPECT_EQ(ended.job_id(), "job");
  EXPECT_EQ(ended.generation(), 3);
  EXPECT_EQ(ended.reason(), "worker w9 missed its lease");
  EXPECT_TRUE(ended.rejoin());
  ASSERT_EQ(a.Count("w2"), 1);  // An older generation is over too.
  EXPECT_EQ(a.First("w2")->ended().generation(), 2);
  EXPECT_EQ(a.Count("w3"), 0);  // Newer: still live.
  EXPECT_EQ(a.Count("w4"), 0);  // Another job.
  EXPECT_EQ(w.Size(), 2);
}

TEST(GenerationWatchersTest, EachWatchIsAnsweredOnce) {
  GenerationWatchers w;
  Answers a;
  w.Watch("w1", "job", 1, a.For("w1"));
  w.Ended("job", 1, "first", true);
  w.Ended("job", 1, "again", true);
  w.JobFinished("job", "cancelled");
  EXPECT_EQ(a.Count("w1"), 1);
  EXPECT_EQ(a.First("w1")->ended().reason(), "first");
  EXPECT_EQ(w.Size(), 0);
}

TEST(GenerationWatchersTest, JobFinishedAnswersEveryWatchOfTheJobNoRejoin) {
  GenerationWatchers w;
  Answers a;
  w.Watch("w1", "job", 5, a.For("w1"));
  w.Watch("w2", "job", 6, a.For("w2"));
  w.Watch("w3", "other", 1, a.For("w3"));
  w.JobFinished("job", "job job is JOB_STATE_CANCELLED");
  ASSERT_EQ(a.Count("w1"), 1);
  ASSERT_EQ(a.Count("w2"), 1);
  EXPECT_FALSE(a.First("w1")->ended().rejoin());
  EXPECT_EQ(a.First("w2")->ended().generation(), 6);
  EXPECT_EQ(a.First("w2")->ended().reason(), "job job is JOB_STATE_CANCELLED");
  EXPECT_EQ(a.Count("w3"), 0);
  EXPECT_EQ(w.Size(), 1);
}

TEST(GenerationWatchersTest, ANewerWatchOfTheWorkerReplacesTheOlder) {
  GenerationWatchers w;
  Answers a;
  w.Watch("w1", "job", 1, a.For("old"));
  w.Watch("w1", "job", 2, a.For("new"));
  ASSERT_EQ(a.Count("old"), 1);
  EXPECT_TRUE(absl::IsAlreadyExists(a.First("old").status()))
      << a.First("old").status();
  EXPECT_EQ(a.Count("new"), 0);
  EXPECT_EQ(w.Size(), 1);
  // Even in another job: one watch per worker.
  w.Watch("w1", "other", 1, a.For("third"));
  EXPECT_EQ(a.Count("new"), 1);
  EXPECT_EQ(w.Size(), 1);
  w.Ended("job", 2, "x", true);  // The replaced watch is not answered again.
  EXPECT_EQ(a.Count("new"), 1);
  w.Ended("other", 1, "y", true);
  EXPECT_EQ(a.Count("third"), 1);
  EXPECT_EQ(w.Size(), 0);
}

TEST(GenerationWatchersTest, UnwatchWithdrawsOnlyThatWatch) {
  GenerationWatchers w;
  Answers a;
  const uint64_t first = w.Watch("w1", "job", 1, a.For("first"));
  const uint64_t second = w.Watch("w1", "job", 1, a.For("second"));
  w.Unwatch("w1", first);  // Already replaced: the newer one stays.
  EXPECT_EQ(w.Size(), 1);
  w.Unwatch("w1", second);
  EXPECT_EQ(w.Size(), 0);
  w.Ended("job", 1, "x", true);
  EXPECT_EQ(a.Count("second"), 0);  // Withdrawn: never answered.
  w.Unwatch("nobody", 7);           // Nothing to withdraw.
}

TEST(GenerationWatchersTest, CloseAllEndsEveryWatch) {
  GenerationWatchers w;
  Answers a;
  w.Watch("w1", "job", 1, a.For("w1"));
  w.Watch("w2", "other", 2, a.For("w2"));
  w.CloseAll(absl::UnavailableError("stopping"));
  ASSERT_EQ(a.Count("w1"), 1);
  ASSERT_EQ(a.Count("w2"), 1);
  EXPECT_TRUE(absl::IsUnavailable(a.First("w1").status()));
  EXPECT_EQ(w.Size(), 0);
  w.Ended("job", 1, "x", true);
  EXPECT_EQ(a.Count("w1"), 1);
}

TEST(GenerationWatchersTest, AwaitsWatchesComingAndGoing) {
  GenerationWatchers w;
  Answers a;
  EXPECT_FALSE(w.AwaitWatching("w1", absl::Milliseconds(1)));
  const uint64_t id = w.Watch("w1", "job", 1, a.For("w1"));
  EXPECT_TRUE(w.AwaitWatching("w1", absl::Seconds(10)));
  EXPECT_FALSE(w.AwaitSizeAtMost(0, absl::Milliseconds(1)));
  w.Unwatch("w1", id);
  EXPECT_TRUE(w.AwaitSizeAtMost(0, absl::Seconds(10)));
}

}  // namespace
}  // namespace ringleader
