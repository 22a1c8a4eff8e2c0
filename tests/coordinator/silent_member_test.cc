// A lease that lapses is evidence, not a verdict (issue 18, point 2), through
// the Coordinator on a FakeClock: a generation whose members all go silent
// at once is kept (the coordinator suspects its own link); a silent member
// whose peers' steps advance is kept (no step completes without it); a
// silent member without that evidence is gone after the limit. And the
// worker side of coming back (point 3): a worker that registers again goes
// back to its job, and a job that is finishing is offered to nobody.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/fake_clock_coordinator.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

constexpr absl::Duration kLease = absl::Seconds(3);
constexpr absl::Duration kSilentMember = absl::Seconds(30);
constexpr absl::Duration kSilentGeneration = absl::Minutes(5);

class SilentMemberTest : public testing::FakeClockCoordinatorTest {
 protected:
  CoordinatorOptions Options() const override {
    CoordinatorOptions o;
    o.lease = kLease;
    o.heartbeat_interval = absl::Seconds(1);
    o.silent_member_limit = kSilentMember;
    o.silent_generation_limit = kSilentGeneration;
    return o;
  }

  // A job of `n` workers (room for one more), joined into generation 1.
  std::string StartJob(int n, std::vector<std::string>& w) {
    v1::JobSpec spec = testing::MinimalJobSpec("silent", n, n + 1);
    spec.set_max_restarts(3);
    spec.set_rendezvous_last_call_ms(1);
    const std::string job = Submit(spec);
    for (int i = 0; i < n; ++i) w.push_back(AddWorker(job));
    for (const std::string& id : w) Join(job, id);
    clock_.Advance(absl::Milliseconds(1));  // The last call for a third.
    EXPECT_TRUE(joined_[w[0]].ok()) << joined_[w[0]].status();
    EXPECT_EQ(Job(job).state(), v1::JOB_STATE_RUNNING);
    return job;
  }

  // One second passes; `beating` heartbeat at generation 1 with `step`.
  void Second(const std::string& job, const std::vector<std::string>& beating,
              int64_t step) {
    clock_.Advance(absl::Seconds(1));
    for (const std::string& w : beating) {
      v1::HeartbeatResponse hb = Heartbeat(w, job, 1, step);
      EXPECT_FALSE(hb.has_abort())
          << w << " at " << clock_.Now() << ": " << hb.abort().reason();
    }
    coordinator_->lease_sweep().Sweep();
  }

  v1::WorkerState StateOf(const std::string& worker) {
    const v1::ListWorkersResponse list =
        coordinator_->user_calls().ListWorkers();
    for (const v1::WorkerInfo& w : list.workers()) {
      if (w.worker_id() == worker) return w.state();
    }
    return v1::WORKER_STATE_UNSPECIFIED;
  }
};

