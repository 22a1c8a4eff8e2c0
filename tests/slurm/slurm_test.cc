// Issue 34: Ringleader on a real Slurm cluster (one node on this machine:
// tests/slurm/slurm_cluster.h), through deploy/slurm/ringleader.sbatch as a
// user runs it: sbatch, the coordinator on the allocation's first node, one
// worker per task as a job step of its own, each worker's lines prefixed
// with its task in the job's output.
//   (a) a 2-worker job runs to SUCCEEDED (the reference metric);
//   (b) scancel of one worker's step mid-training: the job goes on and
//       SUCCEEDS with the others;
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
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/integration/cluster.h"
#include "tests/partition/fashion_subset.h"
#include "tests/slurm/slurm_cluster.h"
#include "tests/testing/process.h"

namespace ringleader::testing {
namespace {

constexpr int64_t kTrain = 12000;
constexpr int64_t kTest = 2000;
constexpr absl::Duration kJobTimeout = absl::Minutes(6);

const absl::StatusOr<std::string>& DataDir() {
  static const auto* dir = new absl::StatusOr<std::string>(WriteIdxSubset(
      kFashionMnistDir, TestTempDir() + "/fashion-slurm", kTrain, kTest));
  return *dir;
}

// The MLP on the subset: 3 epochs (about 560 steps at world 2), a
// checkpoint every 50 steps, between 2 and `max_workers` workers.
std::string JobFile(const std::string& dir, int max_workers) {
  const std::string path = dir + "/job.textproto";
  std::ofstream(path) << absl::StrCat(
      "name: \"slurm-mlp\"\n", "model { arch: MODEL_ARCH_MLP }\n",
      "dataset { format: DATASET_FORMAT_IDX path: \"", DataDir().value_or(""),
      "\" shuffle: true }\n",
      "optimizer { kind: OPTIMIZER_KIND_SGD learning_rate: 0.05 momentum: "
      "0.9 }\n",
      "lr_schedule { kind: LR_SCHEDULE_KIND_COSINE }\n",
      "epochs: 3 batch_size: 32 seed: 11 progress_every_steps: 10\n",
      "min_workers: 2 max_workers: ", max_workers, "\n",
      "rendezvous_last_call_ms: 3000 max_restarts: 3\n",
      "checkpoint_every_steps: 50 checkpoint_dir: \"", dir, "/ckpt\"\n");
  std::filesystem::create_directories(dir + "/ckpt");
  return path;
}

// The daemons and ringctl, where the batch script looks for them.
std::string BinDir(const std::string& dir) {
  const std::string bin = dir + "/bin";
  std::filesystem::create_directories(bin);
  for (const char* path : {"coordinator/ringleader-coordinator",
                           "worker/ringleader-worker", "cli/ringctl"}) {
    const std::string name = std::filesystem::path(path).filename();
    std::filesystem::create_symlink(RunfilePath(path), bin + "/" + name);
  }
  return bin;
}

// What one run of the batch script printed, and its outcome.
struct BatchRun {
  std::string slurm_job;
  std::string slurm_state;
  std::string output;
  std::optional<double> accuracy;  // "accuracy 85.02%" from ringctl watch.
  bool succeeded = false;          // "ringleader: job ... is ..._SUCCEEDED".
};

std::optional<double> LastAccuracy(const std::string& out) {
  // Not top5_accuracy.
  static const std::regex re(R"([ ,]accuracy ([0-9.]+)%)");
  std::optional<double> last;
  for (std::sregex_iterator it(out.begin(), out.end(), re), end; it != end;
       ++it) {
    double a = 0;
    if (absl::SimpleAtod((*it)[1].str(), &a)) last = a / 100;
  }
  return last;
}

// The step ringctl watch last showed ("... 123/564 loss ..."), 0 if none.
int64_t LastStep(const std::string& out) {
  static const std::regex re(R"( (\d+)/(\d+) loss )");
  int64_t last = 0;
  for (std::sregex_iterator it(out.begin(), out.end(), re), end; it != end;
       ++it) {
    absl::SimpleAtoi((*it)[1].str(), &last);
  }
  return last;
}

// Every number the first capture group of `re` matches in `out`.
std::vector<int64_t> AllNumbers(const std::string& out, const std::regex& re) {
  std::vector<int64_t> found;
  for (std::sregex_iterator it(out.begin(), out.end(), re), end; it != end;
       ++it) {
    int64_t n = 0;
    if (absl::SimpleAtoi((*it)[1].str(), &n)) found.push_back(n);
  }
  return found;
}

class SlurmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (absl::Status s = SlurmCluster::Supported(); !s.ok()) {
      GTEST_SKIP() << "skipped: " << s.message();
    }
    if (!std::filesystem::exists(std::string(kFashionMnistDir) +
                                 "/train-images-idx3-ubyte.gz")) {
      GTEST_SKIP() << "skipped: " << kFashionMnistDir
                   << " missing (apt-get install dataset-fashion-mnist)";
    }
    ASSERT_TRUE(DataDir().ok()) << DataDir().status();
    absl::StatusOr<std::unique_ptr<SlurmCluster>> c =
        SlurmCluster::Start(SlurmCluster::Options());
    ASSERT_TRUE(c.ok()) << c.status();
    slurm_ = *std::move(c);
    dir_ = FreshDir(
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }

