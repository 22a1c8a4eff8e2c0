// Issue 19 point 4: one of three workers hangs (SIGSTOP: its process keeps
// its sockets open, so its peers' collectives block instead of failing) at
// the coordinator's default lease (3 s, heartbeat 1 s). The survivors report
// in their heartbeats that they are blocked in a collective; the coordinator
// takes that as evidence the silent member is hung and ends the generation
// once its lease lapsed, instead of after --silent_member_limit (30 s). The
// survivors rejoin, resume and finish the job; the coordinator pushes the
// end to them (WatchGeneration) instead of waiting for their heartbeats.
#include <signal.h>

#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/integration/cluster.h"
#include "tests/testing/job_specs.h"
#include "tests/testing/numeric_bounds.h"

namespace ringleader::testing {
namespace {

TEST(HungWorkerTest, PeersBlockedOnAStoppedWorkerEndItsGenerationAtItsLease) {
  auto cluster =
      Cluster::Start("hung-worker", {"--lease_ms=3000", "--heartbeat_ms=1000"});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  v1::JobSpec s = FailureJobSpec("hung", (*cluster)->dir() + "/ckpt");
  std::filesystem::create_directories(s.checkpoint_dir());
  auto job = (*cluster)->Submit(s);
  ASSERT_TRUE(job.ok()) << job.status();
  // The collective timeout is far longer than the test: only the
  // coordinator can end the survivors' wait.
  ASSERT_TRUE(
      (*cluster)
          ->StartWorkers(3, {"--max_jobs=1", "--collective_timeout_s=600"})
          .ok());
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(5));
  v1::WatchJobRequest req;
  req.set_job_id(*job);
  auto stream = (*cluster)->users().WatchJob(&ctx, req);
  v1::Job snap, last;
  bool stopped = false;
  absl::Time stopped_at;
  int64_t gen_at_stop = 0;
  int64_t step_at_formation = -1;
  absl::Duration ended = absl::InfiniteDuration();
  absl::Duration formed = absl::InfiniteDuration();
  absl::Duration stepped = absl::InfiniteDuration();
  for (int n = 0; n < 100000 && stream->Read(&snap); ++n) {
    last = snap;
    const absl::Duration since = absl::Now() - stopped_at;
    if (!stopped && RunningAt(snap, 3, 60)) {
      (*cluster)->workers()[2]->Kill(SIGSTOP);
      stopped_at = absl::Now();
      stopped = true;
      gen_at_stop = snap.generation();
      continue;
    }
    if (!stopped) continue;
    const bool newer = snap.generation() > gen_at_stop;
    if (ended == absl::InfiniteDuration() &&
        (newer || snap.state() != v1::JOB_STATE_RUNNING)) {
      ended = since;
    }
    if (formed == absl::InfiniteDuration() && newer &&
        snap.state() == v1::JOB_STATE_RUNNING && snap.world_size() == 2) {
      formed = since;
      step_at_formation = snap.progress().step();
    } else if (formed != absl::InfiniteDuration() &&
               stepped == absl::InfiniteDuration() &&
               snap.progress().step() != step_at_formation) {
      // The survivors' first progress report in the new generation (every
      // 10 steps): they train again.
      stepped = since;
      (*cluster)->workers()[2]->Kill(SIGKILL);  // The hung one is done for.
    }
    if (snap.state() == v1::JOB_STATE_SUCCEEDED ||
        snap.state() == v1::JOB_STATE_FAILED ||
        snap.state() == v1::JOB_STATE_CANCELLED) {
      break;
    }
  }
  ctx.TryCancel();
  if (stopped) (*cluster)->workers()[2]->Kill(SIGKILL);
  ASSERT_TRUE(stopped) << "the job never ran with 3 ranks: " << last.message();
  EXPECT_EQ(last.state(), v1::JOB_STATE_SUCCEEDED)
      << last.message() << "\n"
      << ReadFileOrEmpty((*cluster)->dir() + "/worker0.log");
  EXPECT_EQ(last.restarts(), 1);
  EXPECT_EQ(last.world_size(), 2);
  ReportNumeric("hung_worker.test_accuracy", last.progress().test_accuracy());
  EXPECT_GE(last.progress().test_accuracy(), 0.5);
  // Far below the 30 s silent-member limit that ended a hung member before,
  // with slack for a loaded machine; the figures are the bench's business
  // (bench/recovery/failure_detection_bench.cc).
  EXPECT_LT(formed, absl::Seconds(20));
  // The survivors heard of the end from their WatchGeneration stream (the
  // coordinator pushes it the moment it ends the generation). At least one:
  // a survivor's heartbeat can in principle be answered in the microseconds
  // between the rendezvous ending the generation and the push, and that
  // survivor then leaves the generation before reading the event.
  int pushed = 0;
  for (int w = 0; w < 2; ++w) {
    const std::string log = ReadFileOrEmpty(
        absl::StrCat((*cluster)->log_dir(), "/worker", w, ".log"));
    if (log.find(absl::StrCat("generation ", gen_at_stop, " of job ", *job,
                              " ended (pushed by the coordinator)")) !=
        std::string::npos) {
      ++pushed;
    }
  }
  EXPECT_GE(pushed, 1) << ReadFileOrEmpty((*cluster)->log_dir() +
                                          "/worker0.log");
  std::cout << "SIGSTOP of 1 of 3 workers: generation ended after "
            << absl::FormatDuration(ended) << ", next one formed after "
            << absl::FormatDuration(formed)
            << ", survivors' first progress report after "
            << absl::FormatDuration(stepped) << "\n";
}

// The stopped worker, let go after the survivors finished without it, finds
// its job over when it rejoins. The job succeeded with its steps in it
// (carried by the survivors), so a --max_jobs=1 worker (a Slurm task, a
// pod) exits 0 as the job did, not as a failure to restart. Seen as exit 1
// in the partition soak (WorkerCutOff10sWithMaxJobs1, 1 run in 10).
TEST(HungWorkerTest, AWorkerBackAfterItsJobSucceededWithoutItExitsZero) {
  auto cluster =
      Cluster::Start("back-late", {"--lease_ms=3000", "--heartbeat_ms=1000"});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  v1::JobSpec s = FailureJobSpec("back-late", (*cluster)->dir() + "/ckpt");
  std::filesystem::create_directories(s.checkpoint_dir());
  auto job = (*cluster)->Submit(s);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE((*cluster)->StartWorkers(3, {"--max_jobs=1"}).ok());
  absl::StatusOr<v1::Job> running = (*cluster)->WaitUntil(
      *job, [](const v1::Job& j) { return RunningAt(j, 3, 60); },
      absl::Minutes(3));
  ASSERT_TRUE(running.ok()) << running.status();
  ASSERT_EQ(running->state(), v1::JOB_STATE_RUNNING) << running->message();
  Subprocess& late = *(*cluster)->workers()[2];
  late.Kill(SIGSTOP);
  absl::StatusOr<v1::Job> end = (*cluster)->WaitForEnd(*job, absl::Minutes(4));
  late.Kill(SIGCONT);
  ASSERT_TRUE(end.ok()) << end.status();
  ASSERT_EQ(end->state(), v1::JOB_STATE_SUCCEEDED) << end->message();
  const std::optional<int> code = late.Wait(absl::Minutes(1));
  ASSERT_TRUE(code.has_value()) << "the late worker did not exit";
  EXPECT_EQ(*code, 0) << ReadFileOrEmpty((*cluster)->log_dir() +
                                         "/worker2.log");
}

}  // namespace
}  // namespace ringleader::testing
