// Issue 48: a stop signal is handled whatever thread it lands on. The
// workers run with OpenBLAS and OpenMP at their default thread counts (the
// cluster gives them neither OPENBLAS_NUM_THREADS nor OMP_NUM_THREADS), so
// OpenBLAS's pool, started when the library loads and before main, is there
// to take a process-directed SIGTERM. One job is preempted again and again:
// each trial starts a worker, which resumes the PREEMPTED job at its
// committed step, and signals it at a random moment of training, of a
// checkpoint or of an evaluation:
//   - 20 trials with SIGTERM to the process;
//   - 3 with SIGTERM sent straight to one thread (tgkill): the oldest
//     thread after main (OpenBLAS's, started at load), the newest, one at
//     random;
//   - 1 with the worker as PID 1 of its own PID namespace (a container),
//     signalled from outside it as a container runtime does.
// Every trial: the worker exits 0 within its --preempt_grace and the job is
// PREEMPTED at the step the next worker resumes from; at the end a worker
// finishes the job, SUCCEEDED, no restart spent. The coordinator, given
// SIGTERM on one of its gRPC threads, drains and exits 0.
#include <dirent.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/integration/cluster.h"
#include "tests/integration/worker_logs.h"
#include "tests/testing/job_specs.h"

namespace ringleader::testing {
namespace {

constexpr int kProcessTrials = 20;
constexpr absl::Duration kGrace = absl::Seconds(30);  // --preempt_grace.
// The markers the worker logs at verbosity 1 (GLOG_vmodule below).
constexpr char kEvaluating[] = "evaluating the test split";
constexpr char kSaving[] = "saving the checkpoint of step";

enum class Moment { kTraining, kCheckpoint, kEvaluation };
const char* Name(Moment m) {
  switch (m) {
    case Moment::kTraining:
      return "training";
    case Moment::kCheckpoint:
      return "checkpoint";
    case Moment::kEvaluation:
      return "evaluation";
  }
  return "?";
}

// 100 steps an epoch on one worker, a checkpoint every 25 and an evaluation
// of 4,000 samples at every epoch's end: each moment comes round within a
// second or so.
v1::JobSpec StopSpec(const std::string& ckpt) {
  v1::JobSpec s = FailureJobSpec("stop-signals", ckpt);
  s.mutable_dataset()->set_synthetic_train_size(3200);
  s.mutable_dataset()->set_synthetic_test_size(4000);
  s.set_epochs(40);
  s.set_min_workers(1);
  s.set_max_workers(1);
  s.set_max_restarts(0);  // A trial that crashes fails the job.
  s.set_checkpoint_every_steps(25);
  s.set_evaluate_every_epoch(true);
  s.set_rendezvous_last_call_ms(0);
  std::filesystem::create_directories(ckpt);
  return s;
}

std::vector<pid_t> Threads(pid_t pid) {
  std::vector<pid_t> tids;
  DIR* d = ::opendir(absl::StrCat("/proc/", pid, "/task").c_str());
  if (d == nullptr) return tids;
  while (dirent* e = ::readdir(d)) {
    int tid = 0;
    if (absl::SimpleAtoi(e->d_name, &tid)) tids.push_back(tid);
  }
  ::closedir(d);
  std::sort(tids.begin(), tids.end());
  return tids;
}

// The only child of `pid` (unshare --fork's: PID 1 of the new namespace).
pid_t OnlyChild(pid_t pid) {
  const std::string children =
      ReadFileOrEmpty(absl::StrCat("/proc/", pid, "/task/", pid, "/children"));
  int child = 0;
  for (absl::string_view c :
       absl::StrSplit(children, ' ', absl::SkipWhitespace())) {
    if (absl::SimpleAtoi(c, &child)) return child;
  }
  return 0;
}

class StopSignalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The moments' markers, set before the workers start.
    ASSERT_EQ(setenv("GLOG_vmodule", "trainer_finish=1,checkpointer=1", 1), 0);
    auto c = Cluster::Start("stop-signals", {"--heartbeat_ms=200"});
    ASSERT_TRUE(c.ok()) << c.status();
    cluster_ = *std::move(c);
    auto job = cluster_->Submit(StopSpec(cluster_->dir() + "/ckpt"));
    ASSERT_TRUE(job.ok()) << job.status();
    job_ = *job;
  }

