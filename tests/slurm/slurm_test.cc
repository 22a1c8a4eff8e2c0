// Issue 34: Ringleader on a real Slurm cluster (one node on this machine:
// tests/slurm/slurm_cluster.h), through deploy/slurm/ringleader.sbatch as a
// user runs it. Issue 48: with the commands deploy/README.md's Slurm block
// shows, read from that file (the binaries from its `//deploy:bin`, the
// output where the script puts it by default, $SCRATCH here), and with no
// OPENBLAS_NUM_THREADS anywhere: OpenBLAS's threads are there to take the
// signals.
//   (a) a 2-worker job runs to SUCCEEDED (the reference metric); each
//       worker's lines start with its step, and name it; a requeue of the
//       finished job exits at once with its outcome, starting no worker;
//   (b) `scancel --signal=TERM JOBID.N` of one worker's step mid-training:
//       it leaves gracefully, the job goes on and SUCCEEDS with the others;
//   (c) preemption of the whole job (scontrol requeue): every worker gets
//       SIGTERM, rank 0 checkpoints the last completed step, the job is
//       PREEMPTED; the requeued allocation resumes it at exactly that step
//       and it SUCCEEDS.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <regex>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/integration/cluster.h"
#include "tests/slurm/slurm_batch.h"
#include "tests/slurm/slurm_cluster.h"
#include "tests/testing/process.h"

namespace ringleader::testing {
namespace {

class SlurmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (absl::Status s = SlurmCluster::Supported(); !s.ok()) {
      GTEST_SKIP() << "skipped: " << s.message();
    }
    if (absl::Status s = DocumentedSlurm::DataReady(); !s.ok()) {
      GTEST_SKIP() << "skipped: " << s.message();
    }
    absl::StatusOr<std::unique_ptr<SlurmCluster>> c =
        SlurmCluster::Start(SlurmCluster::Options());
    ASSERT_TRUE(c.ok()) << c.status();
    slurm_ = *std::move(c);
    dir_ = FreshDir(
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    batch_ = std::make_unique<DocumentedSlurm>(slurm_.get(), dir_);
  }

  absl::StatusOr<std::string> SubmitBatch(int tasks, int max_workers) {
    return batch_->Submit(tasks, max_workers);
  }
  absl::Status RunDocumented(const std::string& prefix, const std::string& job,
                             const std::string& step = "") {
    return batch_->Run(prefix, job, step);
  }
  std::string OutputOf(const std::string& job) { return batch_->OutputOf(job); }
  BatchRun Finish(const std::string& job) { return batch_->Finish(job); }
  std::string Tail(const BatchRun& r) { return batch_->Tail(r); }

