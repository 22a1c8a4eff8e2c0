// StallWatch (coordinator/stall_watch.h): which rank the others wait for,
// from the members' heartbeats, on the fake clock; and StallSweep, which
// publishes a verdict only when it appears, changes or goes.
#include "coordinator/stall_watch.h"

#include <optional>
#include <string>
#include <vector>

#include "common/fake_clock.h"
#include "common/waiting_for_line.h"
#include "coordinator/stall_sweep.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

constexpr char kJob[] = "job-1";

Rendezvous::Generation ThreeRanks(int64_t number) {
  Rendezvous::Generation g;
  g.number = number;
  for (int r = 0; r < 3; ++r) {
    Rendezvous::Member m;
    m.worker_id = "w" + std::to_string(r);
    m.hostname = "h" + std::to_string(r + 1);
    m.rank = r;
    g.members.push_back(m);
  }
  return g;
}

// A heartbeat of rank `rank` of generation 1.
v1::HeartbeatRequest Beat(int rank, v1::WorkerPhase phase, int64_t phase_ms,
                          int64_t step, int64_t wait_ms,
                          int64_t step_time_ms = 20) {
  v1::HeartbeatRequest r;
  r.set_worker_id("w" + std::to_string(rank));
  r.set_job_id(kJob);
  r.set_generation(1);
  r.set_phase(phase);
  r.set_phase_ms(phase_ms);
  r.set_phase_step(step);
  r.set_collective_wait_ms(wait_ms);
  r.set_step_time_ms(step_time_ms);
  if (phase == v1::WORKER_PHASE_ALLREDUCE_WAIT) r.set_phase_bucket(2);
  return r;
}

class StallWatchTest : public ::testing::Test {
 protected:
  StallWatchTest() : stalls_(Options()) {
    stalls_.StartGeneration(kJob, ThreeRanks(1), clock_.Now());
  }
  static StallWatch::Options Options() {
    StallWatch::Options o;
    o.floor = absl::Seconds(1);
    o.silent_after = absl::Seconds(2);
    return o;
  }
  // Ranks 0 and 2 blocked in the all-reduce of step 7 for `wait_ms`, rank 1
  // loading its data for as long.
  void OneRankLoadsData(int64_t wait_ms) {
    stalls_.Heard(Beat(0, v1::WORKER_PHASE_ALLREDUCE_WAIT, wait_ms, 7, wait_ms),
                  clock_.Now());
    stalls_.Heard(Beat(1, v1::WORKER_PHASE_DATA_LOADING, wait_ms + 100, 7, 0),
                  clock_.Now());
    stalls_.Heard(
        Beat(2, v1::WORKER_PHASE_ALLREDUCE_WAIT, wait_ms - 50, 7, wait_ms - 50),
        clock_.Now());
  }

  FakeClock clock_;
  StallWatch stalls_;
};

TEST_F(StallWatchTest, NothingWhileEveryWaitIsUnderTheThreshold) {
  OneRankLoadsData(900);
  EXPECT_FALSE(stalls_.Judge(kJob, clock_.Now()).has_value());
  EXPECT_FALSE(stalls_.Judge("other-job", clock_.Now()).has_value());
}

TEST_F(StallWatchTest, NamesTheRankNotInTheCollectiveWithItsHostAndPhase) {
  OneRankLoadsData(900);
  // No heartbeat for 300 ms: the waits and the phase are extrapolated.
  clock_.Advance(absl::Milliseconds(300));
  std::optional<v1::WaitingFor> w = stalls_.Judge(kJob, clock_.Now());
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->rank(), 1);
  EXPECT_EQ(w->worker_id(), "w1");
  EXPECT_EQ(w->host(), "h2");
  EXPECT_EQ(w->phase(), v1::WORKER_PHASE_DATA_LOADING);
  EXPECT_EQ(w->phase_ms(), 1300);
  EXPECT_EQ(w->silent_ms(), 0);
  EXPECT_EQ(w->waited_ms(), 1200);
  EXPECT_EQ(w->wait_phase(), v1::WORKER_PHASE_ALLREDUCE_WAIT);
  EXPECT_EQ(w->step(), 7);
  EXPECT_EQ(w->bucket(), 2);
  EXPECT_EQ(w->waiting_ranks(), 2);
  EXPECT_EQ(w->threshold_ms(), 1000);
  v1::Job job;
  *job.mutable_waiting_for() = *w;
  EXPECT_EQ(WaitingForLine(job),
            "waiting 1.2 s in all-reduce of step 7 for rank 1 (host h2): "
            "data loading for 1.3 s");
}