  std::string LogOf(int w) {
    return ReadFileOrEmpty(
        absl::StrCat(cluster_->log_dir(), "/worker", w, ".log"));
  }

  // Waits until worker `w` is past `moment` (for the checkpoint and the
  // evaluation: at its marker), then a random 0..`jitter_ms` more.
  void WaitForMoment(int w, Moment moment, int jitter_ms) {
    const std::string log =
        absl::StrCat(cluster_->log_dir(), "/worker", w, ".log");
    Subprocess* p = cluster_->workers()[w].get();
    // Resumed (or, on the first trial, started) and training.
    ASSERT_TRUE(WaitForFileContaining(log, "step ", absl::Minutes(1), p).ok())
        << LogOf(w);
    const size_t from = LogOf(w).size();
    if (moment != Moment::kTraining) {
      const char* marker =
          moment == Moment::kEvaluation ? kEvaluating : kSaving;
      // Bounded: each comes round every epoch (100 steps).
      const absl::Time give_up = absl::Now() + absl::Minutes(1);
      while (LogOf(w).find(marker, from) == std::string::npos) {
        ASSERT_LT(absl::Now(), give_up) << "no " << marker << "\n" << LogOf(w);
        ASSERT_TRUE(p->Running()) << LogOf(w);
        absl::SleepFor(absl::Milliseconds(2));
      }
    }
    absl::SleepFor(absl::Milliseconds(
        std::uniform_int_distribution<int>(0, jitter_ms)(random_)));
  }

  // The worker exits 0 within the grace, the job is PREEMPTED at a
  // checkpoint, and the worker started next resumes there.
  void ExpectPreempted(int w, absl::Time signalled, const std::string& what) {
    const std::optional<int> code =
        cluster_->workers()[w]->Wait(kGrace + absl::Seconds(5));
    ASSERT_EQ(code, std::optional<int>(0)) << what << "\n" << LogOf(w);
    EXPECT_LT(absl::Now() - signalled, kGrace) << what;
    auto preempted = cluster_->WaitUntil(
        job_,
        [](const v1::Job& j) { return j.state() == v1::JOB_STATE_PREEMPTED; },
        absl::Minutes(1));
    ASSERT_TRUE(preempted.ok()) << what << ": " << preempted.status() << "\n"
                                << LogOf(w);
    ASSERT_EQ(preempted->state(), v1::JOB_STATE_PREEMPTED)
        << what << ": " << preempted->message();
    EXPECT_EQ(preempted->restarts(), 0) << what;
    const int64_t step = preempted->last_checkpoint().step();
    EXPECT_GE(step, last_step_) << what;
    last_step_ = step;
    std::cout << what << ": exit 0 in " << absl::Now() - signalled
              << ", PREEMPTED at step " << step << "\n";
  }

  // Worker `w` (just started) resumed at the last preemption's step.
  void ExpectResumedAtLastStep(int w) {
    if (last_step_ == 0) return;
    const std::vector<ResumeLine> r = ParseResumeLines(LogOf(w));
    ASSERT_EQ(r.size(), 1u) << LogOf(w);
    EXPECT_EQ(r[0].step, last_step_);
  }

  // A worker started (under `prefix`), resumed and signalled at `moment` by
  // `signal_it`.
  void Trial(const std::string& what, Moment moment,
             const std::function<void(pid_t)>& signal_it,
             const std::vector<std::string>& prefix = {}) {
    const int w = static_cast<int>(cluster_->workers().size());
    auto p = cluster_->StartWorker({"--max_jobs=1"}, prefix);
    ASSERT_TRUE(p.ok()) << p.status();
    WaitForMoment(w, moment, moment == Moment::kTraining ? 300 : 20);
    ExpectResumedAtLastStep(w);
    const absl::Time signalled = absl::Now();
    signal_it((*p)->pid());
    ExpectPreempted(w, signalled, absl::StrCat(what, " at ", Name(moment)));
  }

