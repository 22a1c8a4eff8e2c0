// A coordinator killed mid-job and started again on the same state file
// adopts the generation its workers still run: they keep their ids, ranks
// and communicators, and training goes on with no restart. A member that does
// not come back within a lease ends the generation as any death does.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/fake_clock.h"
#include "coordinator/coordinator.h"
#include "coordinator/state_store.h"
#include "gtest/gtest.h"
#include "tests/testing/job_specs.h"
#include "tests/testing/process.h"

namespace ringleader {
namespace {

constexpr absl::Duration kLease = absl::Seconds(3);
constexpr absl::Duration kSilentMember = absl::Seconds(10);

// One coordinator process: its state file, clock and managers. Destroying it
// without ending anything is what kill -9 leaves behind (SQLite commits each
// change before the coordinator answers).
struct Process {
  explicit Process(const std::string& path) {
    store = *StateStore::Open(path);
    CoordinatorOptions o;
    o.lease = kLease;
    o.silent_member_limit = kSilentMember;
    coordinator = std::make_unique<Coordinator>(o, store.get(), &clock, &clock);
  }
  FakeClock clock;
  std::unique_ptr<StateStore> store;
  std::unique_ptr<Coordinator> coordinator;
};

class CoordinatorRecoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = testing::TestTempDir() + "/recovery.db";
    std::filesystem::remove(path_);
    process_ = std::make_unique<Process>(path_);
    ASSERT_TRUE(process_->coordinator->Start().ok());
  }
  Coordinator& coord() { return *process_->coordinator; }

  // kill -9, then a new process on the same state file.
  void Restart() {
    process_.reset();
    process_ = std::make_unique<Process>(path_);
    ASSERT_TRUE(coord().Start().ok());
  }

  std::string RegisterWorker(int pid) {
    v1::RegisterRequest r;
    r.set_hostname("host");
    r.set_device("cpu");
    r.set_pid(pid);
    r.set_address("127.0.0.1");
    absl::StatusOr<v1::RegisterResponse> resp = RegisterAs(r);
    EXPECT_TRUE(resp.ok()) << resp.status();
    return resp->worker_id();
  }

  absl::StatusOr<v1::HeartbeatResponse> Beat(const std::string& worker,
                                             const std::string& job,
                                             int64_t generation) {
    v1::HeartbeatRequest r;
    r.set_worker_id(worker);
    r.set_job_id(job);
    r.set_generation(generation);
    return coord().worker_calls().Heartbeat(workers_caller_, r);
  }

  // Submits a 2-worker job and forms its first generation; returns the job
  // id, and the workers by rank in `ranks`.
  std::string StartJob(std::vector<std::string>& ranks) {
    v1::SubmitJobRequest sub;
    *sub.mutable_spec() = testing::MinimalJobSpec("adopt", 2, 2);
    sub.mutable_spec()->set_epochs(3);
    sub.mutable_spec()->set_max_restarts(3);
    sub.mutable_spec()->set_checkpoint_dir("/tmp");
    absl::StatusOr<v1::SubmitJobResponse> job =
        coord().user_calls().SubmitJob(sub);
    EXPECT_TRUE(job.ok()) << job.status();
    std::vector<std::string> workers = {RegisterWorker(11), RegisterWorker(12)};
    for (const std::string& w : workers) {
      absl::StatusOr<v1::HeartbeatResponse> hb = Beat(w, "", 0);
      EXPECT_TRUE(hb.ok() && hb->has_assignment());
    }
    ranks.assign(2, "");
    for (const std::string& w : workers) {
      v1::JoinRendezvousRequest j;
      j.set_job_id(job->job_id());
      j.set_worker_id(w);
      coord().join_calls().JoinRendezvous(
          workers_caller_, j,
          [&ranks, w](absl::StatusOr<v1::JoinRendezvousResponse> g) {
            ASSERT_TRUE(g.ok()) << g.status();
            EXPECT_EQ(g->generation(), 1);
            ranks[g->rank()] = w;
          });
    }
    EXPECT_FALSE(ranks[0].empty());
    EXPECT_FALSE(ranks[1].empty());
    return job->job_id();
  }

  absl::StatusOr<v1::ShardAssignment> Shard(const std::string& job,
                                            int32_t rank, int64_t epoch) {
    v1::GetShardRequest r;
    r.set_job_id(job);
    r.set_generation(1);
    r.set_rank(rank);
    r.set_epoch(epoch);
    r.set_dataset_size(100);
    return coord().training_calls().GetShard(workers_caller_, r);
  }

