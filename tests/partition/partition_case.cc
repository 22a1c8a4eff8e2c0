#include "tests/partition/partition_case.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "tests/integration/worker_logs.h"
#include "tests/partition/fashion_subset.h"

namespace ringleader::testing {
namespace {

// 24,000 training samples, 3 ranks, batch 32: 250 steps an epoch, 1,250 in
// 5 epochs (about 25 s on an idle 2-core machine, tests' -O0 build): long
// enough for a 10 s fault to start and end while the job trains. The whole
// test split, so that accuracies compare on 10,000 samples.
constexpr int64_t kTrainSamples = 24000;
constexpr int64_t kTestSamples = 10000;
constexpr int kEpochs = 5;
constexpr int kBatch = 32;
constexpr int kCheckpointEvery = 100;
// The fault starts here: after the first checkpoint commit, before the
// second (which falls inside it).
constexpr int64_t kFaultStep = 150;
// Where a worker is the fault's target: not rank 0 (whose extra part, the
// checkpoint commits, the coordinator cases cover).
constexpr int64_t kTargetRank = 2;

constexpr absl::Duration kUntilTraining = absl::Minutes(3);
constexpr absl::Duration kBaselineEnd = absl::Minutes(6);
constexpr absl::Duration kEndAfterHeal = absl::Minutes(5);
constexpr absl::Duration kWorkerExit = absl::Minutes(1);
constexpr double kAccuracyTolerance = 0.01;
// Log lines shown per process in a case's report.
constexpr int kLinesShown = 8;

std::string OutputsDir() {
  const char* dir = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  return dir != nullptr ? dir : TestTempDir() + "/outputs";
}

const absl::StatusOr<std::string>& DataDir() {
  static const auto* dir = new absl::StatusOr<std::string>(
      WriteIdxSubset(kFashionMnistDir, TestTempDir() + "/fashion-subset",
                     kTrainSamples, kTestSamples));
  return *dir;
}

v1::JobSpec Spec(const std::string& checkpoint_dir) {
  v1::JobSpec s;
  s.set_name("partition");
  s.mutable_model()->set_arch(v1::MODEL_ARCH_MLP);
  s.mutable_dataset()->set_format(v1::DATASET_FORMAT_IDX);
  s.mutable_dataset()->set_path(DataDir().value_or(""));
  s.mutable_dataset()->set_shuffle(true);
  s.mutable_optimizer()->set_kind(v1::OPTIMIZER_KIND_SGD);
  s.mutable_optimizer()->set_learning_rate(0.05);
  s.mutable_optimizer()->set_momentum(0.9);
  // Decayed to 0 by the last step: the final model, and so its accuracy,
  // moves little between nearby trajectories (a restart at another world
  // size takes another one).
  s.mutable_lr_schedule()->set_kind(v1::LR_SCHEDULE_KIND_COSINE);
  s.set_epochs(kEpochs);
  s.set_batch_size(kBatch);
  s.set_min_workers(2);
  s.set_max_workers(kWorkers);
  // Room to show a restart instead of failing on the first.
  s.set_max_restarts(3);
  // It forms at once when the third worker joins.
  s.set_rendezvous_last_call_ms(5000);
  // A job left without workers fails within two minutes, not ten: longer
  // than the longest fault, which a rendezvous must outlast.
  s.set_rendezvous_timeout_ms(120000);
  s.set_seed(7);
  s.set_progress_every_steps(10);
  s.set_checkpoint_every_steps(kCheckpointEvery);
  s.set_checkpoint_dir(checkpoint_dir);
  std::filesystem::create_directories(checkpoint_dir);
  return s;
}

double Seconds(absl::Duration d) { return absl::ToDoubleSeconds(d); }

struct Reference {
  double accuracy = 0;
  absl::Duration wall;
};

// The fault-free run on the same hosts, once per test binary.
absl::StatusOr<Reference> RunBaseline() {
  const absl::Time start = absl::Now();
  const std::string logs = OutputsDir() + "/baseline";
  auto h = FourHosts::Start("baseline", Spec(FreshDir("baseline-ckpt")),
                            /*max_jobs_one=*/true, logs);
  if (!h.ok()) return h.status();
  absl::StatusOr<v1::Job> end = (*h)->WaitForEnd(kBaselineEnd);
  if (!end.ok()) return end.status();
  if (end->state() != v1::JOB_STATE_SUCCEEDED || end->restarts() != 0 ||
      end->generation() != 1 || end->world_size() != kWorkers) {
    return absl::InternalError(absl::StrCat(
        "the fault-free run is no reference: ", v1::JobState_Name(end->state()),
        ", generation ", end->generation(), ", world ", end->world_size(),
        ", restarts ", end->restarts(), " ", end->message(),
        (*h)->LogTails(3000)));
  }
  for (int i = 0; i < kWorkers; ++i) {
    const std::optional<int> code = (*h)->worker(i).Wait(kWorkerExit);
    if (code != 0) {
      return absl::InternalError(absl::StrCat(
          "fault-free run: worker ", i, " (--max_jobs=1) exit code ",
          code.has_value() ? std::to_string(*code) : "none (still running)",
          (*h)->LogTails(3000)));
    }
  }
  Reference r{end->progress().test_accuracy(), absl::Now() - start};
  std::cout << "fault-free run: accuracy " << r.accuracy << ", "
            << end->progress().step() << " steps, " << Seconds(r.wall)
            << " s (logs in " << logs << ")\n";
  return r;
}

const absl::StatusOr<Reference>& Baseline() {
  static const auto* baseline = new absl::StatusOr<Reference>(RunBaseline());
  return *baseline;
}

// What a case saw, for its report and its checks.
struct Observed {
  std::string name;
  FourHosts::Fault fault = FourHosts::Fault::kNone;
  bool max_jobs_one = false;
  int target = -1;  // The worker the fault was put on.
  v1::Job at_fault;
  absl::Time start, fault_at, healed_at;
  int64_t dropped = 0;
  absl::StatusOr<v1::Job> end;
};

// A time relative to the heal ("-9.1 s": during the fault).
std::string Since(const Observed& o, absl::Time t) {
  return absl::StrFormat("%+.1f s", Seconds(t - o.healed_at));
}

// Steps each worker trained while the fault lasted (per generation) and
// after it, from the per-step lines of its log.
void ReportSteps(const Observed& o, const std::vector<std::string>& logs) {
  for (int i = 0; i < kWorkers; ++i) {
    std::map<int64_t, std::pair<int64_t, int64_t>> during;  // First, last.
    std::map<int64_t, int64_t> counts;
    int64_t after = 0;
    for (const SampleLine& s : ParseSampleLines(logs[i])) {
      if (s.time >= o.fault_at && s.time < o.healed_at) {
        auto [it, fresh] = during.try_emplace(s.generation, s.step, s.step);
        it->second.second = s.step;
        ++counts[s.generation];
      } else if (s.time >= o.healed_at) {
        ++after;
      }
    }
    std::cout << "  worker" << i << " trained while the fault lasted:";
    if (during.empty()) std::cout << " no step";
    for (const auto& [generation, steps] : during) {
      std::cout << " generation " << generation << " steps " << steps.first
                << ".." << steps.second << " (" << counts[generation] << ")";
    }
    std::cout << "; " << after << " steps after the heal\n";
  }
}

// The coordinator's view (its job as the user API showed it) from the
// fault's start on.
void ReportJobChanges(const Observed& o, FourHosts& h) {
  std::cout << "  the job as the coordinator showed it:\n";
  for (const JobRecorder::Change& c : h.JobChanges()) {
    if (c.time >= o.fault_at - absl::Seconds(1)) {
      std::cout << "    " << Since(o, c.time) << " " << c.what << "\n";
    }
  }
}

// The warnings and errors a process logged from the fault's start until
// 10 s after the heal: the first few, and how many.
void ReportLog(const Observed& o, const std::string& name,
               const std::string& log) {
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (line.empty() || (line[0] != 'W' && line[0] != 'E')) continue;
    std::optional<absl::Time> t = GlogTime(std::string(line));
    if (t && *t >= o.fault_at && *t < o.healed_at + absl::Seconds(10)) {
      lines.emplace_back(line.substr(0, 240));
    }
  }
  std::cout << "  " << name << ": " << lines.size()
            << " warnings/errors during the fault and 10 s after\n";
  for (size_t k = 0; k < lines.size() && k < kLinesShown; ++k) {
    std::cout << "    " << lines[k] << "\n";
  }
}

void Report(const Observed& o, FourHosts& h, const Reference& ref) {
  std::cout << "=== " << o.name << ": " << FaultName(o.fault)
            << (o.target >= 0 ? absl::StrCat(" (worker", o.target, ")") : "")
            << " for " << Seconds(o.healed_at - o.fault_at) << " s from step "
            << o.at_fault.progress().step() << "/"
            << o.at_fault.progress().total_steps() << "; "
            << (o.max_jobs_one ? "--max_jobs=1" : "serving workers") << "\n";
  // Local time, as the processes' logs show it.
  const auto clock = [](absl::Time t) {
    return absl::FormatTime("%H:%M:%E3S", t, absl::LocalTimeZone());
  };
  std::cout << "  fault from " << clock(o.fault_at) << " to "
            << clock(o.healed_at) << " (log time), " << o.dropped
            << " IPv4 frames dropped\n";
  if (o.end.ok()) {
    std::cout << "  job " << v1::JobState_Name(o.end->state()) << " at "
              << Since(o, h.end_time()) << " after the heal; accuracy "
              << o.end->progress().test_accuracy() << " (fault-free "
              << ref.accuracy << "), restarts " << o.end->restarts()
              << ", generation " << o.end->generation() << ", world "
              << o.end->world_size() << ", step " << o.end->progress().step()
              << (o.end->message().empty() ? "" : ", message: ")
              << o.end->message() << "\n";
  } else {
    std::cout << "  job did not end: " << o.end.status() << "\n";
  }
  const std::vector<std::string> logs = h.WorkerLogs();
  ReportSteps(o, logs);
  for (int i = 0; i < kWorkers; ++i) {
    ReportLog(o, absl::StrCat("worker", i), logs[i]);
  }
  ReportLog(o, "coordinator",
            ReadFileOrEmpty(h.log_dir() + "/coordinator.log"));
  ReportJobChanges(o, h);
  std::cout << "  case took " << Seconds(absl::Now() - o.start)
            << " s (fault-free run " << Seconds(ref.wall) << " s); logs in "
            << h.log_dir() << "\n";
}

// Whether worker `log`'s last generation is the job's final one and its
// rank there delivered its final report.
bool FinishedItsPart(const std::string& log, const v1::Job& end) {
  const std::vector<RankLine> ranks = ParseRankLines(log);
  if (ranks.empty() || ranks.back().generation != end.generation()) {
    return false;
  }
  for (const v1::RankProgress& r : end.progress().ranks()) {
    if (r.rank() == ranks.back().rank) return r.finished();
  }
  return false;
}

void CheckWorkers(const Observed& o, FourHosts& h) {
  const std::vector<std::string> logs = h.WorkerLogs();
  const bool succeeded =
      o.end.ok() && o.end->state() == v1::JOB_STATE_SUCCEEDED;
  for (int i = 0; i < kWorkers; ++i) {
    Subprocess& w = h.worker(i);
    if (!o.max_jobs_one) {
      std::optional<absl::Time> exit = h.ExitTime(i);
      EXPECT_TRUE(w.Running())
          << "worker" << i << " (serving, no --max_jobs) exited with code "
          << w.Wait(absl::ZeroDuration()).value_or(-1) << " at "
          << (exit ? Since(o, *exit) : "?") << " after the heal";
      continue;
    }
    const std::optional<int> code = w.Wait(kWorkerExit);
    const std::optional<absl::Time> exit =
        h.ExitTime(i, code ? absl::Seconds(5) : absl::ZeroDuration());
    std::cout << "  worker" << i << " (--max_jobs=1): "
              << (code ? absl::StrCat("exit code ", *code, " at ",
                                      exit ? Since(o, *exit) : "?",
                                      " after the heal")
                       : "still running")
              << "\n";
    if (!succeeded) continue;  // The job's own failure says enough.
    EXPECT_EQ(code, 0) << "worker" << i
                       << " (--max_jobs=1) after the job succeeded";
    if (exit && *exit < h.end_time() && !FinishedItsPart(logs[i], *o.end)) {
      ADD_FAILURE() << "worker" << i << " exited (code " << code.value_or(-1)
                    << ") at " << Since(o, *exit)
                    << " after the heal, before the job succeeded ("
                    << Since(o, h.end_time())
                    << "), without having finished its part of it";
    }
  }
}

void CheckJob(const Observed& o, FourHosts& h, const Reference& ref) {
  ASSERT_TRUE(o.end.ok()) << o.end.status() << h.LogTails(4000);
  ASSERT_EQ(o.end->state(), v1::JOB_STATE_SUCCEEDED)
      << o.end->message() << h.LogTails(4000);
  EXPECT_LE(std::abs(o.end->progress().test_accuracy() - ref.accuracy),
            kAccuracyTolerance)
      << "accuracy " << o.end->progress().test_accuracy() << ", fault-free "
      << ref.accuracy;
  // Only a worker that was really cut off may cost a restart.
  const int allowed = o.fault == FourHosts::Fault::kWorker ? 1 : 0;
  EXPECT_LE(o.end->restarts(), allowed)
      << FaultName(o.fault) << " for " << Seconds(o.healed_at - o.fault_at)
      << " s; " << o.end->message() << h.LogTails(2500);
}

}  // namespace

