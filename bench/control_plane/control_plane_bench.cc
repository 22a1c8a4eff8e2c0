// control_plane_bench: N simulated workers register with a real coordinator
// process, rendezvous in one job with min = max = N, and pass R barrier
// rounds; per N it prints the time to full rendezvous, barrier p50/p99 and the
// coordinator's CPU seconds, and writes bench/results/control_plane.json.
//
//   bazel run //bench/control_plane:control_plane_bench            (or
//   bench/control_plane/run_control_plane.sh)
//
// The simulated workers (bench/control_plane/control_plane_clients) are state machines on
// gRPC's callback API: one client process drives up to 1024 of them over a
// few channels with gRPC's own small thread pool (no thread per worker). The
// driver starts the clients as child processes of this same binary
// (--mode=clients); they all begin at one wall-clock instant and write their
// timestamps to a file.
//
// Definitions (wall clock, shared by the processes of one machine):
//   register:   first Register sent -> last Register answered.
//   rendezvous: first JoinRendezvous sent -> last JoinRendezvous answered
//               (every worker holds its rank). A worker joins as soon as
//               its first heartbeat returns the job assignment.
//   barrier:    per rank and round, the round's last arrival sent -> this
//               rank's release received (what a rank waits beyond the
//               slowest rank); p50/p99 over all ranks and rounds. "round":
//               the last arrival -> the last rank released. Each worker
//               enters round r+1 as soon as it sees round r released.
//   coordinator CPU: utime + stime of the coordinator process (/proc) from
//               just before the clients start to after they all left.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/common/bench_env.h"
#include "bench/control_plane/control_plane_clients.h"
#include "grpcpp/grpcpp.h"
#include "ringleader/v1/user_service.grpc.pb.h"
#include "tests/testing/process.h"

ABSL_FLAG(std::string, mode, "driver", "driver, or clients (internal).");
ABSL_FLAG(std::string, sizes, "64,256,1024,4096", "Worker counts N to run.");
ABSL_FLAG(int, repeats, 3, "Runs per N (the figures are their medians).");
ABSL_FLAG(int, rounds, 50, "Barrier rounds per run (20 at N >= 1024).");
ABSL_FLAG(int, procs, 0,
          "Client processes per run; 0: 1 up to N=256, then N/512 (max 4).");
ABSL_FLAG(int, channels, 4, "gRPC channels (connections) per client process.");
ABSL_FLAG(std::string, barriers, "shared,stream,unary",
          "Barrier protocols to run per N, side by side: shared (one "
          "BarrierStream per connection, carrying all its workers' arrivals, "
          "as a host agent would), stream (one BarrierStream per worker), "
          "unary (one Barrier call per arrival).");
ABSL_FLAG(std::string, barrier, "stream", "shared, stream or unary (clients).");
ABSL_FLAG(int64_t, lease_ms, 3000, "Coordinator --lease_ms.");
ABSL_FLAG(int64_t, heartbeat_ms, 1000, "Coordinator --heartbeat_ms.");
ABSL_FLAG(
    std::string, results_dir, "",
    "Where control_plane.json goes (default: <workspace>/bench/results).");
ABSL_FLAG(std::string, coordinator_binary, "",
          "Coordinator binary (default: from the runfiles).");
// Client mode.
ABSL_FLAG(std::string, coordinator, "", "Coordinator HOST:PORT (clients).");
ABSL_FLAG(int, workers, 0, "Simulated workers in this process (clients).");
ABSL_FLAG(int, first_index, 0, "Index of this process's first worker.");
ABSL_FLAG(int64_t, start_at_us, 0, "Unix time (us) to start at (clients).");
ABSL_FLAG(std::string, out, "", "Timestamps file (clients).");