  std::unique_ptr<SlurmCluster> slurm_;
  std::string dir_;
  std::unique_ptr<DocumentedSlurm> batch_;
};

TEST_F(SlurmTest, TwoWorkersRunAJobToSuccess) {
  absl::StatusOr<std::string> job = SubmitBatch(2, 2);
  ASSERT_TRUE(job.ok()) << job.status();
  const BatchRun r = Finish(*job);
  ASSERT_EQ(r.slurm_state, "COMPLETED") << Tail(r);
  EXPECT_TRUE(r.succeeded) << Tail(r);
  ASSERT_TRUE(r.accuracy.has_value()) << Tail(r);
  EXPECT_GE(*r.accuracy, 0.78) << Tail(r);
  // Each worker's lines start with its step (0 and 1: the batch script's
  // first two steps), and its first line names the step.
  for (const char* step : {"0", "1"}) {
    EXPECT_NE(r.output.find(absl::StrCat("\n", step, ": I")), std::string::npos)
        << "no line of step " << step << Tail(r);
    EXPECT_NE(r.output.find(
                  absl::StrCat("Slurm job ", *job, " step ", *job, ".", step)),
              std::string::npos)
        << Tail(r);
  }
  // Requeued after the end: the allocation exits at once with the job's
  // outcome, starting no worker.
  ASSERT_TRUE(RunDocumented("scontrol requeue ", *job).ok());
  const absl::Time requeued = absl::Now();
  ASSERT_TRUE(slurm_->WaitForJobState(*job, {"PENDING"}, absl::Minutes(2)).ok())
      << slurm_->Logs();
  const size_t first = OutputOf(*job).size();
  // Slurm revokes the job's credentials at the requeue, to the second: an
  // allocation in that same second is killed ("Job credential revoked").
  // Its BeginTime delay exists for this; StartTime=now comes 2 s later.
  absl::SleepFor(requeued + absl::Seconds(2) - absl::Now());
  ASSERT_TRUE(RunDocumented("scontrol update ", *job).ok());
  const absl::Time started = absl::Now();
  const BatchRun again = Finish(*job);
  ASSERT_EQ(again.slurm_state, "COMPLETED") << Tail(again);
  const std::string second = again.output.substr(first);
  EXPECT_NE(second.find("is JOB_STATE_SUCCEEDED; nothing to resume, no "
                        "workers started"),
            std::string::npos)
      << second;
  EXPECT_EQ(second.find(": I"), std::string::npos) << "a worker started\n"
                                                   << second;
  std::cout << "the requeued allocation of a finished job ended in "
            << absl::Now() - started << "\n";
}

TEST_F(SlurmTest, CancellingOneWorkersStepLeavesTheJobGoing) {
  absl::StatusOr<std::string> job = SubmitBatch(3, 3);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE(slurm_->WaitForJobState(*job, {"RUNNING"}, absl::Minutes(1)).ok())
      << slurm_->Logs();
  // Mid-training, at world 3: one worker's step is cancelled.
  const absl::Time give_up = absl::Now() + absl::Minutes(3);
  while (absl::Now() < give_up &&
         (LastStep(OutputOf(*job)) < 100 ||
          OutputOf(*job).find("world 3") == std::string::npos)) {
    absl::StatusOr<std::string> state = slurm_->JobState(*job);
    ASSERT_TRUE(state.ok() && *state != "FAILED" && *state != "COMPLETED")
        << "the job ended before it trained: " << state.value_or("?")
        << OutputOf(*job);
    absl::SleepFor(absl::Milliseconds(200));
  }
  ASSERT_GE(LastStep(OutputOf(*job)), 100) << OutputOf(*job);
  absl::StatusOr<std::vector<std::string>> steps = slurm_->RunningSteps(*job);
  ASSERT_TRUE(steps.ok()) << steps.status();
  ASSERT_EQ(steps->size(), 3u) << absl::StrJoin(*steps, " ");
  // As documented: SIGTERM to the step, which the worker answers.
  ASSERT_TRUE(
      RunDocumented("scancel --signal=TERM ", *job, steps->back()).ok());
  std::cout << "stopped step " << steps->back() << " at step "
            << LastStep(OutputOf(*job)) << "\n";
  const BatchRun r = Finish(*job);
  ASSERT_EQ(r.slurm_state, "COMPLETED") << Tail(r);
  EXPECT_TRUE(r.succeeded) << Tail(r);
  ASSERT_TRUE(r.accuracy.has_value()) << Tail(r);
  EXPECT_GE(*r.accuracy, 0.78) << Tail(r);
  EXPECT_NE(r.output.find("world 2"), std::string::npos)
      << "the job did not go on at world 2" << Tail(r);
  // It left at a step boundary, as a preemption of one rank: no restart.
  const std::string stopped = steps->back().substr(job->size() + 1);
  const std::regex left(
      "\n" + stopped +
      R"(: [^\n]*leaves generation \d+ of job \S+ for a preemption)");
  EXPECT_TRUE(std::regex_search(r.output, left))
      << "step " << stopped << " did not leave gracefully" << Tail(r);
  const std::string watched = ReadFileOrEmpty(
      absl::StrCat(dir_, "/ringleader/state/watch-", *job, ".jsonl"));
  ASSERT_FALSE(watched.empty());
  EXPECT_FALSE(std::regex_search(watched, std::regex(R"("restarts": *[1-9])")))
      << watched.substr(watched.size() > 2000 ? watched.size() - 2000 : 0);
}

TEST_F(SlurmTest, RequeueOfTheWholeJobResumesAtTheStepItStopped) {
  absl::StatusOr<std::string> job = SubmitBatch(2, 2);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE(slurm_->WaitForJobState(*job, {"RUNNING"}, absl::Minutes(1)).ok())
      << slurm_->Logs();
  const absl::Time give_up = absl::Now() + absl::Minutes(3);
  while (absl::Now() < give_up && LastStep(OutputOf(*job)) < 100) {
    absl::StatusOr<std::string> state = slurm_->JobState(*job);
    ASSERT_TRUE(state.ok() && *state == "RUNNING")
        << "the job is not training: " << state.value_or("?") << OutputOf(*job);
    absl::SleepFor(absl::Milliseconds(200));
  }
  ASSERT_GE(LastStep(OutputOf(*job)), 100) << OutputOf(*job);
  // Slurm's preemption of the whole job: SIGTERM to every process of it
  // (the coordinator in the batch step too), SIGKILL after KillWait, then
  // back in the queue.
  ASSERT_TRUE(RunDocumented("scontrol requeue ", *job).ok());
  std::cout << "requeued at step " << LastStep(OutputOf(*job)) << "\n";
  // A requeued job waits for its BeginTime (about 2 minutes): now.
  ASSERT_TRUE(slurm_->WaitForJobState(*job, {"PENDING"}, absl::Minutes(2)).ok())
      << OutputOf(*job) << slurm_->Logs();
  const std::string first = OutputOf(*job);
  ASSERT_TRUE(RunDocumented("scontrol update ", *job).ok());
  const BatchRun r = Finish(*job);
  ASSERT_EQ(r.slurm_state, "COMPLETED") << Tail(r);
  EXPECT_TRUE(r.succeeded) << Tail(r);
  // The first allocation ended with the job PREEMPTED, every rank leaving
  // at one step; the second resumed from rank 0's checkpoint of it.
  EXPECT_NE(first.find("is JOB_STATE_PREEMPTED"), std::string::npos)
      << first.substr(first.size() > 6000 ? first.size() - 6000 : 0);
  static const std::regex left(R"(for a preemption at step (\d+))");
  const std::vector<int64_t> stops = AllNumbers(first, left);
  ASSERT_EQ(stops.size(), 2u) << Tail(r);
  EXPECT_EQ(stops[0], stops[1]);
  static const std::regex resumed(
      R"(resumes from checkpoint \d+ \(.*?\) at epoch \d+ step (\d+))");
  const std::vector<int64_t> resumes =
      AllNumbers(r.output.substr(first.size()), resumed);
  ASSERT_EQ(resumes.size(), 2u) << Tail(r);
  EXPECT_EQ(resumes[0], stops[0]);
  EXPECT_EQ(resumes[1], stops[0]);
  ASSERT_TRUE(r.accuracy.has_value()) << Tail(r);
  EXPECT_GE(*r.accuracy, 0.78) << Tail(r);
  std::cout << "preempted at step " << stops[0] << ", resumed there\n";
}

}  // namespace
}  // namespace ringleader::testing
