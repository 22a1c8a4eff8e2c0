#include "coordinator/rendezvous.h"

#include <cstdint>
#include <map>
#include <optional>

#include "common/fake_clock.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

using Result = absl::StatusOr<Rendezvous::Generation>;

class RendezvousTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rdzv_.SetFormedHook(
        [this](const std::string&, const Rendezvous::Generation& g) {
          formed_.push_back(g.number);
        });
    rdzv_.SetEndedHook(
        [this](const std::string&, int64_t gen, const std::string& reason) {
          ended_.push_back(gen);
          last_reason_ = reason;
        });
    rdzv_.SetResizedHook(
        [this](const std::string&, int64_t gen, const std::string& reason) {
          resized_.push_back(gen);
          last_reason_ = reason;
        });
    rdzv_.SetTimedOutHook([this](const std::string&, const std::string& why) {
      timed_out_.push_back(why);
    });
  }
  void Open(int min, int max, absl::Duration last_call,
            int64_t last_generation = 0) {
    ASSERT_TRUE(
        rdzv_.OpenJob("job", {min, max, last_call}, last_generation).ok());
  }
  // Returns the id CancelJoin takes (0: answered at once).
  uint64_t Join(const std::string& worker,
                absl::Duration timeout = absl::Seconds(60)) {
    return rdzv_.Join(
        "job", {worker, "host-" + worker, "addr", -1}, clock_.Now() + timeout,
        [this, worker](Result r) { results_[worker] = std::move(r); });
  }

  FakeClock clock_;
  Rendezvous rdzv_{&clock_, &clock_};
  std::map<std::string, Result> results_;
  std::vector<int64_t> formed_, ended_, resized_;
  std::vector<std::string> timed_out_;
  std::string last_reason_;
};

TEST_F(RendezvousTest, FormsAtMaxWithRanksBySortedWorkerId) {
  Open(2, 3, absl::Seconds(5));
  Join("w-c");
  Join("w-a");
  EXPECT_TRUE(results_.empty());  // Last call is open.
  Join("w-b");
  ASSERT_EQ(results_.size(), 3u);
  for (const auto& [w, r] : results_) {
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->number, 1);
    ASSERT_EQ(r->members.size(), 3u);
    EXPECT_EQ(r->members[0].worker_id, "w-a");
    EXPECT_EQ(r->members[1].worker_id, "w-b");
    EXPECT_EQ(r->members[2].worker_id, "w-c");
    EXPECT_EQ(r->members[2].rank, 2);
  }
  EXPECT_EQ(formed_, std::vector<int64_t>{1});
  EXPECT_EQ(clock_.pending_timers(), 0u);
}

TEST_F(RendezvousTest, LastCallWindowFormsWithMinWorkers) {
  Open(2, 4, absl::Seconds(3));
  Join("w1");
  clock_.Advance(absl::Seconds(10));
  EXPECT_TRUE(results_.empty());  // Below min, no window yet.
  Join("w2");
  clock_.Advance(absl::Milliseconds(2999));
  EXPECT_TRUE(results_.empty());
  clock_.Advance(absl::Milliseconds(1));
  ASSERT_EQ(results_.size(), 2u);
  EXPECT_EQ(results_["w1"]->members.size(), 2u);
}

TEST_F(RendezvousTest, LateJoinerInsideWindowIsIncluded) {
  Open(1, 4, absl::Seconds(2));
  Join("w1");
  clock_.Advance(absl::Seconds(1));
  Join("w2");
  clock_.Advance(absl::Seconds(1));
  ASSERT_EQ(results_.size(), 2u);
  EXPECT_EQ(results_["w2"]->members.size(), 2u);
}

TEST_F(RendezvousTest, JoinTimesOutBelowMin) {
  Open(3, 3, absl::ZeroDuration());
  Join("w1", absl::Seconds(5));
  clock_.Advance(absl::Seconds(5));
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_TRUE(absl::IsDeadlineExceeded(results_["w1"].status()));
  EXPECT_EQ(rdzv_.waiter_count(), 0u);
}

