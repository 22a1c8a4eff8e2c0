// Issue 18 (1): the coordinator is not on the training path. Two real
// workers train while the coordinator process is stopped (SIGSTOP: it keeps
// its sockets but answers nothing, so calls see DEADLINE_EXCEEDED as behind
// a partition that drops packets) for longer than a call's deadline. The
// workers keep training through it - they plan their shards themselves and
// queue their commits and reports - and once it goes on (SIGCONT) the
// commits made meanwhile reach its checkpoint history. The job finishes in
// its first generation with every step trained once.
#include <signal.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "coordinator/state_store.h"
#include "gtest/gtest.h"
#include "tests/integration/cluster.h"
#include "tests/integration/worker_logs.h"
#include "tests/testing/job_specs.h"

namespace ringleader::testing {
namespace {

constexpr int kWorld = 2;
constexpr int kBatch = 16;
constexpr int kTrain = 192000;  // A multiple of world x batch: no padding.
// 6000 steps an epoch. The stop holds two epochs' ends: both ranks queue
// two evaluations, and once the coordinator goes on one rank's second can
// arrive before the other's first (ProgressAggregator holds them; it once
// recorded only an epoch every rank's latest report had, and lost the
// first when the stop held two ends, as it did on a faster CPU).
constexpr int kEpochs = 4;
constexpr int64_t kStepsPerEpoch = kTrain / (kWorld * kBatch);
constexpr int kEvery = 50;  // A checkpoint every 50 steps.
constexpr int64_t kStopAtStep = 200;
constexpr absl::Duration kJobTimeout = absl::Minutes(10);

std::string WorkerLog(Cluster& cluster, int i) {
  return ReadFileOrEmpty(absl::StrCat(cluster.dir(), "/worker", i, ".log"));
}

std::string Logs(Cluster& cluster) {
  std::string out = ReadFileOrEmpty(cluster.dir() + "/coordinator.log");
  for (int i = 0; i < kWorld; ++i) out += WorkerLog(cluster, i);
  return out.size() > 20000 ? out.substr(out.size() - 20000) : out;
}

// The step of the last "samples ... step=S ..." line of a worker log (0:
// none yet), found from the end: the logs grow to megabytes.
int64_t LastSampleStep(const std::string& log) {
  const size_t line = log.rfind("samples generation=");
  if (line == std::string::npos) return 0;
  const size_t at = log.find(" step=", line);
  if (at == std::string::npos) return 0;
  const size_t end = log.find(' ', at + 6);
  int64_t step = 0;
  if (!absl::SimpleAtoi(log.substr(at + 6, end - at - 6), &step)) return 0;
  return step;
}

// The lowest last step over the workers' logs: ranks step together.
int64_t TrainedSteps(Cluster& cluster) {
  int64_t least = -1;
  for (int i = 0; i < kWorld; ++i) {
    const int64_t s = LastSampleStep(WorkerLog(cluster, i));
    least = least < 0 ? s : std::min(least, s);
  }
  return least;
}

bool AnyWorkerLogHas(Cluster& cluster, const std::string& needle) {
  for (int i = 0; i < kWorld; ++i) {
    if (WorkerLog(cluster, i).find(needle) != std::string::npos) return true;
  }
  return false;
}

TEST(CoordinatorOutageTest, TrainingGoesOnWhileTheCoordinatorIsStopped) {
  ASSERT_EQ(setenv("GLOG_v", "1", 1), 0);  // Every batch's sample line.
  // The default 3 s lease lapses during the 10 s stop: the coordinator
  // that resumes finds every member silent at once and keeps the
  // generation (coordinator/member_liveness.h).
  auto started = Cluster::Start("outage", {"--heartbeat_ms=200"});
  ASSERT_TRUE(started.ok()) << started.status();
  Cluster& cluster = **started;
  v1::JobSpec spec = CheckpointedMlpJobSpec("outage", cluster.dir() + "/ckpt",
                                            kTrain, kBatch, kEvery);
  std::filesystem::create_directories(spec.checkpoint_dir());
  spec.mutable_optimizer()->set_kind(v1::OPTIMIZER_KIND_SGD);
  spec.mutable_optimizer()->set_learning_rate(0.05);
  spec.set_epochs(kEpochs);
  spec.set_min_workers(kWorld);
  spec.set_max_workers(kWorld);
  spec.set_max_restarts(3);
  spec.set_rendezvous_last_call_ms(0);
  spec.set_evaluate_every_epoch(true);
  spec.set_progress_every_steps(10);
  spec.set_seed(18);
  auto job = cluster.Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  for (int i = 0; i < kWorld; ++i) {
    ASSERT_TRUE(cluster.StartWorker({"--max_jobs=1"}).ok());
  }
  auto first = cluster.WaitUntil(
      *job, [](const v1::Job& j) { return j.progress().step() > 0; },
      kJobTimeout);
  ASSERT_TRUE(first.ok() && first->progress().step() > 0)
      << first.status() << Logs(cluster);
  const absl::Time started_training = absl::Now();
  const int64_t first_step = first->progress().step();
  auto running = cluster.WaitUntil(
      *job,
      [](const v1::Job& j) {
        return j.state() == v1::JOB_STATE_RUNNING &&
               j.progress().step() >= kStopAtStep;
      },
      kJobTimeout);
  ASSERT_TRUE(running.ok() && running->progress().step() >= kStopAtStep)
      << running.status() << Logs(cluster);

  cluster.SignalCoordinator(SIGSTOP);
  const absl::Time stopped = absl::Now();
  const int64_t step_at_stop = TrainedSteps(cluster);
  // Held until the workers have trained several checkpoints and two
  // epochs' ends further and a commit's call has passed its deadline
  // (rpc_timeout, 10 s) and is being sent again: a call that returned
  // before the coordinator went on would not show the outage was survived
  // rather than waited out.
  const absl::Time give_up = stopped + absl::Minutes(2);
  bool retried = false;
  int64_t step_at_cont = step_at_stop;
  int64_t epoch_ends = 0;
  while (absl::Now() < give_up) {
    retried = retried ||
              AnyWorkerLogHas(cluster, "commit checkpoint: Deadline Exceeded");
    step_at_cont = TrainedSteps(cluster);
    epoch_ends = step_at_cont / kStepsPerEpoch - step_at_stop / kStepsPerEpoch;
    if (retried && step_at_cont >= step_at_stop + 4 * kEvery &&
        epoch_ends >= 2) {
      break;
    }
    absl::SleepFor(absl::Milliseconds(100));  // Polling the logs.
  }
  const absl::Time resumed = absl::Now();
  cluster.SignalCoordinator(SIGCONT);
  std::cout << "coordinator stopped for " << (resumed - stopped)
            << "; the workers trained from step " << step_at_stop << " to "
            << step_at_cont << " meanwhile (" << step_at_cont - step_at_stop
            << " steps)\n";
  EXPECT_TRUE(retried) << "no commit was retried past its deadline\n"
                       << Logs(cluster);
  EXPECT_GE(step_at_cont, step_at_stop + 4 * kEvery) << Logs(cluster);
  EXPECT_GE(epoch_ends, 2) << "the stop held fewer than two epochs' ends";

  auto done = cluster.WaitForEnd(*job, kJobTimeout);
  ASSERT_TRUE(done.ok()) << done.status() << Logs(cluster);
  const int64_t steps = kEpochs * kStepsPerEpoch;
  // The rates side by side: before the stop (from the job's first report
  // to the stop), during it, and after it.
  const double before_s = absl::ToDoubleSeconds(stopped - started_training);
  const double during_s = absl::ToDoubleSeconds(resumed - stopped);
  const double after_s = absl::ToDoubleSeconds(absl::Now() - resumed);
  std::cout << "steps/s before the stop "
            << (step_at_stop - first_step) / before_s << ", during "
            << (step_at_cont - step_at_stop) / during_s << ", after "
            << (steps - step_at_cont) / after_s << "\n";
  ASSERT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED)
      << done->message() << Logs(cluster);
  EXPECT_EQ(done->restarts(), 0) << done->message();
  EXPECT_EQ(done->generation(), 1);
  EXPECT_EQ(done->progress().step(), steps);
  // Every epoch's evaluation arrived, those made during the stop included.
  EXPECT_EQ(done->progress().evaluations_size(), kEpochs);