  v1::Job Job(const std::string& id) {
    v1::GetJobRequest r;
    r.set_job_id(id);
    absl::StatusOr<v1::Job> job = coord().user_calls().GetJob(r);
    EXPECT_TRUE(job.ok()) << job.status();
    return *job;
  }

  // Every registered worker's credential: the tests act for each worker in
  // turn, and the coordinator finds the one a call needs among them.
  Caller workers_caller_;
  absl::StatusOr<v1::RegisterResponse> RegisterAs(
      const v1::RegisterRequest& r) {
    absl::StatusOr<v1::RegisterResponse> reg =
        coord().worker_calls().Register(Caller(), r);
    if (reg.ok()) {
      workers_caller_.Add(reg->worker_id(), reg->worker_token()).IgnoreError();
    }
    return reg;
  }

  std::string path_;
  std::unique_ptr<Process> process_;
};

TEST_F(CoordinatorRecoveryTest, MembersCarryOnInTheAdoptedGeneration) {
  std::vector<std::string> ranks;
  const std::string job = StartJob(ranks);
  ASSERT_TRUE(Shard(job, 0, 0).ok());
  Restart();

  v1::Job recovered = Job(job);
  EXPECT_EQ(recovered.state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(recovered.generation(), 1);
  EXPECT_EQ(recovered.restarts(), 0);
  for (const std::string& w : ranks) {
    absl::StatusOr<v1::HeartbeatResponse> hb = Beat(w, job, 1);
    ASSERT_TRUE(hb.ok()) << w << ": " << hb.status();
    EXPECT_FALSE(hb->has_abort()) << hb->abort().reason();
    EXPECT_FALSE(hb->has_assignment());
  }
  // The generation's calls work as before the restart.
  absl::StatusOr<v1::ShardAssignment> next = Shard(job, 1, 1);
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->world_size(), 2);
  v1::ListWorkersResponse workers = coord().user_calls().ListWorkers();
  ASSERT_EQ(workers.workers_size(), 2);
  EXPECT_EQ(workers.workers(0).job_id(), job);
}

