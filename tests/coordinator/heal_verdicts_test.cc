// Verdicts after a heal (issue 31): a job whose every rank trained to the
// end is never lost to what arrives after a partition, whatever the order.
// Through the Coordinator on a FakeClock, with the delivery order injected:
// heartbeats over named connections (a worker that went through a
// partition replaced its channel, and a heartbeat held back on the old one
// can arrive after one on the new), the old connection's watch stream
// closing, leases lapsing, the same process registering again, final
// reports before and after the heal, reports held back by the cut that
// arrive after newer ones, and a finished rank's stale join.
// Each case failed on the code before these rules (the job restarted, or
// was lost), except where a comment says it guards what held already.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/testing/fake_clock_coordinator.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

constexpr absl::Duration kLease = absl::Seconds(3);
constexpr absl::Duration kSilentMember = absl::Seconds(30);
constexpr int64_t kTotalSteps = 100;
constexpr int kWorld = 3;

class HealVerdictsTest : public testing::FakeClockCoordinatorTest {
 protected:
  CoordinatorOptions Options() const override {
    CoordinatorOptions o;
    o.lease = kLease;
    o.heartbeat_interval = absl::Seconds(1);
    o.silent_member_limit = kSilentMember;
    o.silent_generation_limit = absl::Minutes(5);
    return o;
  }

  // Generation 1 of a 3-rank job, each rank's first report in (so the
  // plan's length is known), every worker heartbeating over its first
  // connection ("old-<i>").
  void SetUp() override {
    FakeClockCoordinatorTest::SetUp();
    v1::JobSpec spec = testing::MinimalJobSpec("heal", kWorld, kWorld);
    spec.set_max_restarts(3);
    job_ = Submit(spec);
    for (int i = 0; i < kWorld; ++i) w_.push_back(AddWorker(job_));
    for (const std::string& id : w_) Join(job_, id);
    ASSERT_TRUE(joined_[w_[0]].ok()) << joined_[w_[0]].status();
    ASSERT_EQ(Job(job_).state(), v1::JOB_STATE_RUNNING);
    for (int rank = 0; rank < kWorld; ++rank) {
      ASSERT_EQ(joined_[w_[rank]]->rank(), rank);
      ASSERT_TRUE(Progress(rank, 10).ok());
      Beat(rank, "old", 10);
    }
  }

  Caller Over(const std::string& connection) const {
    Caller c = workers_caller_;
    c.peer_address = connection;
    return c;
  }

  // A heartbeat of rank `rank`'s worker over connection "<conn>-<rank>",
  // in generation 1 at `step` (gen 0 and no job: idle, its part done).
  v1::HeartbeatResponse Beat(int rank, const std::string& conn, int64_t step,
                             bool idle = false) {
    v1::HeartbeatRequest r;
    r.set_worker_id(w_[rank]);
    if (!idle) {
      r.set_job_id(job_);
      r.set_generation(1);
      r.set_step(step);
    }
    absl::StatusOr<v1::HeartbeatResponse> out =
        coordinator_->worker_calls().Heartbeat(
            Over(absl::StrCat(conn, "-", rank)), r);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? *out : v1::HeartbeatResponse();
  }

  absl::Status Progress(int rank, int64_t step, bool finished = false) {
    v1::ReportProgressRequest r;
    r.set_job_id(job_);
    r.set_generation(1);
    r.set_rank(rank);
    r.set_step(step);
    r.set_total_steps(kTotalSteps);
    r.set_loss(0.5);
    r.set_finished(finished);
    if (finished) {
      r.set_epoch(0);
      r.set_test_correct(80 + rank);
      r.set_test_samples(100);
    }
    return coordinator_->training_calls().ReportProgress(workers_caller_, r);
  }
  absl::Status Final(int rank) { return Progress(rank, kTotalSteps, true); }

  // The watch stream of rank `rank`'s worker on connection
  // "<conn>-<rank>" went away.
  void StreamCloses(int rank, const std::string& conn) {
    v1::WatchGenerationRequest r;
    r.set_worker_id(w_[rank]);
    r.set_job_id(job_);
    r.set_generation(1);
    coordinator_->watch_calls().WatchBroken(Over(absl::StrCat(conn, "-", rank)),
                                            r);
  }

  // The coordinator hears nobody for `d` (its own link is cut), sweeping
  // its leases every 200 ms as its timer would.
  void Cut(absl::Duration d) {
    for (absl::Duration t; t < d; t += absl::Milliseconds(200)) {
      clock_.Advance(absl::Milliseconds(200));
      coordinator_->lease_sweep().Sweep();
    }
  }

