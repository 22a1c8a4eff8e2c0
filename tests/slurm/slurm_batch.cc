#include "tests/slurm/slurm_batch.h"

#include <filesystem>
#include <fstream>
#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "tests/partition/fashion_subset.h"
#include "tests/slurm/documented_commands.h"
#include "tests/testing/numeric_bounds.h"
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

// deploy/README.md's Slurm commands.
const absl::StatusOr<std::vector<std::string>>& DocumentedCommands() {
  static const auto* commands =
      new absl::StatusOr<std::vector<std::string>>(ShellBlockUnder(
          ReadFileOrEmpty(RunfilePath("deploy/README.md")), "## Slurm"));
  return *commands;
}

// The documented command that starts with `prefix`, with each of
// `replace`'s strings replaced in every word, and $PWD/bazel-bin/ (where
// `bazel build` leaves //deploy:bin) the runfiles root this runs in.
absl::StatusOr<std::vector<std::string>> Documented(
    const std::string& prefix,
    std::vector<std::pair<std::string, std::string>> replace) {
  if (!DocumentedCommands().ok()) return DocumentedCommands().status();
  absl::StatusOr<std::vector<std::string>> c =
      CommandStartingWith(*DocumentedCommands(), prefix);
  if (!c.ok()) return c.status();
  replace.push_back(
      {"$PWD/bazel-bin/", std::filesystem::current_path().string() + "/"});
  for (std::string& word : *c) word = absl::StrReplaceAll(word, replace);
  return c;
}

}  // namespace

std::optional<double> LastAccuracy(const std::string& out) {
  static const std::regex re(R"([ ,]accuracy ([0-9.]+)%)");
  std::optional<double> last;
  for (std::sregex_iterator it(out.begin(), out.end(), re), end; it != end;
       ++it) {
    double a = 0;
    if (absl::SimpleAtod((*it)[1].str(), &a)) last = a / 100;
  }
  return last;
}

int64_t LastStep(const std::string& out) {
  static const std::regex re(R"( (\d+)/(\d+) loss )");
  int64_t last = 0;
  for (std::sregex_iterator it(out.begin(), out.end(), re), end; it != end;
       ++it) {
    absl::SimpleAtoi((*it)[1].str(), &last);
  }
  return last;
}

std::vector<int64_t> AllNumbers(const std::string& out, const std::regex& re) {
  std::vector<int64_t> found;
  for (std::sregex_iterator it(out.begin(), out.end(), re), end; it != end;
       ++it) {
    int64_t n = 0;
    if (absl::SimpleAtoi((*it)[1].str(), &n)) found.push_back(n);
  }
  return found;
}

absl::Status DocumentedSlurm::DataReady() {
  if (!std::filesystem::exists(std::string(kFashionMnistDir) +
                               "/train-images-idx3-ubyte.gz")) {
    return absl::FailedPreconditionError(absl::StrCat(
        kFashionMnistDir, " missing (apt-get install dataset-fashion-mnist)"));
  }
  return DataDir().status();
}

std::string DocumentedSlurm::JobFile(int max_workers) {
  const std::string path = dir_ + "/job.textproto";
  std::ofstream(path) << absl::StrCat(
      "name: \"slurm-mlp\"\n", "model { arch: MODEL_ARCH_MLP }\n",
      "dataset { format: DATASET_FORMAT_IDX path: \"", DataDir().value_or(""),
      "\" shuffle: true }\n",
      "optimizer { kind: OPTIMIZER_KIND_SGD learning_rate: 0.05 momentum: "
      "0.9 }\n",
      "lr_schedule { kind: LR_SCHEDULE_KIND_COSINE }\n",
      "epochs: 3 batch_size: 32 seed: ", TrainingSeed(11),
      " progress_every_steps: 10\n",
      "min_workers: 2 max_workers: ", max_workers, "\n",
      "rendezvous_last_call_ms: 3000 max_restarts: 3\n",
      "checkpoint_every_steps: 50 checkpoint_dir: \"", dir_, "/ckpt\"\n");
  std::filesystem::create_directories(dir_ + "/ckpt");
  return path;
}

absl::StatusOr<std::string> DocumentedSlurm::Submit(int tasks,
                                                    int max_workers) {
  absl::StatusOr<std::vector<std::string>> sbatch =
      Documented("sbatch -n ",
                 {{"examples/fashion_mnist.textproto", JobFile(max_workers)}});
  if (!sbatch.ok()) return sbatch.status();
  std::vector<std::string> args(sbatch->begin() + 1, sbatch->end());
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "-n") args[i + 1] = std::to_string(tasks);
  }
  return slurm_->Submit(args, {"SCRATCH=" + dir_});
}

absl::Status DocumentedSlurm::Run(const std::string& prefix,
                                  const std::string& job,
                                  const std::string& step) {
  std::vector<std::pair<std::string, std::string>> replace;
  if (!step.empty()) replace.push_back({"JOBID.3", step});
  replace.push_back({"JOBID", job});
  absl::StatusOr<std::vector<std::string>> c = Documented(prefix, replace);
  if (!c.ok()) return c.status();
  absl::StatusOr<ProcessResult> r = slurm_->Client(*c);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    return absl::InternalError(
        absl::StrCat(absl::StrJoin(*c, " "), ": ", r->err));
  }
  std::cout << absl::StrJoin(*c, " ") << "\n";
  return absl::OkStatus();
}

std::string DocumentedSlurm::OutputOf(const std::string& job) {
  absl::StatusOr<std::vector<std::string>> tail =
      Documented("tail -f ", {{"${SCRATCH:-$HOME}", dir_}, {"JOBID", job}});
  return tail.ok() && tail->size() == 3 ? ReadFileOrEmpty((*tail)[2]) : "";
}

BatchRun DocumentedSlurm::Finish(const std::string& job) {
  BatchRun r;
  r.slurm_job = job;
  absl::StatusOr<std::string> state = slurm_->WaitForJobState(
      job, {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL"},
      kJobTimeout);
  r.slurm_state = state.ok() ? *state : state.status().ToString();
  r.output = OutputOf(job);
  r.accuracy = LastAccuracy(r.output);
  if (r.accuracy.has_value()) ReportNumeric("slurm.test_accuracy", *r.accuracy);
  r.succeeded = r.output.find("is JOB_STATE_SUCCEEDED") != std::string::npos;
  std::cout << "Slurm job " << job << ": " << r.slurm_state << "; accuracy "
            << (r.accuracy ? std::to_string(*r.accuracy) : "?") << "\n";
  return r;
}

std::string DocumentedSlurm::Tail(const BatchRun& r) {
  const std::string& o = r.output;
  return absl::StrCat("\n--- job output (tail) ---\n",
                      o.size() > 6000 ? o.substr(o.size() - 6000) : o,
                      slurm_->Logs());
}

}  // namespace ringleader::testing