TEST_F(CoordinatorRecoveryTest, FinalReportsSentBeforeTheRestartStillCount) {
  std::vector<std::string> ranks;
  const std::string job = StartJob(ranks);
  auto final_report = [&](int32_t rank, int64_t correct) {
    v1::ReportProgressRequest r;
    r.set_job_id(job);
    r.set_generation(1);
    r.set_rank(rank);
    r.set_step(10);
    r.set_finished(true);
    r.set_test_correct(correct);
    r.set_test_samples(100);
    return coord().training_calls().ReportProgress(workers_caller_, r);
  };
  ASSERT_TRUE(final_report(0, 90).ok());
  Restart();
  // Rank 0 has gone idle; only rank 1 is left to report.
  ASSERT_TRUE(final_report(1, 80).ok());
  v1::Job done = Job(job);
  EXPECT_EQ(done.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_DOUBLE_EQ(done.progress().test_accuracy(), 0.85);
}

TEST_F(CoordinatorRecoveryTest, AMemberThatDoesNotComeBackEndsTheGeneration) {
  std::vector<std::string> ranks;
  const std::string job = StartJob(ranks);
  Restart();
  // Rank 0 keeps heartbeating (with no steps: no evidence for rank 1);
  // rank 1 died with the old coordinator. Its first lease is a lease plus a
  // grace of 2 s for reconnecting; past it, it is a silent member, gone a
  // silent-member limit after the restart (when it counts as heard).
  for (int s = 1; s <= 10; ++s) {
    process_->clock.Advance(absl::Seconds(1));
    ASSERT_TRUE(Beat(ranks[0], job, 1).ok());
    coord().lease_sweep().Sweep();
    EXPECT_EQ(Job(job).state(), v1::JOB_STATE_RUNNING) << s;
  }
  process_->clock.Advance(absl::Milliseconds(1));
  coord().lease_sweep().Sweep();
  v1::Job after = Job(job);
  EXPECT_EQ(after.state(), v1::JOB_STATE_RESTARTING);
  EXPECT_EQ(after.restarts(), 1);
  absl::StatusOr<v1::HeartbeatResponse> hb = Beat(ranks[0], job, 1);
  ASSERT_TRUE(hb.ok()) << hb.status();
  ASSERT_TRUE(hb->has_abort());
  EXPECT_TRUE(hb->abort().rejoin());
  EXPECT_EQ(Shard(job, 0, 1).status().code(), absl::StatusCode::kAborted);
}

TEST_F(CoordinatorRecoveryTest, AnEndedGenerationIsNotAdopted) {
  std::vector<std::string> ranks;
  const std::string job = StartJob(ranks);
  v1::LeaveRequest leave;
  leave.set_worker_id(ranks[1]);
  leave.set_reason("test");
  ASSERT_TRUE(coord().worker_calls().Leave(workers_caller_, leave).ok());
  Restart();
  v1::Job after = Job(job);
  EXPECT_NE(after.state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(Beat(ranks[0], job, 1).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(CoordinatorRecoveryTest, ACommitRetriedAfterTheRestartIsRecordedOnce) {
  std::vector<std::string> ranks;
  const std::string job = StartJob(ranks);
  v1::CommitCheckpointRequest c;
  c.set_job_id(job);
  c.set_generation(1);
  c.set_rank(0);
  c.set_path("/tmp/adopt-step10.ckpt");
  c.set_step(10);
  absl::StatusOr<v1::CommitCheckpointResponse> first =
      coord().training_calls().CommitCheckpoint(workers_caller_, c);
  ASSERT_TRUE(first.ok()) << first.status();
  Restart();
  absl::StatusOr<v1::CommitCheckpointResponse> again =
      coord().training_calls().CommitCheckpoint(workers_caller_, c);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->checkpoint_id(), first->checkpoint_id());
}

TEST_F(CoordinatorRecoveryTest,
       AnAdoptedGenerationsFirstCommitAppliesItsResumeChoice) {
  std::vector<std::string> ranks;
  const std::string job = StartJob(ranks);
  v1::CommitCheckpointRequest c;
  c.set_job_id(job);
  c.set_generation(1);
  c.set_rank(0);
  for (int64_t step : {10, 20, 30}) {
    c.set_step(step);
    c.set_path(absl::StrCat("/tmp/adopt-step", step, ".ckpt"));
    ASSERT_TRUE(
        coord().training_calls().CommitCheckpoint(workers_caller_, c).ok());
  }
  // Both join again: generation 2 is offered 30, 20, 10.
  std::vector<v1::JoinRendezvousResponse> g2(2);
  for (const std::string& w : ranks) {
    v1::JoinRendezvousRequest j;
    j.set_job_id(job);
    j.set_worker_id(w);
    coord().join_calls().JoinRendezvous(
        workers_caller_, j,
        [&g2](absl::StatusOr<v1::JoinRendezvousResponse> g) {
          ASSERT_TRUE(g.ok()) << g.status();
          g2[g->rank()] = *g;
        });
  }
  ASSERT_EQ(g2[0].generation(), 2);
  ASSERT_EQ(g2[0].resume_candidates_size(), 3);
  const v1::CheckpointRecord twenty = g2[0].resume_candidates(1);
  ASSERT_EQ(twenty.step(), 20);
  // Step 30 is unreadable: the ranks resume from 20, and the coordinator
  // restarts before their first commit, which carries that choice.
  Restart();
  ASSERT_EQ(Job(job).generation(), 2);
  c.set_generation(2);
  c.set_step(25);
  c.set_path("/tmp/adopt-step25.ckpt");
  c.set_resumed_checkpoint_id(twenty.checkpoint_id());
  absl::StatusOr<v1::CommitCheckpointResponse> committed =
      coord().training_calls().CommitCheckpoint(workers_caller_, c);
  ASSERT_TRUE(committed.ok()) << committed.status();
  EXPECT_EQ(Job(job).last_checkpoint().step(), 25);
  // 30 is never offered again.
  absl::StatusOr<std::vector<v1::CheckpointRecord>> offer =
      coord().jobs().ResumeCandidates(job, 3);
  ASSERT_TRUE(offer.ok()) << offer.status();
  ASSERT_EQ(offer->size(), 3u);
  EXPECT_EQ((*offer)[0].step(), 25);
  EXPECT_EQ((*offer)[1].step(), 20);
  EXPECT_EQ((*offer)[2].step(), 10);
  // Later commits carry the same choice: nothing more to apply.
  c.set_step(35);
  c.set_path("/tmp/adopt-step35.ckpt");
  ASSERT_TRUE(
      coord().training_calls().CommitCheckpoint(workers_caller_, c).ok());
  EXPECT_EQ(Job(job).last_checkpoint().step(), 35);
}

}  // namespace
}  // namespace ringleader