TEST_F(RendezvousTest, DeadMemberEndsGenerationAndSurvivorsFormNext) {
  Open(2, 3, absl::Seconds(1));
  Join("w1");
  Join("w2");
  Join("w3");
  ASSERT_TRUE(rdzv_.CheckMember("job", 1, 2).ok());
  EXPECT_TRUE(rdzv_.RemoveWorker("job", "w2", "lease expired"));
  EXPECT_EQ(ended_, std::vector<int64_t>{1});
  EXPECT_EQ(last_reason_, "lease expired");
  EXPECT_TRUE(absl::IsAborted(rdzv_.CheckMember("job", 1, 0)));
  results_.clear();
  Join("w1");
  EXPECT_TRUE(results_.empty());  // w3 is still expected.
  Join("w3");
  // Every member but the removed one is back: no last call.
  ASSERT_EQ(results_.size(), 2u);
  EXPECT_EQ(results_["w3"]->number, 2);
  EXPECT_EQ(results_["w3"]->members.size(), 2u);
  EXPECT_EQ(results_["w3"]->members[1].rank, 1);
  EXPECT_TRUE(rdzv_.CheckMember("job", 2, 1).ok());
  EXPECT_TRUE(absl::IsAborted(rdzv_.CheckMember("job", 1, 1)));
}

TEST_F(RendezvousTest,
       AMemberNeitherBackNorRemovedIsWaitedForUntilTheLastCall) {
  Open(2, 3, absl::Seconds(1));
  Join("w1");
  Join("w2");
  Join("w3");
  results_.clear();
  Join("w1");  // Its collective failed: it rejoins, which ends generation 1.
  EXPECT_EQ(ended_, std::vector<int64_t>{1});
  Join("w2");
  clock_.Advance(absl::Milliseconds(999));
  EXPECT_TRUE(results_.empty());  // w3 may still come back.
  clock_.Advance(absl::Milliseconds(1));
  ASSERT_EQ(results_.size(), 2u);
  EXPECT_EQ(results_["w1"]->members.size(), 2u);
}

TEST_F(RendezvousTest, AMemberRemovedAfterTheEndIsNoLongerWaitedFor) {
  Open(2, 3, absl::Seconds(30));
  Join("w1");
  Join("w2");
  Join("w3");
  results_.clear();
  Join("w1");
  Join("w2");
  EXPECT_TRUE(results_.empty());  // w3 may come back within the last call.
  EXPECT_FALSE(rdzv_.RemoveWorker("job", "w3", "gone"));  // Already ended.
  ASSERT_EQ(results_.size(), 2u);
  EXPECT_EQ(results_["w2"]->number, 2);
  EXPECT_EQ(results_["w2"]->members.size(), 2u);
  EXPECT_EQ(clock_.pending_timers(), 0u);  // The last call is disarmed.
}

TEST_F(RendezvousTest, CountsOnTheLiveMembersThenThoseNotBackYet) {
  Open(1, 3, absl::Seconds(30));
  Join("w1");
  Join("w2");
  clock_.Advance(absl::Seconds(30));
  ASSERT_EQ(formed_, std::vector<int64_t>{1});
  Join("w3");  // Waits for generation 2.
  EXPECT_TRUE(rdzv_.CountsOn("job", 1, "w1"));
  EXPECT_FALSE(rdzv_.CountsOn("job", 1, "w3"));  // Not a member.
  EXPECT_FALSE(rdzv_.CountsOn("job", 0, "w1"));  // Not that generation.
  EXPECT_FALSE(rdzv_.CountsOn("other", 1, "w1"));
  Join("w1");  // Ends generation 1; w2 is expected back.
  EXPECT_FALSE(rdzv_.CountsOn("job", 1, "w1"));  // Back already.
  EXPECT_TRUE(rdzv_.CountsOn("job", 1, "w2"));
  Join("w2");  // All back: generation 2 forms without the last call.
  EXPECT_EQ(formed_, (std::vector<int64_t>{1, 2}));
  EXPECT_FALSE(rdzv_.CountsOn("job", 1, "w2"));
  EXPECT_TRUE(rdzv_.CountsOn("job", 2, "w3"));
}

TEST_F(RendezvousTest, MemberRejoiningEndsItsGeneration) {
  Open(1, 2, absl::ZeroDuration());
  Join("w1");
  ASSERT_TRUE(results_["w1"].ok());
  Join("w1");  // It restarted.
  EXPECT_EQ(ended_, std::vector<int64_t>{1});
  EXPECT_EQ(results_["w1"]->number, 2);
}

TEST_F(RendezvousTest, JoinersWaitWhileGenerationIsLive) {
  Open(1, 2, absl::ZeroDuration());
  Join("w1");
  results_.clear();
  Join("w2");
  EXPECT_TRUE(results_.empty());
  EXPECT_TRUE(rdzv_.IsWaiting("job", "w2"));
}