void PartitionTest::SetUp() {
  if (absl::Status s = VirtualNetwork::Supported(); !s.ok()) {
    GTEST_SKIP() << "skipped: " << s.message();
  }
  if (!std::filesystem::exists(std::string(kFashionMnistDir) +
                               "/train-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "skipped: " << kFashionMnistDir
                 << " missing (apt-get install dataset-fashion-mnist)";
  }
  ASSERT_TRUE(DataDir().ok()) << DataDir().status();
}

void PartitionTest::RunCase(FourHosts::Fault fault, absl::Duration duration,
                            bool max_jobs_one) {
  const absl::StatusOr<Reference>& ref = Baseline();
  ASSERT_TRUE(ref.ok()) << ref.status();
  Observed o;
  o.name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  o.fault = fault;
  o.max_jobs_one = max_jobs_one;
  o.start = absl::Now();
  auto h = FourHosts::Start(o.name, Spec(FreshDir(o.name + "-ckpt")),
                            max_jobs_one, OutputsDir() + "/" + o.name);
  ASSERT_TRUE(h.ok()) << h.status();
  absl::StatusOr<v1::Job> at =
      (*h)->WaitUntilTraining(kFaultStep, kUntilTraining);
  ASSERT_TRUE(at.ok() && at->state() == v1::JOB_STATE_RUNNING)
      << "the job did not train with " << kWorkers << " workers to step "
      << kFaultStep << ": "
      << (at.ok() ? at->message() : at.status().ToString())
      << (*h)->LogTails(4000);
  o.at_fault = *at;
  if (fault == FourHosts::Fault::kWorker ||
      fault == FourHosts::Fault::kHeartbeats) {
    absl::StatusOr<int> target =
        (*h)->WorkerWithRank(at->generation(), kTargetRank);
    ASSERT_TRUE(target.ok()) << target.status();
    o.target = *target;
  }
  o.fault_at = absl::Now();
  const absl::Status injected = (*h)->Inject(fault, o.target);
  ASSERT_TRUE(injected.ok()) << injected;
  // The fault itself: how long the network stays broken is what the case
  // tests, so this is a timed wait, not a synchronization.
  absl::SleepFor(duration);
  absl::StatusOr<int64_t> dropped = (*h)->Heal();
  o.healed_at = absl::Now();
  ASSERT_TRUE(dropped.ok()) << dropped.status();
  o.dropped = *dropped;
  o.end = (*h)->WaitForEnd(kEndAfterHeal);
  Report(o, **h, *ref);
  EXPECT_GT(o.dropped, 0) << "the DROP rules matched nothing: no fault";
  CheckWorkers(o, **h);
  CheckJob(o, **h, *ref);
}

}  // namespace ringleader::testing