namespace ringleader::bench {
namespace {

using testing::Subprocess;

int ClientsMain() {
  const std::string name = absl::GetFlag(FLAGS_barrier);
  const std::optional<BarrierProtocol> protocol = ParseBarrierProtocol(name);
  if (!protocol) {
    std::cerr << "--barrier: '" << name << "' is not unary, stream or shared\n";
    return 2;
  }
  ClientsConfig config;
  config.coordinator = absl::GetFlag(FLAGS_coordinator);
  config.workers = absl::GetFlag(FLAGS_workers);
  config.first_index = absl::GetFlag(FLAGS_first_index);
  config.rounds = absl::GetFlag(FLAGS_rounds);
  config.channels = absl::GetFlag(FLAGS_channels);
  config.protocol = *protocol;
  config.heartbeat_ms = absl::GetFlag(FLAGS_heartbeat_ms);
  config.start_at_us = absl::GetFlag(FLAGS_start_at_us);
  RunClients(config, absl::GetFlag(FLAGS_out));
  return 0;
}

// ---- Driver ----

struct RunResult {
  int n = 0;
  std::string barrier;
  int procs = 0;
  int rounds = 0;
  int failed = 0;
  double register_s = 0, rendezvous_s = 0, barrier_p50_ms = 0,
         barrier_p99_ms = 0, round_p50_ms = 0, barrier_max_ms = 0, cpu_s = 0,
         wall_s = 0;
  double load = 0;
  std::string first_error;
};

std::vector<int64_t> ParseList(const std::string& s) {
  std::vector<int64_t> out;
  for (absl::string_view p : absl::StrSplit(s, ',', absl::SkipEmpty())) {
    int64_t v = 0;
    if (absl::SimpleAtoi(p, &v)) out.push_back(v);
  }
  return out;
}

absl::StatusOr<RunResult> RunOnce(int n, const std::string& barrier,
                                  const std::string& dir) {
  RunResult r;
  r.n = n;
  r.barrier = barrier;
  r.rounds = n >= 1024 ? std::min(20, absl::GetFlag(FLAGS_rounds))
                       : absl::GetFlag(FLAGS_rounds);
  int procs = absl::GetFlag(FLAGS_procs);
  if (procs <= 0) procs = n <= 256 ? 1 : std::min(4, n / 512);
  procs = std::max(1, std::min(procs, n));
  r.procs = procs;
  r.load = LoadAverage1();

  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string port_file = dir + "/port";
  std::string coord = absl::GetFlag(FLAGS_coordinator_binary);
  if (coord.empty())
    coord = testing::RunfilePath("coordinator/ringleader-coordinator");
  testing::ProcessOptions po;
  po.stderr_path = dir + "/coordinator.log";
  po.stdout_path = dir + "/coordinator.out";
  absl::StatusOr<std::unique_ptr<Subprocess>> coordinator = Subprocess::Start(
      {coord, "--listen=127.0.0.1:0", "--state=" + dir + "/state.db",
       "--port_file=" + port_file,
       absl::StrCat("--lease_ms=", absl::GetFlag(FLAGS_lease_ms)),
       absl::StrCat("--heartbeat_ms=", absl::GetFlag(FLAGS_heartbeat_ms))},
      po);
  if (!coordinator.ok()) return coordinator.status();
  absl::StatusOr<int> port = testing::WaitForPortFile(
      port_file, absl::Seconds(30), coordinator->get());
  if (!port.ok()) return port.status();
  const std::string target = absl::StrCat("127.0.0.1:", *port);

  // One job that takes exactly N workers.
  auto channel =
      grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
  auto users = v1::UserService::NewStub(channel);
  v1::SubmitJobRequest sreq;
  v1::JobSpec* s = sreq.mutable_spec();
  s->set_name(absl::StrCat("cp-bench-", n));
  s->mutable_model()->set_arch(v1::MODEL_ARCH_MLP);
  s->mutable_dataset()->set_format(v1::DATASET_FORMAT_SYNTHETIC);
  s->mutable_dataset()->set_synthetic_train_size(1 << 20);
  s->mutable_dataset()->set_synthetic_test_size(1 << 16);
  s->mutable_optimizer()->set_kind(v1::OPTIMIZER_KIND_SGD);
  s->mutable_optimizer()->set_learning_rate(0.05);
  s->set_epochs(1);
  s->set_batch_size(32);
  s->set_min_workers(n);
  s->set_max_workers(n);
  s->set_max_restarts(0);
  v1::SubmitJobResponse sresp;
  {
    grpc::ClientContext ctx;
    SetDeadline(ctx, absl::Seconds(10));
    grpc::Status st = users->SubmitJob(&ctx, sreq, &sresp);
    if (!st.ok()) {
      return absl::InternalError(absl::StrCat("submit: ", st.error_message()));
    }
  }

  const pid_t cpid = (*coordinator)->pid();
  const double cpu0 = ProcessCpuSeconds(cpid);
  const int64_t start_at = NowUs() + 1500000;  // Lets the clients connect.
  std::vector<std::unique_ptr<Subprocess>> kids;
  const std::string self =
      std::filesystem::read_symlink("/proc/self/exe").string();
  for (int p = 0, first = 0; p < procs; ++p) {
    const int k = n / procs + (p < n % procs ? 1 : 0);
    testing::ProcessOptions ko;
    ko.stderr_path = absl::StrCat(dir, "/clients", p, ".log");
    absl::StatusOr<std::unique_ptr<Subprocess>> kid = Subprocess::Start(
        {self, "--mode=clients", "--coordinator=" + target,
         absl::StrCat("--workers=", k), absl::StrCat("--first_index=", first),
         absl::StrCat("--rounds=", r.rounds),
         absl::StrCat("--channels=", absl::GetFlag(FLAGS_channels)),
         "--barrier=" + barrier,
         absl::StrCat("--heartbeat_ms=", absl::GetFlag(FLAGS_heartbeat_ms)),
         absl::StrCat("--start_at_us=", start_at),
         absl::StrCat("--out=", dir, "/clients", p, ".txt")},
        ko);
    if (!kid.ok()) return kid.status();
    kids.push_back(*std::move(kid));
    first += k;
  }
  for (size_t p = 0; p < kids.size(); ++p) {
    std::optional<int> rc = kids[p]->Wait(absl::Minutes(5));
    if (!rc.has_value()) {
      kids[p]->Kill(SIGKILL);
      kids[p]->Wait(absl::Seconds(10));
    }
    if ((!rc.has_value() || *rc != 0) && r.first_error.empty()) {
      r.first_error =
          absl::StrCat("client process ", p,
                       rc.has_value() ? absl::StrCat(" exited with ", *rc)
                                      : std::string(" hung past 5 min"),
                       " (see ", dir, "/clients", p, ".log)");
    }
  }
  const double cpu1 = ProcessCpuSeconds(cpid);
  r.cpu_s = cpu1 - cpu0;
  r.wall_s = (NowUs() - start_at) / 1e6;
  (*coordinator)->Stop(absl::Seconds(5));

  // Merge the clients' timestamps.
  int64_t reg0 = INT64_MAX, reg1 = 0, join0 = INT64_MAX, join1 = 0;
  std::vector<int64_t> last_sent(r.rounds, 0), last_done(r.rounds, 0);
  std::vector<std::vector<int64_t>> released;  // Per rank, per round.
  int seen = 0;
  for (int p = 0; p < procs; ++p) {
    std::ifstream in(absl::StrCat(dir, "/clients", p, ".txt"));
    for (std::string line; std::getline(in, line);) {
      std::vector<std::string> f = absl::StrSplit(line, ' ');
      if (f[0] == "e") {
        if (r.first_error.empty()) r.first_error = line;
        continue;
      }
      if (f.size() < 11) continue;
      ++seen;
      if (f[10] != "ok") {
        ++r.failed;
        continue;
      }
      int64_t v[4];
      for (int i = 0; i < 4; ++i) absl::SimpleAtoi(f[2 + i], &v[i]);
      reg0 = std::min(reg0, v[0]);
      reg1 = std::max(reg1, v[1]);
      join0 = std::min(join0, v[2]);
      join1 = std::max(join1, v[3]);
      std::vector<int64_t> bs = ParseList(f[8]), bd = ParseList(f[9]);
      for (int i = 0; i < r.rounds && i < static_cast<int>(bs.size()); ++i) {
        last_sent[i] = std::max(last_sent[i], bs[i]);
        last_done[i] = std::max(last_done[i], bd[i]);
      }
      released.push_back(std::move(bd));
    }
  }
  r.failed += n - seen;
  if (r.failed > 0) return r;
  r.register_s = (reg1 - reg0) / 1e6;
  r.rendezvous_s = (join1 - join0) / 1e6;
  // Each rank's wait beyond the slowest arrival, over ranks and rounds.
  std::vector<double> lat;
  for (const std::vector<int64_t>& bd : released) {
    for (int i = 0; i < r.rounds && i < static_cast<int>(bd.size()); ++i) {
      lat.push_back((bd[i] - last_sent[i]) / 1e3);
    }
  }
  r.barrier_p50_ms = Percentile(lat, 50);
  r.barrier_p99_ms = Percentile(lat, 99);
  // The whole round: last arrival to the last rank released.
  std::vector<double> rounds;
  for (int i = 0; i < r.rounds; ++i) {
    rounds.push_back((last_done[i] - last_sent[i]) / 1e3);
  }
  r.round_p50_ms = Percentile(rounds, 50);
  r.barrier_max_ms = Percentile(rounds, 100);
  return r;
}

int DriverMain(const char* argv0) {
  SetUpRunfiles(argv0);
  const std::string results = ResultsDir(absl::GetFlag(FLAGS_results_dir));
  const std::string machine = MachineDescription();
  const std::string date = UtcNow();
  const double load_before = LoadAverage1();
  std::vector<std::string> protocols =
      absl::StrSplit(absl::GetFlag(FLAGS_barriers), ',', absl::SkipEmpty());
  for (const std::string& p : protocols) {
    if (p != "shared" && p != "stream" && p != "unary") {
      std::cerr << "--barriers: '" << p << "' is not shared, stream or unary\n";
      return 2;
    }
  }
  // One row per (N, protocol); the protocols of one N run back to back, so
  // they see the same machine.
  std::vector<std::vector<RunResult>> all;
  for (int64_t n : ParseList(absl::GetFlag(FLAGS_sizes))) {
    for (const std::string& protocol : protocols) {
      std::vector<RunResult> runs;
      for (int rep = 0; rep < absl::GetFlag(FLAGS_repeats); ++rep) {
        absl::StatusOr<RunResult> r = RunOnce(
            static_cast<int>(n), protocol,
            absl::StrCat(testing::TestTempDir(), "/control-plane-bench-", n));
        if (!r.ok()) {
          std::cerr << "N=" << n << ": " << r.status() << "\n";
          return 1;
        }
        std::cout << absl::StrFormat(
                         "N=%-5d %-6s run %d: register %.3f s, rendezvous "
                         "%.3f s, barrier p50 %.2f ms p99 %.2f ms (round "
                         "%.2f ms), coordinator CPU %.2f s over %.1f s, load "
                         "%.1f%s",
                         n, protocol, rep + 1, r->register_s, r->rendezvous_s,
                         r->barrier_p50_ms, r->barrier_p99_ms, r->round_p50_ms,
                         r->cpu_s, r->wall_s, r->load,
                         r->failed > 0 ? absl::StrCat(", FAILED ", r->failed,
                                                      ": ", r->first_error)
                                       : "")
                  << std::endl;
        if (r->failed > 0) return 1;
        runs.push_back(*r);
      }
      all.push_back(runs);
    }
  }
  auto med = [](const std::vector<RunResult>& runs, double RunResult::*field) {
    std::vector<double> v;
    for (const RunResult& r : runs) v.push_back(r.*field);
    return Median(v);
  };
  std::cout << "\nControl plane, medians of " << absl::GetFlag(FLAGS_repeats)
            << " runs (" << machine << "; lease "
            << absl::GetFlag(FLAGS_lease_ms) << " ms, heartbeat "
            << absl::GetFlag(FLAGS_heartbeat_ms) << " ms)\n";
  std::cout << absl::StrFormat("%6s %7s %6s %10s %12s %11s %11s %11s %9s\n",
                               "N", "barrier", "procs", "register",
                               "rendezvous", "barrier p50", "barrier p99",
                               "round p50", "coord CPU");
  std::string json = absl::StrCat(
      "{\n  \"benchmark\": \"control_plane\",\n  \"date\": \"", date,
      "\",\n  \"machine\": \"", machine,
      "\",\n  \"load_average_1m_before\": ", load_before,
      ",\n  \"lease_ms\": ", absl::GetFlag(FLAGS_lease_ms),
      ",\n  \"heartbeat_ms\": ", absl::GetFlag(FLAGS_heartbeat_ms),
      ",\n  \"repeats\": ", absl::GetFlag(FLAGS_repeats),
      ",\n  \"definitions\": {\"rendezvous_s\": \"first JoinRendezvous sent to "
      "last answered\", \"barrier_ms\": \"per rank and round, the round's last "
      "arrival sent to this rank's release received (p50/p99 over ranks and "
      "rounds)\", \"barrier_round_ms\": \"per round, last arrival sent to "
      "the last rank's release received\", \"coordinator_cpu_s\": "
      "\"utime+stime of the "
      "coordinator while the clients ran (register, heartbeats, rendezvous, "
      "barriers, leave)\", \"barrier\": \"shared: one "
      "WorkerService.BarrierStream per connection, carrying the arrivals and "
      "releases of every worker on it (as a host agent would); stream: one "
      "BarrierStream per worker; unary: one WorkerService.Barrier call per "
      "arrival\"},\n  \"anchor\": "
      "{\"torchelastic_4000_hosts_s\": 10, "
      "\"torchelastic_4000_hosts_before_fix_s\": 373},\n  \"targets\": "
      "{\"rendezvous_4096_s\": 2, \"barrier_p50_256_ms\": 2},\n  \"sizes\": [");
  for (size_t i = 0; i < all.size(); ++i) {
    const auto& runs = all[i];
    const RunResult& f = runs.front();
    const double reg = med(runs, &RunResult::register_s);
    const double rdv = med(runs, &RunResult::rendezvous_s);
    const double p50 = med(runs, &RunResult::barrier_p50_ms);
    const double p99 = med(runs, &RunResult::barrier_p99_ms);
    const double cpu = med(runs, &RunResult::cpu_s);
    const double round = med(runs, &RunResult::round_p50_ms);
    std::cout << absl::StrFormat(
        "%6d %7s %6d %8.3f s %10.3f s %8.2f ms %8.2f ms "
        "%8.2f ms %7.2f s\n",
        f.n, f.barrier, f.procs, reg, rdv, p50, p99, round, cpu);
    std::string runs_json;
    for (const RunResult& r : runs) {
      absl::StrAppend(
          &runs_json, runs_json.empty() ? "" : ", ",
          absl::StrFormat(
              "{\"register_s\": %.4f, \"rendezvous_s\": %.4f, "
              "\"barrier_p50_ms\": %.3f, \"barrier_p99_ms\": %.3f, "
              "\"barrier_round_p50_ms\": %.3f, \"barrier_round_max_ms\": "
              "%.3f, \"coordinator_cpu_s\": %.3f, "
              "\"wall_s\": %.2f, \"load_average_1m\": %.2f}",
              r.register_s, r.rendezvous_s, r.barrier_p50_ms, r.barrier_p99_ms,
              r.round_p50_ms, r.barrier_max_ms, r.cpu_s, r.wall_s, r.load));
    }
    absl::StrAppend(
        &json, i == 0 ? "\n" : ",\n",
        absl::StrFormat(
            "    {\"n\": %d, \"barrier\": \"%s\", \"client_processes\": %d, "
            "\"barrier_rounds\": %d, "
            "\"register_s\": %.4f, \"rendezvous_s\": %.4f, \"barrier_p50_ms\": "
            "%.3f, \"barrier_p99_ms\": %.3f, \"barrier_round_p50_ms\": %.3f, "
            "\"coordinator_cpu_s\": %.3f,\n     \"runs\": [%s]}",
            f.n, f.barrier, f.procs, f.rounds, reg, rdv, p50, p99, round, cpu,
            runs_json));
  }
  absl::StrAppend(&json, "\n  ]\n}\n");
  std::cout << "Anchor: TorchElastic, 4,000 hosts: 10 s to rendezvous after "
               "its O(n) fix, 373 s before (PyTorch issue, as cited in "
               "bench/README.md).\n";
  std::map<int, double> unary_p50;
  for (const auto& runs : all) {
    if (runs.front().barrier == "unary") {
      unary_p50[runs.front().n] = med(runs, &RunResult::barrier_p50_ms);
    }
  }
  for (const auto& runs : all) {
    const RunResult& f = runs.front();
    if (f.n == 4096) {
      const double rdv = med(runs, &RunResult::rendezvous_s);
      std::cout << absl::StrFormat(
          "  N=4096 (%s run): rendezvous %.3f s, %.0fx faster than "
          "TorchElastic's 10 s (target < 2 s: %s)\n",
          f.barrier, rdv, 10.0 / rdv, rdv < 2 ? "met" : "MISSED");
    }
    if (f.n == 256) {
      const double p50 = med(runs, &RunResult::barrier_p50_ms);
      std::cout << absl::StrFormat(
          "  N=256: %s barrier p50 %.2f ms%s (target "
          "< 2 ms: %s)\n",
          f.barrier, p50,
          f.barrier != "unary" && unary_p50.count(256)
              ? absl::StrFormat(", %.1fx faster than unary",
                                unary_p50[256] / p50)
              : "",
          p50 < 2 ? "met" : "MISSED");
    }
  }
  const std::string path = results + "/control_plane.json";
  std::ofstream(path) << json;
  std::cout << "wrote " << path << "\n";
  return 0;
}

}  // namespace
}  // namespace ringleader::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  // As the coordinator: Debian's Abseil leaves deadlock detection on.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  if (absl::GetFlag(FLAGS_mode) == "clients") {
    return ringleader::bench::ClientsMain();
  }
  return ringleader::bench::DriverMain(argv[0]);
}