TEST_F(RendezvousTest, CheckMemberCodes) {
  Open(1, 1, absl::ZeroDuration(), /*last_generation=*/6);
  EXPECT_TRUE(absl::IsFailedPrecondition(rdzv_.CheckMember("job", 7, 0)));
  Join("w1");
  EXPECT_EQ(results_["w1"]->number, 7);  // Numbering continues.
  EXPECT_TRUE(rdzv_.CheckMember("job", 7, 0).ok());
  EXPECT_TRUE(absl::IsInvalidArgument(rdzv_.CheckMember("job", 7, 1)));
  EXPECT_TRUE(absl::IsAborted(rdzv_.CheckMember("job", 3, 0)));
  EXPECT_TRUE(absl::IsFailedPrecondition(rdzv_.CheckMember("job", 9, 0)));
  EXPECT_TRUE(absl::IsNotFound(rdzv_.CheckMember("nope", 1, 0)));
  // No generation is numbered below 1: such a number is a bad request, not
  // an ended generation to rejoin from.
  for (int64_t bad : {int64_t{0}, int64_t{-1}, INT64_MIN}) {
    absl::Status s = rdzv_.CheckMember("job", bad, 0);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
    EXPECT_NE(s.message().find("generation must be >= 1"), std::string::npos);
  }
}

TEST_F(RendezvousTest, CloseFailsWaitersAndUnknownJobIsNotFound) {
  Open(2, 2, absl::ZeroDuration());
  Join("w1");
  rdzv_.CloseJob("job", absl::FailedPreconditionError("job cancelled"));
  EXPECT_TRUE(absl::IsFailedPrecondition(results_["w1"].status()));
  Join("w2");
  EXPECT_TRUE(absl::IsNotFound(results_["w2"].status()));
  EXPECT_EQ(clock_.pending_timers(), 0u);
}

TEST_F(RendezvousTest, RetriedJoinSupersedesTheFirst) {
  Open(2, 2, absl::ZeroDuration());
  std::optional<Result> first;
  rdzv_.Join("job", {"w1", "h", "a", -1}, clock_.Now() + absl::Seconds(9),
             [&](Result r) { first = std::move(r); });
  Join("w1");
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(absl::IsAborted(first->status()));
  EXPECT_EQ(rdzv_.waiter_count(), 1u);
}

TEST_F(RendezvousTest, RejectsBadConfig) {
  EXPECT_FALSE(rdzv_.OpenJob("a", {0, 1, absl::ZeroDuration()}, 0).ok());
  EXPECT_FALSE(rdzv_.OpenJob("a", {3, 2, absl::ZeroDuration()}, 0).ok());
  EXPECT_TRUE(rdzv_.OpenJob("a", {1, 2, absl::ZeroDuration()}, 0).ok());
  EXPECT_TRUE(absl::IsAlreadyExists(
      rdzv_.OpenJob("a", {1, 2, absl::ZeroDuration()}, 0)));
}

// ---- Below min_workers: the round's timeout ----

TEST_F(RendezvousTest, RoundBelowMinTimesOutWithTheCountInTheMessage) {
  ASSERT_TRUE(
      rdzv_.OpenJob("job", {2, 3, absl::Seconds(1), absl::Minutes(10)}, 0)
          .ok());
  clock_.Advance(absl::Hours(1));  // A job nobody joins is queued, not late.
  Join("w1", absl::Hours(2));
  clock_.Advance(absl::Minutes(10) - absl::Milliseconds(1));
  EXPECT_TRUE(results_.empty());
  EXPECT_TRUE(timed_out_.empty());
  clock_.Advance(absl::Milliseconds(1));
  const std::string want =
      "rendezvous timed out after 10m: 1 of min 2 workers joined";
  EXPECT_EQ(timed_out_, std::vector<std::string>{want});
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_TRUE(absl::IsDeadlineExceeded(results_["w1"].status()));
  EXPECT_EQ(results_["w1"].status().message(), want);
  EXPECT_EQ(rdzv_.waiter_count(), 0u);
  EXPECT_EQ(clock_.pending_timers(), 0u);
  // A late worker is told the same at once instead of waiting.
  Join("w2");
  EXPECT_TRUE(absl::IsDeadlineExceeded(results_["w2"].status()));
  EXPECT_EQ(results_["w2"].status().message(), want);
  EXPECT_TRUE(formed_.empty());
}