  std::mt19937 random_{48};
  std::unique_ptr<Cluster> cluster_;
  std::string job_;
  int64_t last_step_ = 0;
};

TEST_F(StopSignalTest, EveryStopSignalPreemptsGracefullyWhereverItLands) {
  for (int t = 0; t < kProcessTrials && !HasFatalFailure(); ++t) {
    Trial(absl::StrCat("trial ", t + 1, ": SIGTERM to the process"),
          static_cast<Moment>(t % 3),
          [](pid_t pid) { ASSERT_EQ(::kill(pid, SIGTERM), 0); });
  }
  // Straight to one thread: the oldest after main (OpenBLAS's pool, started
  // when the library loaded), the newest, one at random.
  for (int pick = 0; pick < 3 && !HasFatalFailure(); ++pick) {
    Trial(absl::StrCat("SIGTERM to one thread (", pick, ")"),
          static_cast<Moment>(pick), [&, pick](pid_t pid) {
            std::vector<pid_t> tids = Threads(pid);
            tids.erase(std::remove(tids.begin(), tids.end(), pid), tids.end());
            ASSERT_GE(tids.size(), 2u) << "the worker has no threads";
            const size_t i = pick == 0 ? 0
                             : pick == 1
                                 ? tids.size() - 1
                                 : std::uniform_int_distribution<size_t>(
                                       0, tids.size() - 1)(random_);
            std::cout << "tgkill " << tids[i] << " of " << tids.size()
                      << " threads\n";
            ASSERT_EQ(::syscall(SYS_tgkill, pid, tids[i], SIGTERM), 0);
          });
  }
  if (HasFatalFailure()) return;
  if (::geteuid() == 0) {
    // PID 1 of its own namespace, signalled from the parent namespace.
    Trial("SIGTERM to PID 1 of a PID namespace", Moment::kTraining,
          [](pid_t unshare) {
            const pid_t init = OnlyChild(unshare);
            ASSERT_GT(init, 0) << "unshare has no child";
            ASSERT_EQ(::kill(init, SIGTERM), 0);
          },
          {"/usr/bin/unshare", "--pid", "--fork", "--kill-child"});
  } else {
    std::cout << "skipped the PID-namespace trial: needs root\n";
  }
  if (HasFatalFailure()) return;
  // A last worker finishes the job from the last preemption's step.
  const int w = static_cast<int>(cluster_->workers().size());
  ASSERT_TRUE(cluster_->StartWorker({"--max_jobs=1"}).ok());
  auto done = cluster_->WaitForEnd(job_, absl::Minutes(5));
  ASSERT_TRUE(done.ok()) << done.status();
  ASSERT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  EXPECT_EQ(done->restarts(), 0);
  ExpectResumedAtLastStep(w);
}

TEST(CoordinatorStopSignalTest, SigtermOnAnyThreadDrainsAndExits) {
  auto cluster = Cluster::Start("stop-coordinator");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Subprocess* coordinator = (*cluster)->coordinator();
  const std::vector<pid_t> tids = Threads(coordinator->pid());
  ASSERT_GE(tids.size(), 3u);
  // The newest thread: one of gRPC's, never the main one.
  ASSERT_EQ(::syscall(SYS_tgkill, coordinator->pid(), tids.back(), SIGTERM), 0);
  EXPECT_EQ(coordinator->Wait(absl::Minutes(1)), std::optional<int>(0))
      << ReadFileOrEmpty((*cluster)->dir() + "/coordinator.log");
  EXPECT_NE(ReadFileOrEmpty((*cluster)->dir() + "/coordinator.log")
                .find("coordinator shutting down"),
            std::string::npos);
}

}  // namespace
}  // namespace ringleader::testing
