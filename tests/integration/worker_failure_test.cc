// Issue 4 (first part): one of three workers is killed with SIGKILL in the
// middle of an epoch; the coordinator notices by its lease, ends the
// generation, the survivors abort their Gloo communicator, rejoin, resume
// from the last committed checkpoint and finish the job.
#include <signal.h>

#include <filesystem>

#include "gtest/gtest.h"
#include "tests/integration/cluster.h"
#include "tests/testing/job_specs.h"

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
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE((*cluster)
                    ->StartWorker({"--max_jobs=1", "--collective_timeout_s=30"})
                    .ok());
  }
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
    if (!killed && snap.state() == v1::JOB_STATE_RUNNING &&
        snap.world_size() == 3 && snap.progress().step() >= 120) {
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
  EXPECT_GE(last.progress().test_accuracy(), 0.5);
  // Lease (1 s) + sweep + last call (0.5 s) + reconnect, with slack for a
  // loaded machine.
  EXPECT_LT(recovery, absl::Seconds(10));
  std::cout << "generation re-formed with the survivors "
            << absl::FormatDuration(recovery) << " after kill -9; accuracy "
            << last.progress().test_accuracy() << "\n";
}

}  // namespace
}  // namespace ringleader::testing
