// failure_detection_bench: time from kill -9 of one of three real
// ringleader-worker processes (synthetic dataset, CPU) to the survivors
// aborted and rejoined, i.e. the coordinator formed the next generation with
// the two survivors, at the coordinator's default lease (3 s, heartbeat 1 s)
// and at a short one (1 s, heartbeat 200 ms). Prints the figures beside
// torchrun's documented defaults and writes
// bench/results/failure_detection.json.
//
//   bazel run //bench/recovery:failure_detection_bench     (or
//   bench/recovery/run_failure_detection.sh)
//
// Two ways to fail: kill -9 (the kernel closes the worker's sockets, so the
// survivors' collectives fail at once) and SIGSTOP (a hung worker, or a host
// gone without closing its connections: its lease lapses, and its peers'
// heartbeats say they are blocked in a collective, which convicts it at
// once; coordinator/member_liveness.h).
//
// The clock starts right after kill(2) returns and stops when WatchJob shows
// the job RUNNING at world size 2 in a newer generation (the survivors can
// only be in it after each aborted its Gloo communicator and joined again).
// The job's rendezvous_last_call_ms is 500: that much of each figure is the
// rendezvous waiting for a third worker after the two survivors joined.
// Also printed: the survivors' first progress report in the new generation
// (every 10 steps), i.e. they train again; and, from the processes' logs,
// how long after the coordinator ended the generation (its "ended ...;
// telling its watching members" line) each survivor noticed (its daemon's
// "generation G of J ended:" line), whether by the pushed WatchGeneration
// event or by a heartbeat's answer.
//
// The "-nopush" configurations run the coordinator with
// --push_generation_end=false (members learn at their next heartbeat, as
// before WatchGeneration). The repetitions of the selected configurations
// are interleaved (run 1 of each, then run 2 of each, ...) so that a
// comparison sees the same load on this shared machine.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/common/bench_env.h"
#include "tests/integration/cluster.h"
#include "tests/integration/worker_logs.h"
#include "tests/testing/job_specs.h"

ABSL_FLAG(int, repeats, 3, "Kills per configuration.");
ABSL_FLAG(int64_t, kill_at_step, 60, "Kill once the job passed this step.");
ABSL_FLAG(std::string, only, "",
          "Run only the configurations whose name contains this (e.g. "
          "sigstop-default); the others are left out of the JSON.");
ABSL_FLAG(std::string, results_dir, "",
          "Where failure_detection.json goes (default: "
          "<workspace>/bench/results).");