TEST_F(StallWatchTest, TheThresholdIsThreeMedianStepTimesAboveTheFloor) {
  // Steps of 500 ms: 1.5 s, not the 1 s floor.
  for (int r = 0; r < 3; ++r) {
    stalls_.Heard(Beat(r,
                       r == 1 ? v1::WORKER_PHASE_FORWARD
                              : v1::WORKER_PHASE_ALLREDUCE_WAIT,
                       1400, 3, r == 1 ? 0 : 1400, /*step_time_ms=*/500),
                  clock_.Now());
  }
  EXPECT_FALSE(stalls_.Judge(kJob, clock_.Now()).has_value());
  clock_.Advance(absl::Milliseconds(100));
  std::optional<v1::WaitingFor> w = stalls_.Judge(kJob, clock_.Now());
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->threshold_ms(), 1500);
  EXPECT_EQ(w->rank(), 1);
  EXPECT_EQ(w->phase(), v1::WORKER_PHASE_FORWARD);
}

TEST_F(StallWatchTest, ASilentRankIsNamedWithWhereItWasLastSeen) {
  // Rank 2 was in its forward when its heartbeats stopped; the others keep
  // beating, blocked.
  stalls_.Heard(Beat(2, v1::WORKER_PHASE_FORWARD, 5, 9, 0), clock_.Now());
  for (int i = 1; i <= 30; ++i) {
    clock_.Advance(absl::Milliseconds(100));
    for (int r = 0; r < 2; ++r) {
      stalls_.Heard(
          Beat(r, v1::WORKER_PHASE_ALLREDUCE_WAIT, i * 100, 9, i * 100),
          clock_.Now());
    }
  }
  std::optional<v1::WaitingFor> w = stalls_.Judge(kJob, clock_.Now());
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->rank(), 2);
  EXPECT_EQ(w->silent_ms(), 3000);
  EXPECT_EQ(w->phase(), v1::WORKER_PHASE_FORWARD);
  v1::Job job;
  *job.mutable_waiting_for() = *w;
  EXPECT_EQ(WaitingForLine(job),
            "waiting 3.0 s in all-reduce of step 9 for rank 2 (host h3): no "
            "heartbeat for 3.0 s, last seen in forward");
}

TEST_F(StallWatchTest, ARankSilentSinceItJoinedWasLastSeenInRendezvous) {
  clock_.Advance(absl::Seconds(3));
  for (int r = 0; r < 2; ++r) {
    stalls_.Heard(Beat(r, v1::WORKER_PHASE_ALLREDUCE_WAIT, 1500, 1, 1500),
                  clock_.Now());
  }
  std::optional<v1::WaitingFor> w = stalls_.Judge(kJob, clock_.Now());
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->rank(), 2);
  EXPECT_EQ(w->silent_ms(), 3000);
  EXPECT_EQ(w->phase(), v1::WORKER_PHASE_RENDEZVOUS);
}

TEST_F(StallWatchTest, EveryRankBlockedNamesTheLastToEnter) {
  stalls_.Heard(Beat(0, v1::WORKER_PHASE_BUFFER_SYNC, 3000, 4, 3000),
                clock_.Now());
  stalls_.Heard(Beat(1, v1::WORKER_PHASE_BUFFER_SYNC, 2000, 4, 2000),
                clock_.Now());
  stalls_.Heard(Beat(2, v1::WORKER_PHASE_ALLREDUCE_WAIT, 1500, 4, 1500),
                clock_.Now());
  std::optional<v1::WaitingFor> w = stalls_.Judge(kJob, clock_.Now());
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->rank(), 2);
  EXPECT_EQ(w->wait_phase(), v1::WORKER_PHASE_BUFFER_SYNC);
  EXPECT_EQ(w->waiting_ranks(), 3);
}