  // Every step once, every sample once per epoch: nothing was lost or
  // trained again.
  for (int i = 0; i < kWorld; ++i) {
    std::map<int64_t, int> by_step;
    std::map<int64_t, std::set<int64_t>> samples_by_epoch;
    for (const SampleLine& s : ParseSampleLines(WorkerLog(cluster, i))) {
      EXPECT_EQ(s.generation, 1);
      ++by_step[s.step];
      samples_by_epoch[s.epoch].insert(s.ids.begin(), s.ids.end());
    }
    EXPECT_EQ(static_cast<int64_t>(by_step.size()), steps) << "worker " << i;
    for (const auto& [step, n] : by_step) EXPECT_EQ(n, 1) << "step " << step;
    for (const auto& [epoch, ids] : samples_by_epoch) {
      EXPECT_EQ(static_cast<int64_t>(ids.size()), kTrain / kWorld)
          << "worker " << i << " epoch " << epoch;
    }
  }

  // The commits made while the coordinator was stopped are in its history,
  // recorded after it went on.
  cluster.StopCoordinator(SIGTERM);
  auto store = StateStore::Open(cluster.dir() + "/state.db");
  ASSERT_TRUE(store.ok()) << store.status();
  auto history = (*store)->RecentCheckpoints(
      *job, "", done->last_checkpoint().checkpoint_id(), 1000);
  ASSERT_TRUE(history.ok()) << history.status();
  std::map<int64_t, v1::CheckpointRecord> by_step;
  for (const v1::CheckpointRecord& c : *history) by_step[c.step()] = c;
  int during = 0;
  for (int64_t step = (step_at_stop / kEvery + 1) * kEvery;
       step <= step_at_cont; step += kEvery) {
    auto it = by_step.find(step);
    ASSERT_NE(it, by_step.end()) << "the commit of step " << step
                                 << ", made during the stop, is missing";
    EXPECT_GE(it->second.commit_time_ms(), absl::ToUnixMillis(resumed));
    ++during;
  }
  std::cout << during << " checkpoints committed during the stop reached "
            << "the coordinator after it went on; " << by_step.size()
            << " in the job's history\n";
  EXPECT_GE(during, 4);
  // And the job's last one is the end of training.
  EXPECT_EQ(done->last_checkpoint().step(), steps);
}

}  // namespace
}  // namespace ringleader::testing