TEST_F(SilentMemberTest, EveryMemberSilentAtOnceKeepsTheGeneration) {
  std::vector<std::string> w;
  const std::string job = StartJob(3, w);
  // The coordinator hears nobody for a minute: a partition of its own link,
  // most likely, while the workers train on.
  for (int s = 1; s <= 60; ++s) Second(job, {}, 0);
  EXPECT_EQ(Job(job).state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(Job(job).generation(), 1);
  for (const std::string& id : w) {
    EXPECT_EQ(StateOf(id), v1::WORKER_STATE_SILENT);
  }
  // Healed: they heartbeat again as members of generation 1, nothing lost.
  Second(job, w, 500);
  EXPECT_EQ(Job(job).state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(Job(job).generation(), 1);
  EXPECT_EQ(Job(job).restarts(), 0);
  for (const std::string& id : w) EXPECT_EQ(StateOf(id), v1::WORKER_STATE_BUSY);
  EXPECT_TRUE(Report(job, 1, 0, 500).ok());
}

TEST_F(SilentMemberTest, AGenerationSilentPastItsLimitEnds) {
  std::vector<std::string> w;
  const std::string job = StartJob(2, w);
  clock_.Advance(kSilentGeneration);
  coordinator_->lease_sweep().Sweep();
  EXPECT_EQ(Job(job).state(), v1::JOB_STATE_RUNNING);
  clock_.Advance(absl::Milliseconds(1));
  coordinator_->lease_sweep().Sweep();
  EXPECT_EQ(Job(job).state(), v1::JOB_STATE_RESTARTING);
  EXPECT_EQ(Job(job).restarts(), 1);
}

TEST_F(SilentMemberTest, AWholeGenerationReplacedOnItsHostEnds) {
  std::vector<std::string> w;
  const std::string job = StartJob(2, w);
  // Both workers were killed and their daemons restarted on the same host:
  // the host reaches the coordinator, so the silence is not its link.
  for (int s = 1; s <= 5; ++s) Second(job, {}, 0);
  EXPECT_EQ(Job(job).state(), v1::JOB_STATE_RUNNING);
  AddWorker(job);
  clock_.Advance(absl::Seconds(1));
  coordinator_->lease_sweep().Sweep();
  EXPECT_EQ(Job(job).state(), v1::JOB_STATE_RESTARTING);
  EXPECT_EQ(Job(job).restarts(), 1);
}

TEST_F(SilentMemberTest, ASilentMemberWhosePeersStepIsKept) {
  std::vector<std::string> w;
  const std::string job = StartJob(3, w);
  // w[2]'s heartbeats are lost (its traffic to the coordinator is dropped),
  // but its peers complete step after step, which needs its gradients.
  for (int s = 1; s <= 120; ++s) Second(job, {w[0], w[1]}, 10 * s);
  EXPECT_EQ(Job(job).state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(Job(job).restarts(), 0);
  EXPECT_EQ(StateOf(w[2]), v1::WORKER_STATE_SILENT);
  Second(job, w, 1210);
  EXPECT_EQ(StateOf(w[2]), v1::WORKER_STATE_BUSY);
  EXPECT_EQ(Job(job).generation(), 1);
}

TEST_F(SilentMemberTest, ASilentMemberWhosePeersAreBlockedIsGoneAtItsLease) {
  std::vector<std::string> w;
  const std::string job = StartJob(3, w);
  // w[2] hangs right after joining (SIGSTOP: its sockets stay open); w[0]
  // and w[1] block in their first all-reduce and say so in each heartbeat.
  for (int s = 1; s <= 3; ++s) {
    clock_.Advance(absl::Seconds(1));
    for (int i = 0; i < 2; ++i) {
      EXPECT_FALSE(Heartbeat(w[i], job, 1, 0, 1000 * s - 100).has_abort());
    }
    coordinator_->lease_sweep().Sweep();
    EXPECT_EQ(Job(job).state(), v1::JOB_STATE_RUNNING) << s;
  }
  // Its lease lapses: gone at once, not after the 30 s limit.
  clock_.Advance(absl::Milliseconds(200));
  coordinator_->lease_sweep().Sweep();
  EXPECT_EQ(Job(job).state(), v1::JOB_STATE_RESTARTING);
  EXPECT_EQ(Job(job).restarts(), 1);
  v1::HeartbeatResponse hb = Heartbeat(w[0], job, 1, 0, 3100);
  ASSERT_TRUE(hb.has_abort());
  EXPECT_TRUE(hb.abort().rejoin());
}

TEST_F(SilentMemberTest, ASilentMemberWhosePeersCollectivesCompleteIsKept) {
  std::vector<std::string> w;
  const std::string job = StartJob(3, w);
  // w[2]'s heartbeats alone are lost: its peers' all-reduces complete, so
  // each of their heartbeats finds them in a short wait at most.
  for (int s = 1; s <= 60; ++s) {
    clock_.Advance(absl::Seconds(1));
    for (int i = 0; i < 2; ++i) Heartbeat(w[i], job, 1, 10 * s, 15);
    coordinator_->lease_sweep().Sweep();
  }
  EXPECT_EQ(Job(job).state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(Job(job).restarts(), 0);
  EXPECT_EQ(StateOf(w[2]), v1::WORKER_STATE_SILENT);
}

TEST_F(SilentMemberTest, ASilentMemberWithoutEvidenceIsGoneAfterTheLimit) {
  std::vector<std::string> w;
  const std::string job = StartJob(3, w);
  // Its peers are heard but stuck at step 7: they wait for it.
  for (int s = 1; s <= 30; ++s) Second(job, {w[0], w[1]}, 7);
  EXPECT_EQ(Job(job).state(), v1::JOB_STATE_RUNNING);
  clock_.Advance(absl::Seconds(1));
  coordinator_->lease_sweep().Sweep();
  const v1::Job after = Job(job);
  EXPECT_EQ(after.state(), v1::JOB_STATE_RESTARTING);
  EXPECT_EQ(after.restarts(), 1);
  EXPECT_TRUE(absl::IsNotFound(TryHeartbeat(w[2], job, 1).status()));
  v1::HeartbeatResponse hb = Heartbeat(w[0], job, 1, 7);
  ASSERT_TRUE(hb.has_abort());
  EXPECT_TRUE(hb.abort().rejoin());
}

TEST_F(SilentMemberTest, AWorkerRegisteringAgainGoesBackToItsJob) {
  // An older job that wants workers is what an idle worker is offered.
  const std::string older = Submit(testing::MinimalJobSpec("older", 2, 2));
  std::vector<std::string> w;
  v1::JobSpec spec = testing::MinimalJobSpec("mine", 2, 2);
  const std::string job = Submit(spec);
  // Both workers were in `job` when the coordinator forgot them.
  std::vector<std::string> ids;
  for (int i = 0; i < 2; ++i) {
    v1::RegisterRequest r = NewProcess();
    r.set_resume_job_id(job);
    absl::StatusOr<v1::RegisterResponse> reg = RegisterAs(r);
    ASSERT_TRUE(reg.ok()) << reg.status();
    ids.push_back(reg->worker_id());
  }
  for (const std::string& id : ids) Join(job, id);
  ASSERT_TRUE(joined_[ids[0]].ok()) << joined_[ids[0]].status();
  EXPECT_EQ(Job(job).state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(Job(older).state(), v1::JOB_STATE_PENDING);
  // A registration without a job to go back to is offered the older one.
  const std::string fresh = AddWorker(older);
  EXPECT_FALSE(fresh.empty());
  // A job that is over, or unknown, is not resumed: the worker stays idle.
  v1::RegisterRequest r = NewProcess();
  r.set_resume_job_id("no-such-job");
  absl::StatusOr<v1::RegisterResponse> reg = RegisterAs(r);
  ASSERT_TRUE(reg.ok()) << reg.status();
  Join(job, reg->worker_id());
  EXPECT_EQ(joined_[reg->worker_id()].status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(SilentMemberTest, AFinishingJobIsOfferedToNobody) {
  std::vector<std::string> w;
  const std::string job = StartJob(2, w);  // Room for a third worker.
  ASSERT_TRUE(Report(job, 1, 0, 10, /*finished=*/true).ok());
  // Rank 0 is done and idle again while rank 1 evaluates: its heartbeat
  // must not hand it the job it just finished.
  v1::HeartbeatResponse hb = Heartbeat(w[0], job, 0);
  EXPECT_FALSE(hb.has_assignment());
  // Nor is a newly arrived worker given a job about to end.
  auto reg = RegisterAs(NewProcess());
  ASSERT_TRUE(reg.ok());
  EXPECT_FALSE(Heartbeat(reg->worker_id(), "", 0).has_assignment());
  ASSERT_TRUE(Report(job, 1, 1, 10, /*finished=*/true).ok());
  EXPECT_EQ(Job(job).state(), v1::JOB_STATE_SUCCEEDED);
}

}  // namespace
}  // namespace ringleader