TEST_F(StallWatchTest, HeartbeatsOfAnotherGenerationOrJobAreIgnored) {
  v1::HeartbeatRequest old = Beat(1, v1::WORKER_PHASE_DATA_LOADING, 9000, 7, 0);
  old.set_generation(0);
  stalls_.Heard(old, clock_.Now());
  v1::HeartbeatRequest stranger =
      Beat(0, v1::WORKER_PHASE_ALLREDUCE_WAIT, 9000, 7, 9000);
  stranger.set_job_id("other-job");
  stalls_.Heard(stranger, clock_.Now());
  EXPECT_FALSE(stalls_.Judge(kJob, clock_.Now()).has_value());
}

TEST_F(StallWatchTest, ChangesPublishAppearanceChangeAndEndOnlyOnce) {
  std::vector<std::string> published;
  StallSweep sweep(stalls_, &clock_, &clock_, absl::Milliseconds(200),
                   [&](const std::string& job, const v1::WaitingFor* w) {
                     v1::Job j;
                     if (w != nullptr) *j.mutable_waiting_for() = *w;
                     published.push_back(job + ": " + WaitingForLine(j));
                   });
  sweep.Start();
  OneRankLoadsData(1500);
  clock_.Advance(absl::Seconds(1));  // Five sweeps, one verdict.
  ASSERT_EQ(published.size(), 1u);
  // As the first sweep, 200 ms after the heartbeats, saw it.
  EXPECT_EQ(published[0],
            "job-1: waiting 1.7 s in all-reduce of step 7 for rank 1 (host "
            "h2): data loading for 1.8 s");
  // Rank 1 moves on to its forward, still holding the others.
  stalls_.Heard(Beat(1, v1::WORKER_PHASE_FORWARD, 10, 7, 0), clock_.Now());
  clock_.Advance(absl::Milliseconds(400));
  ASSERT_EQ(published.size(), 2u);
  EXPECT_NE(published[1].find("forward for 0.2 s"), std::string::npos)
      << published[1];
  // The collective completes: every rank reports no wait.
  for (int r = 0; r < 3; ++r) {
    stalls_.Heard(Beat(r, v1::WORKER_PHASE_BACKWARD, 5, 8, 0), clock_.Now());
  }
  clock_.Advance(absl::Milliseconds(400));
  ASSERT_EQ(published.size(), 3u);
  EXPECT_EQ(published[2], "job-1: ");
  // A generation that ends with a verdict out takes it along.
  OneRankLoadsData(5000);
  clock_.Advance(absl::Milliseconds(200));
  ASSERT_EQ(published.size(), 4u);
  stalls_.EndGeneration(kJob, 1);
  clock_.Advance(absl::Milliseconds(200));
  ASSERT_EQ(published.size(), 5u);
  EXPECT_EQ(published[4], "job-1: ");
  sweep.Stop();
}

TEST_F(StallWatchTest, ANewerGenerationIsNotReplacedByAnOlderOne) {
  stalls_.StartGeneration(kJob, ThreeRanks(3), clock_.Now());
  stalls_.StartGeneration(kJob, ThreeRanks(2), clock_.Now());
  stalls_.EndGeneration(kJob, 2);
  v1::HeartbeatRequest b =
      Beat(0, v1::WORKER_PHASE_ALLREDUCE_WAIT, 4000, 7, 4000);
  b.set_generation(3);
  stalls_.Heard(b, clock_.Now());
  std::optional<v1::WaitingFor> w = stalls_.Judge(kJob, clock_.Now());
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->waiting_ranks(), 1);
}

}  // namespace
}  // namespace ringleader