TEST_F(RendezvousTest, ReplacementBeforeTheTimeoutLetsTheJobGoOn) {
  ASSERT_TRUE(
      rdzv_.OpenJob("job", {2, 2, absl::ZeroDuration(), absl::Seconds(30)}, 0)
          .ok());
  Join("w1");
  Join("w2");
  ASSERT_EQ(formed_, std::vector<int64_t>{1});
  EXPECT_TRUE(rdzv_.RemoveWorker("job", "w2", "lease expired"));
  results_.clear();
  Join("w1");
  clock_.Advance(absl::Seconds(29));
  EXPECT_TRUE(results_.empty());
  Join("w3");  // The replacement.
  ASSERT_EQ(results_.size(), 2u);
  EXPECT_EQ(results_["w3"]->number, 2);
  clock_.Advance(absl::Minutes(5));
  EXPECT_TRUE(timed_out_.empty());
  EXPECT_TRUE(rdzv_.CheckMember("job", 2, 1).ok());
}

TEST_F(RendezvousTest, RoundAfterAFailureCountsFromTheEnd) {
  ASSERT_TRUE(
      rdzv_.OpenJob("job", {2, 2, absl::ZeroDuration(), absl::Seconds(30)}, 0)
          .ok());
  Join("w1");
  Join("w2");
  clock_.Advance(absl::Minutes(3));  // Training; no round runs.
  EXPECT_TRUE(rdzv_.RemoveWorker("job", "w2", "lease expired"));
  clock_.Advance(absl::Seconds(10));
  Join("w1");  // The survivor is back; nobody replaces w2.
  clock_.Advance(absl::Seconds(20));
  EXPECT_EQ(timed_out_,
            std::vector<std::string>{
                "rendezvous timed out after 30s: 1 of min 2 workers joined"});
  EXPECT_TRUE(absl::IsDeadlineExceeded(results_["w1"].status()));
}

TEST_F(RendezvousTest, EveryoneGoneAfterAFailureStillTimesOut) {
  ASSERT_TRUE(
      rdzv_.OpenJob("job", {1, 1, absl::ZeroDuration(), absl::Seconds(30)}, 0)
          .ok());
  Join("w1");
  EXPECT_TRUE(rdzv_.RemoveWorker("job", "w1", "lease expired"));
  clock_.Advance(absl::Seconds(30));
  EXPECT_EQ(timed_out_,
            std::vector<std::string>{
                "rendezvous timed out after 30s: 0 of min 1 workers joined"});
}

// ---- Scale-up: Grow() ----

class GrowTest : public RendezvousTest {
 protected:
  // Generation 1 of w1 and w2 (min 2, max 3); w3 waits for the next one.
  void SetUp() override {
    RendezvousTest::SetUp();
    ASSERT_TRUE(
        rdzv_.OpenJob("job", {2, 3, absl::ZeroDuration(), absl::Seconds(60)}, 0)
            .ok());
    Join("w1");
    Join("w2");
    ASSERT_EQ(formed_, std::vector<int64_t>{1});
    results_.clear();
    Join("w3", absl::Minutes(10));
    ASSERT_TRUE(results_.empty());
  }
};

TEST_F(GrowTest, EndsASmallGenerationAsAResizeNotAFailure) {
  EXPECT_FALSE(rdzv_.Grow("job", 2));  // Not the live generation.
  EXPECT_TRUE(rdzv_.Grow("job", 1));
  EXPECT_EQ(resized_, std::vector<int64_t>{1});
  EXPECT_TRUE(ended_.empty());
  EXPECT_NE(last_reason_.find("scale-up: 1 worker(s) waiting"),
            std::string::npos)
      << last_reason_;
  EXPECT_TRUE(absl::IsAborted(rdzv_.CheckMember("job", 1, 0)));
  EXPECT_FALSE(rdzv_.Grow("job", 1));  // Already ended.
  // The next generation waits for both members to come back, then holds all
  // three, ranked by worker id.
  Join("w2");
  EXPECT_TRUE(results_.empty());
  Join("w1");
  ASSERT_EQ(results_.size(), 3u);
  for (const auto& [w, r] : results_) {
    ASSERT_TRUE(r.ok()) << w << ": " << r.status();
    EXPECT_EQ(r->number, 2);
    ASSERT_EQ(r->members.size(), 3u);
    EXPECT_EQ(r->members[2].worker_id, "w3");
  }
  EXPECT_EQ(clock_.pending_timers(), 0u);
}

