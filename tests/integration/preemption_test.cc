// Issue 34, point 3: preemption that loses no work, with a real coordinator
// and worker processes. SIGTERM to every worker mid-training: the job is
// PREEMPTED with a checkpoint of the last completed step at its exact
// sample position and no restart spent; workers started again resume it
// there and finish with the fault-free run's model, every sample of every
// epoch applied once. SIGTERM to one rank of three: the others go on
// without it from their memory, losing no step. A coordinator killed and
// restarted during the preemption changes none of it, nor a rank whose
// collective breaks before the coordinator's notice reaches it.
#include <signal.h>
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/integration/cluster.h"
#include "tests/integration/worker_logs.h"
#include "tests/testing/job_specs.h"

namespace ringleader::testing {
namespace {

// 9600 samples in batches of 32: whole steps at world 3 (100 per epoch) and
// 2, so every sample of an epoch goes in exactly once (no padding).
constexpr int64_t kTrain = 9600;
constexpr int64_t kStepsPerEpoch = kTrain / (32 * 3);
const std::vector<std::string> kWorkerFlags = {"--max_jobs=1",
                                               "--collective_timeout_s=30"};

v1::JobSpec PreemptSpec(const std::string& name, const std::string& ckpt) {
  v1::JobSpec s = FailureJobSpec(name, ckpt);
  s.mutable_dataset()->set_synthetic_train_size(kTrain);
  // Only the epochs' checkpoints: the preemption's is one of its own.
  s.set_checkpoint_every_steps(0);
  // Generation 1 waits for all 3 workers even on a loaded machine.
  s.set_rendezvous_last_call_ms(3000);
  if (!ckpt.empty()) std::filesystem::create_directories(ckpt);
  return s;
}

std::vector<std::string> Logs(const std::string& dir, int from, int to) {
  std::vector<std::string> logs;
  for (int w = from; w < to; ++w) {
    logs.push_back(ReadFileOrEmpty(absl::StrCat(dir, "/worker", w, ".log")));
  }
  return logs;
}

// Every rank's "end" digest in `logs`.
std::set<std::string> EndDigests(const std::vector<std::string>& logs) {
  std::set<std::string> out;
  for (const std::string& log : logs) {
    for (const DigestLine& d : ParseDigestLines(log)) {
      if (d.when == "end") out.insert(d.digest);
    }
  }
  return out;
}

// Both epochs' samples once each; at most the step in flight redone.
void ExpectEverySampleOnce(const AppliedSamples& applied) {
  EXPECT_EQ(ExactlyOnceViolations(
                applied, {.epochs = 2, .samples = kTrain, .max_redone = 3}),
            "");
}

TEST(PreemptionTest, EveryWorkerSignalledPreemptsAndTheJobResumesExactly) {
  // Workers log every batch's sample ids (VLOG 1); set before any thread.
  ASSERT_EQ(setenv("GLOG_v", "1", 1), 0);
  auto cluster = Cluster::Start("preempt-whole", {"--heartbeat_ms=200"});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const std::string dir = (*cluster)->dir();
  // The fault-free run (workers 0-2) of the same job.
  v1::JobSpec ref_spec = PreemptSpec("ref", dir + "/ref");
  ref_spec.set_min_workers(3);
  auto ref = (*cluster)->Submit(ref_spec);
  ASSERT_TRUE(ref.ok()) << ref.status();
  ASSERT_TRUE((*cluster)->StartWorkers(3, kWorkerFlags).ok());
  auto ref_done = (*cluster)->WaitForEnd(*ref, absl::Minutes(4));
  ASSERT_TRUE(ref_done.ok()) << ref_done.status();
  ASSERT_EQ(ref_done->state(), v1::JOB_STATE_SUCCEEDED) << ref_done->message();

  // The preempted run (workers 3-5, then 6-8).
  v1::JobSpec spec = PreemptSpec("pre", dir + "/pre");
  spec.set_min_workers(3);
  auto job = (*cluster)->Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE((*cluster)->StartWorkers(3, kWorkerFlags).ok());
  auto running = (*cluster)->WaitUntil(
      *job, [](const v1::Job& j) { return RunningAt(j, 3, 40); },
      absl::Minutes(3));
  ASSERT_TRUE(running.ok()) << running.status();
  const int64_t seen = running->progress().step();
  const absl::Time signalled = absl::Now();
  for (int w = 3; w < 6; ++w) (*cluster)->workers()[w]->Kill(SIGTERM);
  auto preempted = (*cluster)->WaitUntil(
      *job,
      [](const v1::Job& j) { return j.state() == v1::JOB_STATE_PREEMPTED; },
      absl::Minutes(1));
  ASSERT_TRUE(preempted.ok()) << preempted.status() << "\n"
                              << Logs(dir, 3, 4)[0].substr(0, 4000);
  absl::Duration slowest_exit;
  for (int w = 3; w < 6; ++w) {
    EXPECT_EQ((*cluster)->workers()[w]->Wait(absl::Seconds(30)), 0) << w;
    slowest_exit = std::max(slowest_exit, absl::Now() - signalled);
  }
  EXPECT_LT(slowest_exit, absl::Seconds(30));  // --preempt_grace.
  const v1::CheckpointRecord ckpt = preempted->last_checkpoint();
  EXPECT_EQ(preempted->restarts(), 0);
  EXPECT_GE(ckpt.step(), seen);
  EXPECT_NE(preempted->message().find(
                absl::StrCat("checkpoint at step ", ckpt.step())),
            std::string::npos)
      << preempted->message();
  // The exact position of the last completed step: every sample of the
  // steps done in its epoch (96 per step at world 3), none more.
  EXPECT_EQ(ckpt.epoch_sample_offset(),
            (ckpt.step() - ckpt.epoch() * kStepsPerEpoch) * 96);
  EXPECT_LT(ckpt.step(), 2 * kStepsPerEpoch);

  // Workers come back: the job resumes from that checkpoint.
  ASSERT_TRUE((*cluster)->StartWorkers(3, kWorkerFlags).ok());
  auto done = (*cluster)->WaitForEnd(*job, absl::Minutes(4));
  ASSERT_TRUE(done.ok()) << done.status();
  ASSERT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  EXPECT_EQ(done->restarts(), 0);
  EXPECT_EQ(done->world_size(), 3);
  const std::vector<std::string> logs = Logs(dir, 3, 9);
  for (int w = 3; w < 6; ++w) {
    const std::vector<ResumeLine> r = ParseResumeLines(logs[w]);
    ASSERT_EQ(r.size(), 1u) << logs[w].substr(0, 4000);
    EXPECT_FALSE(r[0].from_memory);
    EXPECT_EQ(r[0].step, ckpt.step());
    EXPECT_EQ(r[0].offset, ckpt.epoch_sample_offset());
  }
  ExpectEverySampleOnce(CountAppliedSamples(logs));
  // The fault-free run's model, bit for bit, and so its metrics.
  const std::set<std::string> ref_end = EndDigests(Logs(dir, 0, 3));
  ASSERT_EQ(ref_end.size(), 1u);
  EXPECT_EQ(EndDigests(logs), ref_end);
  EXPECT_EQ(done->progress().test_accuracy(),
            ref_done->progress().test_accuracy());
  std::cout << "SIGTERM to every worker at step >= " << seen
            << ": PREEMPTED with a checkpoint at step " << ckpt.step()
            << " (epoch " << ckpt.epoch() << ", offset "
            << ckpt.epoch_sample_offset() << "), slowest exit " << slowest_exit
            << "; resumed to accuracy " << done->progress().test_accuracy()
            << " (fault-free " << ref_done->progress().test_accuracy() << ")\n";
}

TEST(PreemptionTest, ACoordinatorRestartInThePreemptionStillPreemptsWhole) {
  ASSERT_EQ(setenv("GLOG_v", "1", 1), 0);
  auto cluster = Cluster::Start("preempt-restart", {"--heartbeat_ms=200"});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Cluster& c = **cluster;
  v1::JobSpec spec = PreemptSpec("pre-restart", c.dir() + "/ckpt");
  spec.set_min_workers(3);
  auto job = c.Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE(c.StartWorkers(3, kWorkerFlags).ok());
  auto running = c.WaitUntil(
      *job, [](const v1::Job& j) { return RunningAt(j, 3, 40); },
      absl::Minutes(3));
  ASSERT_TRUE(running.ok()) << running.status();
  const int64_t seen = running->progress().step();
  // The scheduler signals the whole job, and the coordinator dies with
  // it and is started again on its state: the members' Preempt calls find
  // no coordinator, then the restarted one, which adopted the generation.
  for (int w = 0; w < 3; ++w) c.workers()[w]->Kill(SIGTERM);
  c.StopCoordinator(SIGKILL);
  ASSERT_TRUE(c.StartCoordinator(/*same_port=*/true).ok());
  auto preempted = c.WaitUntil(
      *job,
      [](const v1::Job& j) { return j.state() == v1::JOB_STATE_PREEMPTED; },
      absl::Minutes(1));
  ASSERT_TRUE(preempted.ok()) << preempted.status() << "\n"
                              << Logs(c.dir(), 0, 1)[0].substr(0, 4000);
  for (int w = 0; w < 3; ++w) {
    EXPECT_EQ(c.workers()[w]->Wait(absl::Seconds(30)), 0) << w;
  }
  const v1::CheckpointRecord ckpt = preempted->last_checkpoint();
  EXPECT_EQ(preempted->restarts(), 0);
  EXPECT_GE(ckpt.step(), seen);
  EXPECT_EQ(ckpt.epoch_sample_offset(),
            (ckpt.step() - ckpt.epoch() * kStepsPerEpoch) * 96);

  // Resumed at that step: not one lost.
  ASSERT_TRUE(c.StartWorkers(3, kWorkerFlags).ok());
  auto done = c.WaitForEnd(*job, absl::Minutes(4));
  ASSERT_TRUE(done.ok()) << done.status();
  ASSERT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  EXPECT_EQ(done->restarts(), 0);
  const std::vector<std::string> logs = Logs(c.dir(), 0, 6);
  for (int w = 3; w < 6; ++w) {
    const std::vector<ResumeLine> r = ParseResumeLines(logs[w]);
    ASSERT_EQ(r.size(), 1u) << logs[w].substr(0, 4000);
    EXPECT_EQ(r[0].step, ckpt.step());
  }
  ExpectEverySampleOnce(CountAppliedSamples(logs));
}

// Whether `path` holds `text` within `timeout` (read every 20 ms).
bool AwaitLogText(const std::string& path, const std::string& text,
                  absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  for (int n = 0; n < 10000 && absl::Now() < deadline; ++n) {
    if (ReadFileOrEmpty(path).find(text) != std::string::npos) return true;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return false;
}

// Slurm's requeue signals every task within milliseconds, and the first
// signalled rank's notice aborts its collective: a peer blocked in it can
// see that before its own notice comes and before its own signal. It waits
// for the coordinator's word instead of keeping its state to rejoin, and
// leaves with the others: the job is preempted whole, not partly. Worker 1
// acts on its notices a second late (fault injection) and is signalled once
// its collective has broken, so the order is the race's, every time.
TEST(PreemptionTest, ARankWhoseCollectiveBreaksBeforeTheNoticeLeavesWithIt) {
  auto cluster = Cluster::Start("preempt-late-notice", {"--heartbeat_ms=200"});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const std::string dir = (*cluster)->dir();
  v1::JobSpec spec = PreemptSpec("late", dir + "/late");
  spec.set_min_workers(2);
  spec.set_max_workers(2);
  auto job = (*cluster)->Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE((*cluster)->StartWorkers(1, kWorkerFlags).ok());
  std::vector<std::string> late = kWorkerFlags;
  late.push_back("--fault_delay_end_notice=1s");
  ASSERT_TRUE((*cluster)->StartWorkers(1, late).ok());
  auto running = (*cluster)->WaitUntil(
      *job, [](const v1::Job& j) { return RunningAt(j, 2, 40); },
      absl::Minutes(3));
  ASSERT_TRUE(running.ok()) << running.status();
  (*cluster)->workers()[0]->Kill(SIGTERM);
  const std::string log1 = absl::StrCat(dir, "/worker1.log");
  ASSERT_TRUE(AwaitLogText(log1, "a collective broke before the coordinator",
                           absl::Seconds(60)))
      << ReadFileOrEmpty(log1).substr(0, 6000);
  (*cluster)->workers()[1]->Kill(SIGTERM);
  auto preempted = (*cluster)->WaitUntil(
      *job,
      [](const v1::Job& j) { return j.state() == v1::JOB_STATE_PREEMPTED; },
      absl::Minutes(1));
  ASSERT_TRUE(preempted.ok()) << preempted.status() << "\n"
                              << ReadFileOrEmpty(log1).substr(0, 6000);
  for (int w = 0; w < 2; ++w) {
    EXPECT_EQ((*cluster)->workers()[w]->Wait(absl::Seconds(30)), 0) << w;
  }
  EXPECT_EQ(preempted->restarts(), 0);
  EXPECT_GE(preempted->last_checkpoint().step(), running->progress().step());
  EXPECT_NE(preempted->message().find(absl::StrCat(
                "checkpoint at step ", preempted->last_checkpoint().step())),
            std::string::npos)
      << preempted->message();
}

TEST(PreemptionTest, OneRankSignalledLeavesAndTheOthersGoOnLosingNoStep) {
  ASSERT_EQ(setenv("GLOG_v", "1", 1), 0);
  auto cluster = Cluster::Start("preempt-one",
                                {"--heartbeat_ms=200", "--preempt_window=2s"});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const std::string dir = (*cluster)->dir();
  auto job = (*cluster)->Submit(PreemptSpec("one", ""));
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE((*cluster)->StartWorkers(3, kWorkerFlags).ok());
  auto running = (*cluster)->WaitUntil(
      *job, [](const v1::Job& j) { return RunningAt(j, 3, 40); },
      absl::Minutes(3));
  ASSERT_TRUE(running.ok()) << running.status();
  ASSERT_EQ(running->world_size(), 3) << running->message();
  const int64_t seen = running->progress().step();
  (*cluster)->workers()[2]->Kill(SIGTERM);
  EXPECT_EQ((*cluster)->workers()[2]->Wait(absl::Seconds(30)), 0);
  auto done = (*cluster)->WaitForEnd(*job, absl::Minutes(3));
  ASSERT_TRUE(done.ok()) << done.status();
  const std::vector<std::string> logs = Logs(dir, 0, 3);
  ASSERT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message() << "\n"
                                                    << logs[0].substr(0, 4000);
  EXPECT_EQ(done->restarts(), 0);
  EXPECT_EQ(done->world_size(), 2);
  // Both who stayed recovered from memory at the step the leaver stopped
  // after: nothing lost.
  const std::vector<ResumeLine> r0 = ParseResumeLines(logs[0]);
  const std::vector<ResumeLine> r1 = ParseResumeLines(logs[1]);
  ASSERT_EQ(r0.size(), 1u) << logs[0].substr(0, 4000);
  ASSERT_EQ(r1.size(), 1u);
  EXPECT_TRUE(r0[0].from_memory);
  EXPECT_EQ(r1[0].step, r0[0].step);
  EXPECT_GE(r0[0].step, seen);
  const std::string stopped = absl::StrCat("stopped after step ", r0[0].step);
  EXPECT_NE(logs[2].find(stopped), std::string::npos) << stopped;
  ExpectEverySampleOnce(CountAppliedSamples(logs));
  EXPECT_EQ(done->progress().step(), done->progress().total_steps());
  std::cout << "SIGTERM to one rank of three at step >= " << seen
            << ": the others recovered from memory at step " << r0[0].step
            << "; accuracy " << done->progress().test_accuracy() << "\n";
}

}  // namespace
}  // namespace ringleader::testing