  // The heal as the trace had it: every rank trained to the last
  // step during the cut; ranks 0 and 1 come back over new connections, and
  // rank 2 too, but a heartbeat it sent during the cut, held back on its
  // old connection, arrives last.
  void Heal() {
    Beat(0, "new", kTotalSteps);
    Beat(1, "new", kTotalSteps);
    Beat(2, "new", kTotalSteps);
    Beat(2, "old", kTotalSteps - 7);
    coordinator_->lease_sweep().Sweep();
  }

  void ExpectSucceededWithEveryRank() {
    const v1::Job job = Job(job_);
    EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED) << job.message();
    EXPECT_EQ(job.restarts(), 0) << job.message();
    EXPECT_EQ(job.generation(), 1);
    EXPECT_EQ(job.message(), "all ranks finished");
    EXPECT_TRUE(job.progress().has_final_metrics());
    EXPECT_DOUBLE_EQ(job.progress().test_accuracy(), (80 + 81 + 82) / 300.0);
  }

  std::string job_;
  std::vector<std::string> w_;  // By rank.
};

TEST_F(HealVerdictsTest, OldStreamClosingBeforeTheFinalReportsEndsNothing) {
  Cut(absl::Seconds(10));
  Heal();
  StreamCloses(2, "old");
  EXPECT_EQ(Job(job_).state(), v1::JOB_STATE_RUNNING);
  for (int rank = 0; rank < kWorld; ++rank) {
    ASSERT_TRUE(Final(rank).ok()) << Final(rank);
  }
  ExpectSucceededWithEveryRank();
}

TEST_F(HealVerdictsTest, OldStreamClosingBetweenTheFinalReportsEndsNothing) {
  Cut(absl::Seconds(10));
  Heal();
  ASSERT_TRUE(Final(0).ok());
  StreamCloses(2, "old");
  ASSERT_TRUE(Final(1).ok());
  ASSERT_TRUE(Final(2).ok()) << Final(2);
  ExpectSucceededWithEveryRank();
}

TEST_F(HealVerdictsTest, OldStreamClosingAfterTheOthersReportedEndsNothing) {
  Cut(absl::Seconds(10));
  Heal();
  ASSERT_TRUE(Final(0).ok());
  ASSERT_TRUE(Final(1).ok());
  // Their daemons go idle and heartbeat as such.
  Beat(0, "new", 0, /*idle=*/true);
  Beat(1, "new", 0, /*idle=*/true);
  StreamCloses(2, "old");
  ASSERT_TRUE(Final(2).ok()) << Final(2);
  ExpectSucceededWithEveryRank();
}

// A stream closing on the only connection a worker heartbeats over is
// still a death (a kill -9), and ends a generation still training at once.
TEST_F(HealVerdictsTest, AStreamClosingOnTheOnlyConnectionIsStillADeath) {
  // Past the registration's heartbeats (on the fixture's own connection).
  for (int s = 0; s < 4; ++s) {
    clock_.Advance(absl::Seconds(1));
    for (int rank = 0; rank < kWorld; ++rank) Beat(rank, "old", 20 + s);
  }
  clock_.Advance(absl::Milliseconds(500));
  Beat(2, "old", 25);
  StreamCloses(2, "old");
  const v1::Job job = Job(job_);
  EXPECT_EQ(job.state(), v1::JOB_STATE_RESTARTING);
  EXPECT_NE(job.message().find("closed its connection"), std::string::npos)
      << job.message();
}

// The member's lease lapses while the others finish (a partition of its
// own link), and it is counted out; then the same process registers again
// with its credential, before its old stream closes: it keeps its id and
// its rank, the close ends nothing, and its final report counts.
TEST_F(HealVerdictsTest, ReregisteringBeforeTheCloseKeepsTheRank) {
  for (int rank = 0; rank < kWorld; ++rank) Beat(rank, "old", kTotalSteps);
  for (int s = 0; s < 40; ++s) {  // Rank 2 silent for 40 s.
    clock_.Advance(absl::Seconds(1));
    Beat(0, "old", kTotalSteps);
    Beat(1, "old", kTotalSteps);
    coordinator_->lease_sweep().Sweep();
  }
  EXPECT_EQ(Job(job_).state(), v1::JOB_STATE_RUNNING) << Job(job_).message();
  // Heard again: its heartbeat says it is not registered, and it registers
  // again as the same process, showing its credential.
  EXPECT_FALSE(coordinator_->worker_calls()
                   .Heartbeat(workers_caller_,
                              [&] {
                                v1::HeartbeatRequest r;
                                r.set_worker_id(w_[2]);
                                return r;
                              }())
                   .ok());
  v1::RegisterRequest again = NewProcess();
  again.set_pid(100 + 2);  // Rank 2's process (NewProcess counts on).
  again.set_resume_job_id(job_);
  Caller as_w2 = Caller::Of(w_[2], *workers_caller_.TokenOf(w_[2]));
  absl::StatusOr<v1::RegisterResponse> reg =
      coordinator_->worker_calls().Register(as_w2, again);
  ASSERT_TRUE(reg.ok()) << reg.status();
  EXPECT_EQ(reg->worker_id(), w_[2]);
  workers_caller_.tokens[w_[2]] = reg->worker_token();
  EXPECT_FALSE(Beat(2, "new", kTotalSteps).has_abort());
  StreamCloses(2, "old");
  for (int rank = 0; rank < kWorld; ++rank) {
    ASSERT_TRUE(Final(rank).ok()) << Final(rank);
  }
  ExpectSucceededWithEveryRank();
}