TEST_F(GrowTest, NothingToGrowFor) {
  EXPECT_FALSE(rdzv_.RemoveWorker("job", "w3", "left"));  // Only a waiter.
  EXPECT_TRUE(ended_.empty());
  EXPECT_FALSE(rdzv_.Grow("job", 1));  // Nobody waits.
  EXPECT_TRUE(rdzv_.CheckMember("job", 1, 1).ok());
}

TEST_F(GrowTest, AtMaxWorkersThereIsNoScaleUp) {
  ASSERT_TRUE(
      rdzv_.OpenJob("full", {1, 1, absl::ZeroDuration(), absl::Seconds(60)}, 0)
          .ok());
  std::vector<Result> got;
  for (const char* w : {"a", "b"}) {
    rdzv_.Join("full", {w, "h", "addr", -1}, clock_.Now() + absl::Minutes(1),
               [&](Result r) { got.push_back(std::move(r)); });
  }
  ASSERT_EQ(got.size(), 1u);  // "b" waits.
  EXPECT_FALSE(rdzv_.Grow("full", 1));
  EXPECT_TRUE(rdzv_.CheckMember("full", 1, 0).ok());
}

TEST_F(GrowTest, AMemberThatDoesNotComeBackIsRemovedAndTheRestForm) {
  ASSERT_TRUE(rdzv_.Grow("job", 1));
  Join("w1");
  EXPECT_TRUE(results_.empty());
  EXPECT_FALSE(rdzv_.RemoveWorker("job", "w2", "lease expired"));
  ASSERT_EQ(results_.size(), 2u);
  EXPECT_EQ(results_["w1"]->number, 2);
  EXPECT_EQ(results_["w1"]->members.size(), 2u);
  EXPECT_TRUE(ended_.empty());  // No generation of its was live.
}

TEST_F(GrowTest, AtTheRoundTimeoutThoseBackFormIfEnough) {
  ASSERT_TRUE(rdzv_.Grow("job", 1));
  Join("w1", absl::Minutes(5));
  clock_.Advance(absl::Seconds(59));
  EXPECT_TRUE(results_.empty());
  clock_.Advance(absl::Seconds(1));
  ASSERT_EQ(results_.size(), 2u);
  EXPECT_EQ(results_["w3"]->members.size(), 2u);
  EXPECT_TRUE(timed_out_.empty());
}

TEST_F(RendezvousTest, CancelledJoinNoLongerCountsTowardTheGeneration) {
  Open(2, 2, absl::ZeroDuration());
  const uint64_t id = Join("w1");
  ASSERT_NE(id, 0u);
  rdzv_.CancelJoin("job", "w1", id);
  ASSERT_EQ(results_.count("w1"), 1u);
  EXPECT_TRUE(absl::IsCancelled(results_["w1"].status()));
  EXPECT_FALSE(rdzv_.IsWaiting("job", "w1"));
  EXPECT_EQ(rdzv_.waiter_count(), 0u);
  // A second worker does not form a generation with the one that left.
  results_.clear();
  Join("w2");
  EXPECT_TRUE(formed_.empty());
  EXPECT_EQ(results_.count("w2"), 0u);
  // w1 comes back and both get the generation.
  EXPECT_EQ(Join("w1"), 0u);
  ASSERT_EQ(formed_.size(), 1u);
  EXPECT_TRUE(results_["w1"].ok() && results_["w2"].ok());
  // A stale cancel (the first call's id) touches nothing.
  rdzv_.CancelJoin("job", "w1", id);
  EXPECT_TRUE(results_["w1"].ok());
}

TEST_F(RendezvousTest, ManyCancelledJoinsLeaveNoWaiters) {
  Open(200, 200, absl::ZeroDuration());
  std::vector<std::pair<std::string, uint64_t>> joins;
  for (int i = 0; i < 100; ++i) {
    const std::string w = "w" + std::to_string(i);
    joins.emplace_back(w, Join(w));
  }
  EXPECT_EQ(rdzv_.waiter_count(), 100u);
  for (const auto& [w, id] : joins) rdzv_.CancelJoin("job", w, id);
  EXPECT_TRUE(rdzv_.AwaitWaitersBetween(0, 0, absl::ZeroDuration()));
  for (const auto& [w, id] : joins) {
    EXPECT_TRUE(absl::IsCancelled(results_[w].status())) << w;
  }
}

// ---- A generation that trained to its last step (issue 31) ----