  // sbatch -n `tasks` of the batch script on a job of up to `max_workers`.
  absl::StatusOr<std::string> SubmitBatch(int tasks, int max_workers) {
    return slurm_->Submit(
        {"-n", std::to_string(tasks), "--output=" + dir_ + "/slurm-%j.out",
         "--export=ALL", RunfilePath("deploy/slurm/ringleader.sbatch"),
         JobFile(dir_, max_workers)},
        {"RINGLEADER_BIN=" + BinDir(dir_),
         "RINGLEADER_STATE_DIR=" + dir_ + "/state", "OPENBLAS_NUM_THREADS=1",
         "OMP_NUM_THREADS=1"});
  }

  std::string OutputOf(const std::string& job) {
    return ReadFileOrEmpty(absl::StrCat(dir_, "/slurm-", job, ".out"));
  }

  BatchRun Finish(const std::string& job) {
    BatchRun r;
    r.slurm_job = job;
    absl::StatusOr<std::string> state = slurm_->WaitForJobState(
        job, {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL"},
        kJobTimeout);
    r.slurm_state = state.ok() ? *state : state.status().ToString();
    r.output = OutputOf(job);
    r.accuracy = LastAccuracy(r.output);
    r.succeeded = r.output.find("is JOB_STATE_SUCCEEDED") != std::string::npos;
    std::cout << "Slurm job " << job << ": " << r.slurm_state << "; accuracy "
              << (r.accuracy ? std::to_string(*r.accuracy) : "?") << "\n";
    return r;
  }

  std::string Tail(const BatchRun& r) {
    const std::string& o = r.output;
    return absl::StrCat("\n--- job output (tail) ---\n",
                        o.size() > 6000 ? o.substr(o.size() - 6000) : o,
                        slurm_->Logs());
  }

  std::unique_ptr<SlurmCluster> slurm_;
  std::string dir_;
};

TEST_F(SlurmTest, TwoWorkersRunAJobToSuccess) {
  absl::StatusOr<std::string> job = SubmitBatch(2, 2);
  ASSERT_TRUE(job.ok()) << job.status();
  const BatchRun r = Finish(*job);
  ASSERT_EQ(r.slurm_state, "COMPLETED") << Tail(r);
  EXPECT_TRUE(r.succeeded) << Tail(r);
  ASSERT_TRUE(r.accuracy.has_value()) << Tail(r);
  EXPECT_GE(*r.accuracy, 0.78) << Tail(r);
  // Each worker's lines carry its task.
  for (const char* task : {"\n0: ", "\n1: "}) {
    EXPECT_NE(r.output.find(std::string(task) + "I"), std::string::npos)
        << "no line of task " << task << Tail(r);
  }
  EXPECT_NE(r.output.find("Slurm job " + *job), std::string::npos) << Tail(r);
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
  absl::StatusOr<ProcessResult> cancelled =
      slurm_->Client({"scancel", steps->back()});
  ASSERT_TRUE(cancelled.ok() && cancelled->exit_code == 0)
      << (cancelled.ok() ? cancelled->err : cancelled.status().ToString());
  std::cout << "cancelled step " << steps->back() << " at step "
            << LastStep(OutputOf(*job)) << "\n";
  const BatchRun r = Finish(*job);
  ASSERT_EQ(r.slurm_state, "COMPLETED") << Tail(r);
  EXPECT_TRUE(r.succeeded) << Tail(r);
  ASSERT_TRUE(r.accuracy.has_value()) << Tail(r);
  EXPECT_GE(*r.accuracy, 0.78) << Tail(r);
  EXPECT_NE(r.output.find("world 2"), std::string::npos)
      << "the job did not go on at world 2" << Tail(r);
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
  absl::StatusOr<ProcessResult> requeued =
      slurm_->Client({"scontrol", "requeue", *job});
  ASSERT_TRUE(requeued.ok() && requeued->exit_code == 0)
      << (requeued.ok() ? requeued->err : requeued.status().ToString());
  std::cout << "requeued at step " << LastStep(OutputOf(*job)) << "\n";
  // A requeued job waits for its BeginTime (about 2 minutes): now.
  ASSERT_TRUE(slurm_->WaitForJobState(*job, {"PENDING"}, absl::Minutes(2)).ok())
      << OutputOf(*job) << slurm_->Logs();
  const std::string first = OutputOf(*job);
  absl::StatusOr<ProcessResult> now =
      slurm_->Client({"scontrol", "update", "jobid=" + *job, "starttime=now"});
  ASSERT_TRUE(now.ok() && now->exit_code == 0)
      << (now.ok() ? now->err : now.status().ToString());
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