// As above, with the old stream closing first (while the worker is
// silent: nothing to convict on), then the registration.
TEST_F(HealVerdictsTest, ReregisteringAfterTheCloseKeepsTheRank) {
  for (int rank = 0; rank < kWorld; ++rank) Beat(rank, "old", kTotalSteps);
  for (int s = 0; s < 40; ++s) {
    clock_.Advance(absl::Seconds(1));
    Beat(0, "old", kTotalSteps);
    Beat(1, "old", kTotalSteps);
    coordinator_->lease_sweep().Sweep();
  }
  StreamCloses(2, "old");
  EXPECT_EQ(Job(job_).state(), v1::JOB_STATE_RUNNING) << Job(job_).message();
  v1::RegisterRequest again = NewProcess();
  again.set_pid(100 + 2);
  again.set_resume_job_id(job_);
  Caller as_w2 = Caller::Of(w_[2], *workers_caller_.TokenOf(w_[2]));
  absl::StatusOr<v1::RegisterResponse> reg =
      coordinator_->worker_calls().Register(as_w2, again);
  ASSERT_TRUE(reg.ok()) << reg.status();
  EXPECT_EQ(reg->worker_id(), w_[2]);
  workers_caller_.tokens[w_[2]] = reg->worker_token();
  for (int rank = 0; rank < kWorld; ++rank) {
    ASSERT_TRUE(Final(rank).ok()) << Final(rank);
  }
  ExpectSucceededWithEveryRank();
}

// Ranks 0 and 1 reported before the heal; rank 2, cut off, after it, over
// a new connection, while its old stream closes.
TEST_F(HealVerdictsTest, FinalReportsBeforeAndAfterTheHeal) {
  for (int rank = 0; rank < kWorld; ++rank) Beat(rank, "old", kTotalSteps);
  ASSERT_TRUE(Final(0).ok());
  ASSERT_TRUE(Final(1).ok());
  for (int s = 0; s < 10; ++s) {  // Rank 2 cut off for 10 s.
    clock_.Advance(absl::Seconds(1));
    Beat(0, "old", 0, /*idle=*/true);
    Beat(1, "old", 0, /*idle=*/true);
    coordinator_->lease_sweep().Sweep();
  }
  Beat(2, "new", kTotalSteps);
  Beat(2, "old", kTotalSteps);  // Held back during the cut.
  StreamCloses(2, "old");
  ASSERT_TRUE(Final(2).ok()) << Final(2);
  ExpectSucceededWithEveryRank();
}

// Rank 2 dies after training, before its final report, while the others
// report: the job SUCCEEDS without it once its lease says it is gone,
// naming the missing shard, instead of restarting a job with nothing left
// to train (which no finished rank would join).
TEST_F(HealVerdictsTest, ARankGoneAfterTrainingLeavesASucceededJob) {
  for (int rank = 0; rank < kWorld; ++rank) Beat(rank, "old", kTotalSteps);
  ASSERT_TRUE(Final(0).ok());
  ASSERT_TRUE(Final(1).ok());
  for (int s = 0; s < 40 && Job(job_).state() == v1::JOB_STATE_RUNNING; ++s) {
    clock_.Advance(absl::Seconds(1));
    Beat(0, "old", 0, /*idle=*/true);
    Beat(1, "old", 0, /*idle=*/true);
    coordinator_->lease_sweep().Sweep();
  }
  const v1::Job job = Job(job_);
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED) << job.message();
  EXPECT_EQ(job.restarts(), 0);
  EXPECT_NE(job.message().find("2 of 3 ranks finished"), std::string::npos)
      << job.message();
  EXPECT_NE(job.message().find("rank 2 ("), std::string::npos) << job.message();
  EXPECT_DOUBLE_EQ(job.progress().test_accuracy(), (80 + 81) / 200.0);
  // Its report, late after all, is answered as settled, not counted.
  EXPECT_TRUE(Final(2).ok()) << Final(2);
  EXPECT_DOUBLE_EQ(Job(job_).progress().test_accuracy(), (80 + 81) / 200.0);
}

