// Issue 4 (first part): one of three workers is killed with SIGKILL in the
// middle of an epoch; the coordinator notices by its lease, ends the
// generation, the survivors abort their Gloo communicator, rejoin, resume
// from the last committed checkpoint and finish the job. Issue 19: without a
// checkpoint directory they recover from each other's memory and lose no
// step.
#include <signal.h>
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <set>

#include "gtest/gtest.h"
#include "tests/integration/cluster.h"
#include "tests/integration/worker_logs.h"
#include "tests/testing/job_specs.h"
#include "tests/testing/numeric_bounds.h"

namespace ringleader::testing {
namespace {

TEST(WorkerFailureTest, SurvivorsRejoinAndFinishAfterKillNine) {
  auto cluster =
      Cluster::Start("kill-worker", {"--lease_ms=1000", "--heartbeat_ms=200"});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  v1::JobSpec s = FailureJobSpec("elastic", (*cluster)->dir() + "/ckpt");
  std::filesystem::create_directories(s.checkpoint_dir());
  auto job = (*cluster)->Submit(s);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE(
      (*cluster)
          ->StartWorkers(3, {"--max_jobs=1", "--collective_timeout_s=30"})
          .ok());
  // Follow the job until it has run a while in a 3-rank generation, then
  // kill one worker.
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(5));
  v1::WatchJobRequest req;
  req.set_job_id(*job);
  auto stream = (*cluster)->users().WatchJob(&ctx, req);
  v1::Job snap;
  bool killed = false;
  absl::Time killed_at;
  absl::Duration recovery = absl::InfiniteDuration();
  v1::Job last;
  for (int n = 0; n < 100000 && stream->Read(&snap); ++n) {
    last = snap;
    if (!killed && RunningAt(snap, 3, 120)) {
      (*cluster)->workers()[2]->Kill(SIGKILL);
      killed = true;
      killed_at = absl::Now();
    }
    if (killed && recovery == absl::InfiniteDuration() &&
        snap.state() == v1::JOB_STATE_RUNNING && snap.world_size() == 2) {
      recovery = absl::Now() - killed_at;
    }
    if (snap.state() == v1::JOB_STATE_SUCCEEDED ||
        snap.state() == v1::JOB_STATE_FAILED ||
        snap.state() == v1::JOB_STATE_CANCELLED) {
      break;
    }
  }
  ctx.TryCancel();
  ASSERT_TRUE(killed) << "the job never ran with 3 ranks: " << last.message();
  EXPECT_EQ(last.state(), v1::JOB_STATE_SUCCEEDED)
      << last.message() << "\n"
      << ReadFileOrEmpty((*cluster)->dir() + "/worker0.log");
  EXPECT_EQ(last.restarts(), 1);
  EXPECT_EQ(last.world_size(), 2);
  ReportNumeric("worker_failure.kill_nine_test_accuracy",
                last.progress().test_accuracy());
  EXPECT_GE(last.progress().test_accuracy(), 0.5);
  // Lease (1 s) + sweep + last call (0.5 s) + reconnect, with slack for a
  // loaded machine.
  EXPECT_LT(recovery, absl::Seconds(10));
  std::cout << "generation re-formed with the survivors "
            << absl::FormatDuration(recovery) << " after kill -9; accuracy "
            << last.progress().test_accuracy() << "\n";
}

TEST(WorkerFailureTest, WithoutCheckpointsTheSurvivorsRecoverFromMemory) {
  // Workers log every batch's sample ids (VLOG 1); set before any thread.
  ASSERT_EQ(setenv("GLOG_v", "1", 1), 0);
  auto cluster =
      Cluster::Start("kill-memory", {"--lease_ms=1000", "--heartbeat_ms=200"});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  // 9600 samples in batches of 32: whole steps at world 3 and 2, so every
  // sample of an epoch goes in exactly once (no padding).
  constexpr int64_t kTrain = 9600;
  v1::JobSpec s = FailureJobSpec("memory", "");
  s.mutable_dataset()->set_synthetic_train_size(kTrain);
  s.set_checkpoint_every_steps(0);
  // Generation 1 waits for all 3 workers (unless one is 3 s late): on a
  // loaded machine the third could miss a 500 ms last call, and the job
  // then ran at world 2 throughout.
  s.set_rendezvous_last_call_ms(3000);
  auto job = (*cluster)->Submit(s);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE(
      (*cluster)
          ->StartWorkers(3, {"--max_jobs=1", "--collective_timeout_s=30"})
          .ok());
  auto running = (*cluster)->WaitUntil(
      *job, [](const v1::Job& j) { return RunningAt(j, 3, 60); },
      absl::Minutes(3));
  ASSERT_TRUE(running.ok()) << running.status();
  ASSERT_EQ(running->world_size(), 3) << running->message();
  const int64_t seen_at_kill = running->progress().step();
  (*cluster)->workers()[2]->Kill(SIGKILL);
  auto done = (*cluster)->WaitForEnd(*job, absl::Minutes(3));
  ASSERT_TRUE(done.ok()) << done.status();
  const std::string dir = (*cluster)->dir();
  const std::string log0 = ReadFileOrEmpty(dir + "/worker0.log");
  ASSERT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message() << "\n"
                                                    << log0.substr(0, 4000);
  EXPECT_EQ(done->restarts(), 1);
  EXPECT_EQ(done->world_size(), 2);

  // Both survivors recovered, from memory, at the same step: no earlier
  // than the step the coordinator had seen when the kill came.
  const std::vector<ResumeLine> r0 = ParseResumeLines(log0);
  const std::vector<ResumeLine> r1 =
      ParseResumeLines(ReadFileOrEmpty(dir + "/worker1.log"));
  ASSERT_EQ(r0.size(), 1u) << log0.substr(0, 4000);
  ASSERT_EQ(r1.size(), 1u);
  EXPECT_TRUE(r0[0].from_memory);
  EXPECT_EQ(r1[0].step, r0[0].step);
  EXPECT_EQ(r1[0].offset, r0[0].offset);
  const int64_t at = r0[0].step;
  EXPECT_GE(at, seen_at_kill);

  // Every sample of every epoch went into the model once: generation 1's
  // steps up to the recovered one (the killed worker's too), then
  // generation 2's. Generation 1's steps past it were never applied.
  std::vector<std::string> logs;
  for (int w = 0; w < 3; ++w) {
    logs.push_back(
        ReadFileOrEmpty(dir + "/worker" + std::to_string(w) + ".log"));
  }
  const AppliedSamples applied = CountAppliedSamples(logs);
  EXPECT_EQ(applied.disagreement, "");
  const int64_t redone = applied.redone_batches;
  EXPECT_LE(redone, 3);  // At most the step in flight on each rank.
  ASSERT_EQ(applied.by_epoch.size(), 2u);
  for (const auto& [epoch, ids] : applied.by_epoch) {
    SCOPED_TRACE(epoch);
    EXPECT_EQ(ids.size(), static_cast<size_t>(kTrain));
    EXPECT_EQ(std::set<int64_t>(ids.begin(), ids.end()).size(),
              static_cast<size_t>(kTrain));
  }
  EXPECT_EQ(done->progress().step(), done->progress().total_steps());
  ReportNumeric("worker_failure.from_memory_test_accuracy",
                done->progress().test_accuracy());
  EXPECT_GE(done->progress().test_accuracy(), 0.5);
  std::cout << "killed a worker at step >= " << seen_at_kill
            << "; the survivors recovered from memory at step " << at
            << " (epoch " << r0[0].epoch << ", offset " << r0[0].offset << "), "
            << redone << " batches redone; accuracy "
            << done->progress().test_accuracy() << "\n";
}

}  // namespace
}  // namespace ringleader::testing
