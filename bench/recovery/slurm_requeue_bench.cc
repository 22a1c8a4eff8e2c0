// slurm_requeue_bench: whole-job preemption through Slurm (issue 48, point
// 4), a benchmark, not a test. Each trial runs a 2-worker MLP job on a real
// one-node Slurm (tests/slurm/slurm_cluster.h) with the commands
// deploy/README.md shows (tests/slurm/slurm_batch.h: sbatch of the batch
// script, `scontrol requeue`, `scontrol update ... StartTime=now`), no
// OPENBLAS_NUM_THREADS anywhere; requeues it at a random step (uniform over
// 60..400 of its 564, seeded) and follows it to its end. One JSON line per
// trial, in preempt_bench.py's row format (path "slurm"), appended to --out:
// the step the requeue came at, the step every rank left at ("for a
// preemption at step S"), the step the second allocation resumed at, steps
// lost (their difference; target 0), each worker's SIGTERM to exit (its
// "got Terminated" and "exits with status" log lines) and the outcome.
//
//   bazel run -c opt //bench/recovery:slurm_requeue_bench --
//     --trials=10 --out=$PWD/bench/results/preempt.jsonl
// (root: the cluster's munged and slurmd need it).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <regex>
#include <sstream>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "tests/slurm/slurm_batch.h"
#include "tests/slurm/slurm_cluster.h"
#include "tests/testing/process.h"

ABSL_FLAG(int, trials, 10, "Requeues, one job each.");
ABSL_FLAG(int, seed, 1, "Seed of the requeue steps.");
ABSL_FLAG(std::string, out, "", "Append the JSON lines here (and print them).");

namespace ringleader::testing {
namespace {

// Seconds of the day of a glog line's time ("I20261207 18:48:24.181653").
std::optional<double> LineSeconds(const std::string& line) {
  static const std::regex re(R"([IWE]\d{8} (\d\d):(\d\d):(\d\d\.\d+))");
  std::smatch m;
  if (!std::regex_search(line, m, re)) return std::nullopt;
  double h = 0, mi = 0, s = 0;
  if (!absl::SimpleAtod(m[1].str(), &h) || !absl::SimpleAtod(m[2].str(), &mi) ||
      !absl::SimpleAtod(m[3].str(), &s)) {
    return std::nullopt;
  }
  return h * 3600 + mi * 60 + s;
}

// Per worker step (the line's "N: " prefix), its "got Terminated" to its
// "exits with status" in `out`, in seconds.
std::vector<double> ExitSeconds(const std::string& out) {
  std::map<std::string, double> got, exited;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    const size_t colon = line.find(": ");
    if (colon == std::string::npos || colon > 6) continue;
    const std::string step = line.substr(0, colon);
    const std::optional<double> t = LineSeconds(line);
    if (!t.has_value()) continue;
    if (line.find("got Terminated") != std::string::npos && !got.count(step)) {
      got[step] = *t;
    } else if (line.find("exits with status") != std::string::npos) {
      exited[step] = *t;
    }
  }
  std::vector<double> s;
  for (const auto& [step, t] : got) {
    if (exited.count(step)) s.push_back(exited[step] - t);
  }
  return s;
}

std::string FreshTrialDir(const std::string& name) {
  const std::string dir = TestTempDir() + "/slurm-requeue-bench/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// One requeue of one job; its row.
std::string Trial(SlurmCluster& slurm, const std::string& dir, int64_t at) {
  DocumentedSlurm batch(&slurm, dir);
  absl::StatusOr<std::string> job = batch.Submit(2, 2);
  if (!job.ok()) return absl::StrCat(R"({"error": "submit"})");
  const absl::Time give_up = absl::Now() + absl::Minutes(3);
  while (absl::Now() < give_up && LastStep(batch.OutputOf(*job)) < at) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  const int64_t signalled = LastStep(batch.OutputOf(*job));
  if (!batch.Run("scontrol requeue ", *job).ok()) {
    return R"({"error": "requeue"})";
  }
  const absl::Time requeued = absl::Now();
  if (!slurm.WaitForJobState(*job, {"PENDING"}, absl::Minutes(2)).ok()) {
    return R"({"error": "not pending"})";
  }
  const std::string first = batch.OutputOf(*job);
  // Not in the second of the requeue: Slurm revoked the job's credentials.
  absl::SleepFor(requeued + absl::Seconds(2) - absl::Now());
  if (!batch.Run("scontrol update ", *job).ok())
    return R"({"error": "update"})";
  const BatchRun r = batch.Finish(*job);
  static const std::regex left(R"(for a preemption at step (\d+))");
  static const std::regex resumed(
      R"(resumes from checkpoint \d+ \(.*?\) at epoch \d+ step (\d+))");
  const std::vector<int64_t> stops = AllNumbers(first, left);
  const std::vector<int64_t> resumes =
      AllNumbers(r.output.substr(first.size()), resumed);
  const int64_t stop = stops.empty() ? -1 : stops.front();
  const int64_t resume = resumes.empty() ? -1 : resumes.front();
  const std::vector<double> exits = ExitSeconds(first);
  return absl::StrCat(
      R"({"workload": "mlp", "mode": "whole", "path": "slurm", )",
      R"("signal_at_step": )", signalled, R"(, "stopped_at_step": )", stop,
      R"(, "resumed_at_step": )", resume, R"(, "steps_lost": )", stop - resume,
      R"(, "exit_s": [)", absl::StrJoin(exits, ", "), "], ",
      R"("first_allocation": ")",
      first.find("is JOB_STATE_PREEMPTED") != std::string::npos ? "PREEMPTED"
                                                                : "other",
      R"(", "slurm_state": ")", r.slurm_state, R"(", "final_state": ")",
      r.succeeded ? "JOB_STATE_SUCCEEDED" : "other", R"("})");
}

int Main() {
  if (absl::Status s = SlurmCluster::Supported(); !s.ok()) {
    std::cerr << "slurm_requeue_bench: " << s.message() << "\n";
    return 1;
  }
  if (absl::Status s = DocumentedSlurm::DataReady(); !s.ok()) {
    std::cerr << "slurm_requeue_bench: " << s.message() << "\n";
    return 1;
  }
  absl::StatusOr<std::unique_ptr<SlurmCluster>> slurm =
      SlurmCluster::Start(SlurmCluster::Options());
  if (!slurm.ok()) {
    std::cerr << "slurm_requeue_bench: " << slurm.status() << "\n";
    return 1;
  }
  std::mt19937 random(absl::GetFlag(FLAGS_seed));
  std::ofstream out;
  if (!absl::GetFlag(FLAGS_out).empty()) {
    out.open(absl::GetFlag(FLAGS_out), std::ios::app);
  }
  for (int t = 0; t < absl::GetFlag(FLAGS_trials); ++t) {
    const int64_t at = std::uniform_int_distribution<int64_t>(60, 400)(random);
    const std::string row =
        Trial(**slurm, FreshTrialDir(absl::StrCat("requeue-", t)), at);
    std::cout << row << std::endl;
    if (out.is_open()) out << row << std::endl;
  }
  return 0;
}

}  // namespace
}  // namespace ringleader::testing

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  // `bazel run` starts it in its runfiles tree without saying so.
  if (std::getenv("RUNFILES_DIR") == nullptr &&
      std::getenv("TEST_SRCDIR") == nullptr) {
    setenv("RUNFILES_DIR",
           std::filesystem::current_path().parent_path().c_str(), 1);
  }
  return ringleader::testing::Main();
}