// A report each rank sent during the cut (its step 17) was held back by the
// partition and arrives after the heal, after newer ones (gRPC judges a
// request's deadline from its arrival): ranks 1 and 2 after their final
// reports, rank 0 before its own. The reproduced CoordinatorCutOff10sServing
// failure at 952d2c2: the stale reports cleared two ranks' final reports,
// and the job stayed RUNNING at step 17 until its workers were stopped.
TEST_F(HealVerdictsTest, ReportsHeldBackByTheCutUndoNoFinalReport) {
  for (int rank = 0; rank < kWorld; ++rank) Beat(rank, "new", kTotalSteps);
  ASSERT_TRUE(Final(1).ok());
  ASSERT_TRUE(Final(2).ok());
  for (int rank : {1, 2, 0}) {
    EXPECT_TRUE(Progress(rank, 17).ok()) << "a stale report is answered";
  }
  const v1::Job after = Job(job_);
  EXPECT_EQ(after.state(), v1::JOB_STATE_RUNNING) << after.message();
  for (const v1::RankProgress& p : after.progress().ranks()) {
    EXPECT_EQ(p.step(), p.rank() == 0 ? 17 : kTotalSteps) << p.rank();
    EXPECT_EQ(p.finished(), p.rank() != 0) << p.rank();
  }
  ASSERT_TRUE(Final(0).ok());
  ExpectSucceededWithEveryRank();
}

// Rank 1's daemon heartbeats idle before its final report is in (it was
// queued behind the heal): it is not offered its own job again.
TEST_F(HealVerdictsTest, AMemberIsNotOfferedItsJobAgain) {
  for (int rank = 0; rank < kWorld; ++rank) Beat(rank, "old", kTotalSteps);
  EXPECT_FALSE(Beat(1, "new", 0, /*idle=*/true).has_assignment());
  for (int rank = 0; rank < kWorld; ++rank) ASSERT_TRUE(Final(rank).ok());
  ExpectSucceededWithEveryRank();
}

// A finished rank joins again (an assignment it was given before it
// joined, kept by its daemon): the join is refused and ends nothing.
TEST_F(HealVerdictsTest, AFinishedRanksStaleJoinEndsNothing) {
  for (int rank = 0; rank < kWorld; ++rank) Beat(rank, "old", kTotalSteps);
  ASSERT_TRUE(Final(1).ok());
  Join(job_, w_[1]);
  ASSERT_EQ(joined_.count(w_[1]), 1u);
  EXPECT_TRUE(absl::IsFailedPrecondition(joined_[w_[1]].status()))
      << joined_[w_[1]].status();
  EXPECT_EQ(Job(job_).state(), v1::JOB_STATE_RUNNING) << Job(job_).message();
  ASSERT_TRUE(Final(0).ok());
  ASSERT_TRUE(Final(2).ok());
  ExpectSucceededWithEveryRank();
}

// A worker counted out while its generation was training (the generation
// ended) registers again as the same process, and its job has no room for
// it: its heartbeats still name the old generation, and it is told to stop
// rather than left training for peers that moved on.
TEST_F(HealVerdictsTest, AWorkerCountedOutOfALiveGenerationIsToldToStop) {
  clock_.Advance(absl::Seconds(4));  // Past the registration's heartbeats.
  Beat(2, "old", 20);
  StreamCloses(2, "old");  // Gone: generation 1 ends.
  ASSERT_EQ(Job(job_).state(), v1::JOB_STATE_RESTARTING);
  v1::RegisterRequest again = NewProcess();
  again.set_pid(100 + 2);  // No resume_job_id: its job does not take it.
  Caller as_w2 = Caller::Of(w_[2], *workers_caller_.TokenOf(w_[2]));
  absl::StatusOr<v1::RegisterResponse> reg =
      coordinator_->worker_calls().Register(as_w2, again);
  ASSERT_TRUE(reg.ok()) << reg.status();
  workers_caller_.tokens[w_[2]] = reg->worker_token();
  const v1::HeartbeatResponse hb = Beat(2, "new", 21);
  ASSERT_TRUE(hb.has_abort());
  EXPECT_EQ(hb.abort().generation(), 1);
  EXPECT_FALSE(hb.abort().rejoin());
  EXPECT_FALSE(hb.has_assignment());
}

}  // namespace
}  // namespace ringleader