namespace ringleader::bench {
namespace {

using testing::Cluster;

struct Config {
  std::string name;
  int64_t lease_ms;
  int64_t heartbeat_ms;
  // SIGKILL: the process dies and the kernel closes its sockets, so the
  // survivors' Gloo pairs fail at once. SIGSTOP: a hung worker (or a host
  // gone without a FIN): only the coordinator's lease can tell.
  int signal = SIGKILL;
  // Members hear of a generation's end by WatchGeneration (false: at their
  // next heartbeat only).
  bool push = true;
};

struct Run {
  double recovery_s = -1;  // kill -9 -> next generation of 2 formed.
  double end_s = -1;       // kill -9 -> the 3-rank generation ended.
  // kill -9 -> the survivors' first progress report in the new generation
  // (every 10 steps): they train again.
  double first_report_s = -1;
  // From the logs: the coordinator ended the generation -> each survivor's
  // daemon noticed (ms; empty when a log line is missing).
  std::vector<double> notice_ms;
  std::string error;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// When the first line of `log` containing `needle` was logged.
std::optional<absl::Time> FirstLineTime(const std::string& log,
                                        const std::string& needle) {
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find(needle) != std::string::npos) return testing::GlogTime(line);
  }
  return std::nullopt;
}

// The survivors' notice of generation `gen` of `job`, after the
// coordinator's end of it, from the cluster's logs.
std::vector<double> NoticeMs(const std::string& log_dir, const std::string& job,
                             int64_t gen) {
  std::vector<double> out;
  const std::optional<absl::Time> ended = FirstLineTime(
      ReadFile(log_dir + "/coordinator.log"),
      absl::StrCat("generation ", gen, " of job ", job, " ended ("));
  if (!ended.has_value()) return out;
  for (int w = 0; w < 2; ++w) {
    const std::optional<absl::Time> noticed = FirstLineTime(
        ReadFile(absl::StrCat(log_dir, "/worker", w, ".log")),
        absl::StrCat("generation ", gen, " of ", job, " ended: "));
    if (noticed.has_value()) {
      out.push_back(absl::ToDoubleMilliseconds(*noticed - *ended));
    }
  }
  return out;
}

Run RunOnce(const Config& c, int rep) {
  Run out;
  auto cluster = Cluster::Start(
      absl::StrCat("failure-bench-", c.name, "-", rep),
      {absl::StrCat("--lease_ms=", c.lease_ms),
       absl::StrCat("--heartbeat_ms=", c.heartbeat_ms),
       absl::StrCat("--push_generation_end=", c.push ? "true" : "false")});
  if (!cluster.ok()) {
    out.error = cluster.status().ToString();
    return out;
  }
  v1::JobSpec s =
      testing::FailureJobSpec("failure-bench", (*cluster)->dir() + "/ckpt");
  std::filesystem::create_directories(s.checkpoint_dir());
  absl::StatusOr<std::string> job = (*cluster)->Submit(s);
  if (!job.ok()) {
    out.error = job.status().ToString();
    return out;
  }
  for (int i = 0; i < 3; ++i) {
    if (auto w = (*cluster)->StartWorker(
            {"--max_jobs=1", "--collective_timeout_s=600"});
        !w.ok()) {
      out.error = w.status().ToString();
      return out;
    }
  }
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(4));
  v1::WatchJobRequest req;
  req.set_job_id(*job);
  auto stream = (*cluster)->users().WatchJob(&ctx, req);
  v1::Job snap;
  bool killed = false;
  absl::Time killed_at;
  int64_t gen_at_kill = 0;
  int64_t step_at_recovery = -1;
  // The 3-rank generation and the step it was first seen at: a third
  // worker that joins late ends a 2-rank generation with a scale-up, and a
  // signal during the new generation's bootstrap (KV waits, Gloo connect)
  // measures that phase, not a hang in training. So the signal waits for
  // 20 steps of the 3-rank generation too.
  int64_t gen3 = 0, gen3_step = 0;
  for (int n = 0; n < 100000 && stream->Read(&snap); ++n) {
    if (snap.state() == v1::JOB_STATE_RUNNING && snap.world_size() == 3 &&
        snap.generation() != gen3) {
      gen3 = snap.generation();
      gen3_step = snap.progress().step();
    }
    if (!killed && snap.state() == v1::JOB_STATE_RUNNING &&
        snap.world_size() == 3 &&
        snap.progress().step() >= absl::GetFlag(FLAGS_kill_at_step) &&
        snap.progress().step() >= gen3_step + 20) {
      (*cluster)->workers()[2]->Kill(c.signal);
      killed_at = absl::Now();
      killed = true;
      gen_at_kill = snap.generation();
      continue;
    }
    if (killed && out.end_s < 0 &&
        (snap.state() != v1::JOB_STATE_RUNNING ||
         snap.generation() > gen_at_kill)) {
      out.end_s = absl::ToDoubleSeconds(absl::Now() - killed_at);
    }
    if (killed && out.recovery_s < 0 && snap.state() == v1::JOB_STATE_RUNNING &&
        snap.generation() > gen_at_kill && snap.world_size() == 2) {
      out.recovery_s = absl::ToDoubleSeconds(absl::Now() - killed_at);
      step_at_recovery = snap.progress().step();
      continue;
    }
    if (out.recovery_s >= 0 && snap.progress().step() != step_at_recovery) {
      out.first_report_s = absl::ToDoubleSeconds(absl::Now() - killed_at);
      break;
    }
    if (snap.state() == v1::JOB_STATE_SUCCEEDED ||
        snap.state() == v1::JOB_STATE_FAILED ||
        snap.state() == v1::JOB_STATE_CANCELLED) {
      if (out.recovery_s < 0) {
        out.error = absl::StrCat("job ended ", v1::JobState_Name(snap.state()),
                                 " before recovering: ", snap.message());
      }
      break;
    }
  }
  ctx.TryCancel();
  if (killed) (*cluster)->workers()[2]->Kill(SIGKILL);  // If stopped.
  if (killed)
    out.notice_ms = NoticeMs((*cluster)->log_dir(), *job, gen_at_kill);
  if (!killed && out.error.empty()) out.error = "never ran with 3 ranks";
  if (killed && out.recovery_s < 0 && out.error.empty()) {
    out.error = "no generation of 2 formed in time";
  }
  return out;
}

// A configuration's runs, and their summary line and JSON object.
struct Results {
  std::vector<double> rec, ends, reports, notice;
};

std::string Summary(const Config& c, const Results& r, std::string* json) {
  std::vector<double> sorted = r.rec;
  const double med = Median(r.rec);
  const double worst = Percentile(sorted, 100);
  std::vector<double> notice_sorted = r.notice;
  const double notice_med = r.notice.empty() ? -1 : Median(r.notice);
  const double notice_max =
      r.notice.empty() ? -1 : Percentile(notice_sorted, 100);
  // A dead worker's peers see its sockets close: under 3 s. A hung one
  // is known only by its lease: the target is lease + 0.5 s.
  const double target = c.signal == SIGKILL ? 3.0 : c.lease_ms / 1000.0 + 0.5;
  absl::StrAppend(
      json, json->back() == '[' ? "\n" : ",\n",
      absl::StrFormat(
          "    {\"name\": \"%s\", \"signal\": \"%s\", \"push\": %s, "
          "\"lease_ms\": %d, "
          "\"heartbeat_ms\": %d, \"recovery_median_s\": %.3f, "
          "\"recovery_max_s\": %.3f, \"recovery_s\": [%s], "
          "\"generation_ended_s\": [%s], "
          "\"first_progress_report_s\": [%s], "
          "\"notice_after_end_median_ms\": %.1f, "
          "\"notice_after_end_max_ms\": %.1f, "
          "\"notice_after_end_ms\": [%s]}",
          c.name, c.signal == SIGKILL ? "SIGKILL" : "SIGSTOP",
          c.push ? "true" : "false", c.lease_ms, c.heartbeat_ms, med, worst,
          absl::StrJoin(r.rec, ", "), absl::StrJoin(r.ends, ", "),
          absl::StrJoin(r.reports, ", "), notice_med, notice_max,
          absl::StrJoin(r.notice, ", ")));
  return absl::StrFormat(
      "  %-22s median %.3f s, max %.3f s (target < %.1f s: median %s, max "
      "%s); survivors noticed the end %.1f ms (median), %.1f ms (max) after "
      "the coordinator ended it",
      c.name + ":", med, worst, target, med < target ? "met" : "MISSED",
      worst < target ? "met" : "MISSED", notice_med, notice_max);
}

