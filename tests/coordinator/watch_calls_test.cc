#include "coordinator/watch_calls.h"

#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/coordinator_managers.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

using Event = absl::StatusOr<v1::GenerationEvent>;

class WatchCallsTest : public testing::CoordinatorManagersTest {
 protected:
  void SetUp() override {
    v1::JobSpec spec = testing::MinimalJobSpec("watch", 2, 2);
    spec.set_max_restarts(3);  // An ended generation leaves the job live.
    job_ = Submit(spec);
    members_ = {Register(), Register()};
    Form(job_, members_);
    calls_.Start();
  }

  v1::WatchGenerationRequest Request(const Worker& w, int64_t generation = 1) {
    v1::WatchGenerationRequest r;
    r.set_worker_id(w.id);
    r.set_job_id(job_);
    r.set_generation(generation);
    return r;
  }

  // A watch of `w`; its answer lands in events_[w.id].
  Canceller Watch(const Worker& w, int64_t generation = 1) {
    return calls_.WatchGeneration(
        w.caller, Request(w, generation),
        [this, id = w.id](Event e) { events_[id] = std::move(e); });
  }

  // `w`'s heartbeats came over `peer` (only) just now.
  Caller HeardOver(const Worker& w, const std::string& peer) {
    connections_.Heard(w.id, peer, clock_.Now());
    Caller c = w.caller;
    c.peer_address = peer;
    return c;
  }

  CallerChecks checks_{workers_, rendezvous_, jobs_};
  GenerationWatchers watchers_;
  HeartbeatConnections connections_;
  std::vector<std::string> gone_;
  WatchCalls calls_{checks_,
                    workers_,
                    rendezvous_,
                    jobs_,
                    watchers_,
                    connections_,
                    &clock_,
                    {kLease, true},
                    [this](const v1::WorkerInfo& w, const std::string&) {
                      gone_.push_back(w.worker_id());
                    }};
  std::string job_;
  std::vector<Worker> members_;
  std::map<std::string, Event> events_;
};

TEST_F(WatchCallsTest, AWatchWaitsAndItsCancellerWithdrawsIt) {
  Canceller cancel = Watch(members_[0]);
  ASSERT_NE(cancel, nullptr);
  EXPECT_TRUE(events_.empty());
  EXPECT_EQ(watchers_.Size(), 1);
  cancel();
  EXPECT_EQ(watchers_.Size(), 0);
  EXPECT_TRUE(events_.empty());  // Withdrawn, not answered.
}

TEST_F(WatchCallsTest, AGenerationThatEndedIsAnsweredAtOnce) {
  rendezvous_.RemoveWorker(job_, members_[1].id, "gone");
  Watch(members_[0]);
  ASSERT_TRUE(events_[members_[0].id].ok()) << events_[members_[0].id].status();
  EXPECT_TRUE(events_[members_[0].id]->ended().rejoin());
}

TEST_F(WatchCallsTest, AFinishedJobIsAnsweredWithoutRejoin) {
  ASSERT_TRUE(jobs_.Cancel(job_).ok());
  // The worker is still assigned to it until its next heartbeat.
  Watch(members_[0]);
  ASSERT_TRUE(events_[members_[0].id].ok()) << events_[members_[0].id].status();
  EXPECT_FALSE(events_[members_[0].id]->ended().rejoin());
}

TEST_F(WatchCallsTest, BadWatchesAreRefusedAsHeartbeatsAre) {
  Watch(members_[0], 0);
  EXPECT_TRUE(absl::IsInvalidArgument(events_[members_[0].id].status()));
  Watch(members_[0], 2);  // Not formed yet.
  EXPECT_TRUE(absl::IsFailedPrecondition(events_[members_[0].id].status()));
  const Worker idle = Register();
  Watch(idle);
  EXPECT_TRUE(absl::IsFailedPrecondition(events_[idle.id].status()));
  Event stranger;
  calls_.WatchGeneration(Caller(), Request(members_[1]),
                         [&](Event e) { stranger = std::move(e); });
  EXPECT_TRUE(absl::IsUnauthenticated(stranger.status()));
}

TEST_F(WatchCallsTest, OffTheCallIsUnimplemented) {
  WatchCalls off{checks_,      workers_, rendezvous_,     jobs_,  watchers_,
                 connections_, &clock_,  {kLease, false}, nullptr};
  Event out;
  EXPECT_EQ(off.WatchGeneration(members_[0].caller, Request(members_[0]),
                                [&](Event e) { out = std::move(e); }),
            nullptr);
  EXPECT_TRUE(absl::IsUnimplemented(out.status()));
}

TEST_F(WatchCallsTest, AStreamClosedWithItsProcessMakesTheWorkerGone) {
  const Caller over = HeardOver(members_[0], "ipv4:10.0.0.1:1");
  Watch(members_[0]);
  calls_.WatchBroken(over, Request(members_[0]));
  EXPECT_EQ(gone_, std::vector<std::string>{members_[0].id});
  EXPECT_TRUE(absl::IsNotFound(workers_.Get(members_[0].id).status()));
}

TEST_F(WatchCallsTest, AStreamOfAnotherConnectionSaysNothing) {
  // The worker replaced its channel after a partition: heard over both.
  const Caller old_one = HeardOver(members_[0], "ipv4:10.0.0.1:1");
  HeardOver(members_[0], "ipv4:10.0.0.1:2");
  calls_.WatchBroken(old_one, Request(members_[0]));
  // Not heard within its lease: a partition, left to the lease.
  const Caller silent = HeardOver(members_[1], "ipv4:10.0.0.2:1");
  clock_.Advance(kLease + absl::Seconds(1));
  calls_.WatchBroken(silent, Request(members_[1]));
  EXPECT_TRUE(gone_.empty());
}

TEST_F(WatchCallsTest, AStoppingCoordinatorJudgesNoStream) {
  const Caller over = HeardOver(members_[0], "ipv4:10.0.0.1:1");
  Watch(members_[0]);
  calls_.Stop(absl::UnavailableError("stopping"));
  EXPECT_TRUE(absl::IsUnavailable(events_[members_[0].id].status()));
  calls_.WatchBroken(over, Request(members_[0]));
  EXPECT_TRUE(gone_.empty());
}

}  // namespace
}  // namespace ringleader