class FinishingRendezvousTest : public RendezvousTest {
 protected:
  void SetUp() override {
    RendezvousTest::SetUp();
    rdzv_.SetGoneHook([this](const std::string&, int64_t, int32_t rank,
                             const std::string& worker, const std::string&) {
      gone_.push_back(rank);
      gone_workers_.push_back(worker);
    });
    Open(3, 3, absl::Seconds(5));
    for (const char* w : {"w1", "w2", "w3"}) Join(w);
    ASSERT_EQ(formed_.size(), 1u);
  }
  std::vector<int32_t> gone_;
  std::vector<std::string> gone_workers_;
};

TEST_F(FinishingRendezvousTest, StagesOnlyMoveForwardForTheLiveGeneration) {
  EXPECT_EQ(rdzv_.StageOf("job"), Rendezvous::Stage::kTraining);
  rdzv_.Advance("job", 2, Rendezvous::Stage::kTrained);  // Not live.
  EXPECT_EQ(rdzv_.StageOf("job"), Rendezvous::Stage::kTraining);
  rdzv_.Advance("job", 1, Rendezvous::Stage::kFinishing);
  rdzv_.Advance("job", 1, Rendezvous::Stage::kTrained);
  EXPECT_EQ(rdzv_.StageOf("job"), Rendezvous::Stage::kFinishing);
  EXPECT_TRUE(rdzv_.IsLiveMember("job", "w2"));
  EXPECT_FALSE(rdzv_.IsLiveMember("job", "w4"));
}

TEST_F(FinishingRendezvousTest, ATrainedGenerationOutlivesAMemberJudgedGone) {
  rdzv_.Advance("job", 1, Rendezvous::Stage::kTrained);
  EXPECT_FALSE(rdzv_.RemoveWorker("job", "w2", "lease"));
  EXPECT_TRUE(ended_.empty());
  EXPECT_EQ(gone_, std::vector<int32_t>{1});
  EXPECT_EQ(gone_workers_, std::vector<std::string>{"w2"});
  EXPECT_TRUE(rdzv_.CheckMember("job", 1, 0).ok());
  // Back (its process registered again): no longer gone.
  EXPECT_EQ(rdzv_.Returned("job", "w2"), 1);
  EXPECT_EQ(rdzv_.Returned("job", "w2"), -1);
  // A member whose collective failed joins again: that still ends it, so
  // that a new generation evaluates from the members' memory.
  Join("w1");
  EXPECT_EQ(ended_, std::vector<int64_t>{1});
}

TEST_F(FinishingRendezvousTest, EveryMemberGoneEndsIt) {
  rdzv_.Advance("job", 1, Rendezvous::Stage::kTrained);
  EXPECT_FALSE(rdzv_.RemoveWorker("job", "w1", "gone"));
  EXPECT_FALSE(rdzv_.RemoveWorker("job", "w2", "gone"));
  EXPECT_TRUE(rdzv_.RemoveWorker("job", "w3", "gone"));
  EXPECT_EQ(ended_, std::vector<int64_t>{1});
  EXPECT_NE(last_reason_.find("every member is gone"), std::string::npos)
      << last_reason_;
}

TEST_F(FinishingRendezvousTest, AJoinOfAFinishingMemberIsRefused) {
  rdzv_.Advance("job", 1, Rendezvous::Stage::kFinishing);
  EXPECT_EQ(Join("w3"), 0u);
  ASSERT_EQ(results_.count("w3"), 1u);
  EXPECT_TRUE(absl::IsFailedPrecondition(results_["w3"].status()))
      << results_["w3"].status();
  EXPECT_TRUE(ended_.empty());
  EXPECT_EQ(gone_, std::vector<int32_t>{2});
  EXPECT_FALSE(rdzv_.IsWaiting("job", "w3"));
}

TEST_F(FinishingRendezvousTest, ATrainedGenerationDoesNotGrow) {
  rdzv_.Advance("job", 1, Rendezvous::Stage::kTrained);
  ASSERT_TRUE(rdzv_.OpenJob("job2", {1, 2, absl::ZeroDuration()}, 0).ok());
  rdzv_.Join("job2", {"a", "h", "addr", -1}, clock_.Now() + absl::Seconds(9),
             [](Result) {});
  rdzv_.Advance("job2", 1, Rendezvous::Stage::kTrained);
  rdzv_.Join("job2", {"b", "h", "addr", -1}, clock_.Now() + absl::Seconds(9),
             [](Result) {});
  EXPECT_FALSE(rdzv_.WantsToGrow("job2", 1));
  EXPECT_FALSE(rdzv_.Grow("job2", 1));
}

}  // namespace
}  // namespace ringleader