int Main(const char* argv0) {
  SetUpRunfiles(argv0);
  const std::string results = ResultsDir(absl::GetFlag(FLAGS_results_dir));
  const std::vector<Config> all = {
      {"kill9-default", 3000, 1000, SIGKILL},
      {"kill9-short", 1000, 200, SIGKILL},
      {"sigstop-default", 3000, 1000, SIGSTOP},
      {"sigstop-default-nopush", 3000, 1000, SIGSTOP, /*push=*/false},
      {"sigstop-short", 1000, 200, SIGSTOP}};
  std::vector<Config> configs;
  for (const Config& c : all) {
    if (absl::StrContains(c.name, absl::GetFlag(FLAGS_only))) {
      configs.push_back(c);
    }
  }
  const std::string date = UtcNow();
  const std::string machine = MachineDescription();
  const double load = LoadAverage1();
  std::string json = absl::StrCat(
      "{\n  \"benchmark\": \"failure_detection\",\n  \"date\": \"", date,
      "\",\n  \"machine\": \"", machine,
      "\",\n  \"load_average_1m_before\": ", load,
      ",\n  \"definition\": \"the signal to 1 of 3 workers -> the "
      "coordinator formed the next generation with the 2 survivors (WatchJob); "
      "the job's rendezvous_last_call_ms is 500; notice_after_end_ms: the "
      "coordinator's log line ending the generation -> each survivor's "
      "daemon log line aborting it; runs of the configurations "
      "interleaved\",\n"
      "  \"torchrun_documented\": {\"rendezvous_keep_alive_interval_s\": 5, "
      "\"keep_alive_max_attempt\": 3, \"dead_node_detection_s\": 15, "
      "\"nccl_timeout_s\": 600},\n  \"configs\": [");
  std::cout << "Failure detection: kill -9 or SIGSTOP of 1 of 3 workers -> "
               "survivors in the next generation ("
            << machine << ", load " << load << ")\n";
  std::vector<Results> res(configs.size());
  for (int rep = 0; rep < absl::GetFlag(FLAGS_repeats); ++rep) {
    for (size_t ci = 0; ci < configs.size(); ++ci) {
      const Config& c = configs[ci];
      Run r = RunOnce(c, rep);
      if (!r.error.empty()) {
        std::cerr << c.name << " run " << rep + 1 << ": " << r.error << "\n";
        return 1;
      }
      std::cout << absl::StrFormat(
                       "  %-22s run %d: generation ended %.3f s, survivors "
                       "rejoined %.3f s, first progress report %.3f s, "
                       "noticed %s ms after the end",
                       c.name, rep + 1, r.end_s, r.recovery_s, r.first_report_s,
                       absl::StrJoin(r.notice_ms, ", "))
                << std::endl;
      res[ci].rec.push_back(r.recovery_s);
      res[ci].ends.push_back(r.end_s);
      res[ci].reports.push_back(r.first_report_s);
      for (double n : r.notice_ms) res[ci].notice.push_back(n);
    }
  }
  for (size_t ci = 0; ci < configs.size(); ++ci) {
    std::cout << Summary(configs[ci], res[ci], &json) << "\n";
  }
  for (size_t a = 0; a < configs.size(); ++a) {
    for (size_t b = 0; b < configs.size(); ++b) {
      if (configs[b].name != configs[a].name + "-nopush") continue;
      std::cout << absl::StrFormat(
          "  %s vs %s: recovery median %.3f s vs %.3f s (ratio %.2f)\n",
          configs[a].name, configs[b].name, Median(res[a].rec),
          Median(res[b].rec), Median(res[a].rec) / Median(res[b].rec));
    }
  }
  absl::StrAppend(&json, "\n  ]\n}\n");
  std::cout << "torchrun as documented: a dead node is noticed by the c10d "
               "rendezvous after keep-alive 5 s x 3 missed = ~15 s; a "
               "survivor blocked in an NCCL collective waits for the process "
               "group timeout, 10 min by default.\n";
  const std::string path = results + "/failure_detection.json";
  std::ofstream(path) << json;
  std::cout << "wrote " << path << "\n";
  return 0;
}

}  // namespace
}  // namespace ringleader::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return ringleader::bench::Main(argv[0]);
}
