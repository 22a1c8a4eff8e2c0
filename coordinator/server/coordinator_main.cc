// ringleader-coordinator: the control plane daemon.
#include <malloc.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/flag_help.h"
#include "common/port_file.h"
#include "common/signal_watch.h"
#include "common/systemd/notify.h"
#include "common/tls_credentials.h"
#include "coordinator/server/coordinator_server.h"
#include "glog/logging.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:7070",
          "Address to serve on, HOST:PORT; port 0 picks a free port.");
ABSL_FLAG(std::string, state, "ringleader-state.db",
          "SQLite file with jobs and checkpoints; survives restarts.");
ABSL_FLAG(std::string, port_file, "",
          "If set, the bound port is written here once serving.");
ABSL_FLAG(int64_t, lease_ms, 3000,
          "A worker that has not heartbeat for this long is dead, unless it "
          "is a member of a live generation (see the silent_* flags).");
ABSL_FLAG(absl::Duration, silent_member_limit, absl::Seconds(30),
          "A generation member whose lease lapsed while its peers are heard "
          "is kept as long as their steps advance (they cannot without it), "
          "and is gone after this long without that evidence (at least "
          "--lease_ms).");
ABSL_FLAG(absl::Duration, silent_generation_limit, absl::Minutes(5),
          "When no member of a generation is heard at all, the coordinator "
          "suspects its own link and keeps the generation this long (at "
          "least --lease_ms).");
ABSL_FLAG(absl::Duration, hung_wait, absl::Seconds(1),
          "A generation member whose lease lapsed is gone at once when every "
          "peer the coordinator hears reports being blocked in a collective "
          "for this long: it is hung (a SIGSTOP, a wedged device) with its "
          "connections open. Longer than any wait for a live, slow peer.");
ABSL_FLAG(absl::Duration, stall_floor, absl::Seconds(1),
          "Ranks blocked in a collective for 3x the generation's median step "
          "time, and at least this long, are said to wait for another: "
          "`ringctl get` and `watch` name the rank they wait for and what it "
          "is doing.");
ABSL_FLAG(bool, push_generation_end, true,
          "Tell a generation's members the moment it ends (WatchGeneration "
          "streams), not at their next heartbeat. Off: the call answers "
          "UNIMPLEMENTED, as an older coordinator's does (for comparisons).");
ABSL_FLAG(int64_t, heartbeat_ms, 1000, "Heartbeat interval told to workers.");
ABSL_FLAG(int32_t, max_message_bytes, 16 << 20,
          "Largest gRPC message accepted.");
ABSL_FLAG(std::string, metrics_listen, "",
          "HOST:PORT to serve Prometheus metrics on at /metrics (port 0 picks "
          "a free port, logged); empty: off. Suggested: 0.0.0.0:9464.");
ABSL_FLAG(std::string, metrics_port_file, "",
          "If set, the metrics (and dashboard) server's bound port is written "
          "here once serving.");
ABSL_FLAG(bool, dashboard, false,
          "Serve a read-only web dashboard (jobs, curves, generations, logs, "
          "workers) on the --metrics_listen server at /. With --tls_cert that "
          "server speaks HTTPS (/metrics included), with --auth_token_file its "
          "pages need the token (open one with ?token=TOKEN once, or send "
          "Authorization: Bearer).");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM certificate chain to serve TLS with (with --tls_key); unset: "
          "insecure.");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert.");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA that signs the workers' client certificates: mutual TLS, "
          "WorkerService calls without a certificate it signed fail.");
ABSL_FLAG(std::string, auth_token_file, "",
          "File holding the bearer token SubmitJob, CancelJob and DeleteJob "
          "require.");
ABSL_FLAG(absl::Duration, preempt_window, absl::Seconds(5),
          "From the first member of a generation that is signalled to stop "
          "(a preemption) to the verdict that only some members leave (the "
          "others go on); every member within it: the job is PREEMPTED. Keep "
          "it well under the workers' --preempt_grace.");
ABSL_FLAG(absl::Duration, drain_grace, absl::ZeroDuration(),
          "On SIGTERM, keep serving up to this long while a job has a "
          "generation running or being preempted, so that a preempted "
          "job's last checkpoint commit and its PREEMPTED state land first "
          "(Slurm signals the coordinator with the workers); 0: stop at "
          "once. A second signal stops at once.");
ABSL_FLAG(int64_t, retain_finished_jobs, 1000,
          "Keep at most this many finished (succeeded, failed, cancelled) "
          "jobs: beyond it the ones that finished first are deleted, at "
          "startup and whenever a job finishes. Their checkpoint records "
          "stay, so `resume` still finds them. 0: no limit.");
ABSL_FLAG(absl::Duration, retain_finished_for, absl::InfiniteDuration(),
          "Delete a finished job this long after it finished (e.g. 720h), at "
          "startup and whenever a job finishes; inf: never.");
ABSL_FLAG(int64_t, history_points, ringleader::kDefaultHistoryPoints,
          "Points of training history (loss, learning rate, gradient norm, "
          "samples/s per optimizer step) kept per job for `ringctl get "
          "--history`: past it the series is thinned evenly, its first and "
          "latest points kept. At least 4, at most 1000000.");

ABSL_FLAG(int64_t, log_lines_per_rank, 2000,
          "Job logs (ringctl logs): keep each rank's last this many lines.");
ABSL_FLAG(int64_t, log_bytes_per_rank, 512 * 1024,
          "Job logs: keep at most this many bytes of each rank's lines (its "
          "oldest go first).");
ABSL_FLAG(int64_t, log_total_bytes, 256 << 20,
          "Job logs: at most this many bytes over all jobs; beyond it the "
          "log of the job appended to longest ago goes first. Logs are kept "
          "in memory only; a job's log goes when the job is deleted.");

namespace {

// Answered on a thread of their own (common/signal_watch.h), not in a
// handler.
constexpr int kStopSignals[] = {SIGTERM, SIGINT};

constexpr char kUsage[] =
    "ringleader-coordinator: registration, rendezvous, KV store, barriers, "
    "shard plans and job state for data-parallel training.\n"
    "  ringleader-coordinator --listen=0.0.0.0:7070 "
    "--state=/var/lib/ringleader/state.db";

const std::vector<ringleader::FlagGroup>& FlagGroups() {
  static const auto* groups = new std::vector<ringleader::FlagGroup>{
      {"Serving", {"listen", "port_file", "max_message_bytes"}},
      {"State", {"state", "retain_finished_jobs", "retain_finished_for"}},
      {"Failure detection",
       {"lease_ms", "heartbeat_ms", "silent_member_limit",
        "silent_generation_limit", "hung_wait", "push_generation_end",
        "stall_floor"}},
      {"Security", {"tls_cert", "tls_key", "tls_client_ca", "auth_token_file"}},
      {"Metrics and dashboard",
       {"metrics_listen", "metrics_port_file", "dashboard"}},
      {"Preemption", {"preempt_window", "drain_grace"}},
      {"Job history and logs",
       {"history_points", "log_lines_per_rank", "log_bytes_per_rank",
        "log_total_bytes"}},
  };
  return *groups;
}

// glibc gives each thread that allocates concurrently an arena of its own
// (up to 8 per core), and an arena keeps its high-water mark. gRPC answers
// calls on a pool of threads, so every burst of thousands of concurrent
// calls (a large job's bootstrap, or a client that floods) raised a
// different arena: 16 rounds of 2,000 abandoned KV waits took the process
// from 24 to 180 MiB before it flattened; with two arenas it flattens at
// 110 MiB after 5 rounds (tests/coordinator/adversary_test). The
// coordinator is not bound by allocation throughput. MALLOC_ARENA_MAX in
// the environment still wins.
void LimitMallocArenas() {
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 2);
}

// When ranks are said to wait for another (coordinator/stall_watch.h): a
// member two heartbeats silent is named as silent.
absl::StatusOr<ringleader::StallWatch::Options> StallOptionsFromFlags(
    absl::Duration heartbeat_interval) {
  ringleader::StallWatch::Options o;
  o.floor = absl::GetFlag(FLAGS_stall_floor);
  if (o.floor <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--stall_floor must be > 0");
  }
  o.silent_after = 2 * heartbeat_interval;
  return o;
}

// The job logs' bounds from the flags.
absl::StatusOr<ringleader::LogStore::Limits> LogLimitsFromFlags() {
  ringleader::LogStore::Limits limits;
  limits.lines_per_rank = absl::GetFlag(FLAGS_log_lines_per_rank);
  limits.bytes_per_rank = absl::GetFlag(FLAGS_log_bytes_per_rank);
  limits.total_bytes = absl::GetFlag(FLAGS_log_total_bytes);
  if (limits.lines_per_rank < 1 || limits.bytes_per_rank < 8192 ||
      limits.total_bytes < limits.bytes_per_rank) {
    return absl::InvalidArgumentError(
        "--log_lines_per_rank must be >= 1, --log_bytes_per_rank >= 8192 and "
        "--log_total_bytes >= --log_bytes_per_rank");
  }
  return limits;
}

// The server's configuration from the flags; INVALID_ARGUMENT (exit 2)
// names the flag at fault.
absl::StatusOr<ringleader::CoordinatorServerConfig> ConfigFromFlags() {
  ringleader::CoordinatorServerConfig config;
  config.listen = absl::GetFlag(FLAGS_listen);
  config.state_path = absl::GetFlag(FLAGS_state);
  config.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  config.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  config.dashboard = absl::GetFlag(FLAGS_dashboard);
  config.tls.cert = absl::GetFlag(FLAGS_tls_cert);
  config.tls.key = absl::GetFlag(FLAGS_tls_key);
  config.tls.client_ca = absl::GetFlag(FLAGS_tls_client_ca);
  if (const std::string token_file = absl::GetFlag(FLAGS_auth_token_file);
      !token_file.empty()) {
    absl::StatusOr<std::string> token =
        ringleader::ReadTokenFile("--auth_token_file", token_file);
    if (!token.ok())
      return absl::InvalidArgumentError(token.status().message());
    config.auth_token = *std::move(token);
  }
  const int64_t lease_ms = absl::GetFlag(FLAGS_lease_ms);
  const int64_t heartbeat_ms = absl::GetFlag(FLAGS_heartbeat_ms);
  if (heartbeat_ms <= 0 || lease_ms <= heartbeat_ms) {
    return absl::InvalidArgumentError(
        "--lease_ms must exceed --heartbeat_ms > 0");
  }
  if (config.max_message_bytes < 4096) {
    return absl::InvalidArgumentError("--max_message_bytes must be >= 4096");
  }
  config.options.retention.max_finished =
      absl::GetFlag(FLAGS_retain_finished_jobs);
  config.options.retention.max_age = absl::GetFlag(FLAGS_retain_finished_for);
  if (config.options.retention.max_finished < 0 ||
      config.options.retention.max_age <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "--retain_finished_jobs must be >= 0 and --retain_finished_for > 0");
  }
  config.options.history_points = absl::GetFlag(FLAGS_history_points);
  if (config.options.history_points < ringleader::kMinHistoryPoints ||
      config.options.history_points > 1'000'000) {
    return absl::InvalidArgumentError(
        "--history_points must be in [4, 1000000]");
  }
  config.options.lease = absl::Milliseconds(lease_ms);
  // Never shorter than a lease: a kept member has missed one already.
  config.options.silent_member_limit =
      std::max(absl::GetFlag(FLAGS_silent_member_limit), config.options.lease);
  config.options.silent_generation_limit = std::max(
      absl::GetFlag(FLAGS_silent_generation_limit), config.options.lease);
  config.options.heartbeat_interval = absl::Milliseconds(heartbeat_ms);
  absl::StatusOr<ringleader::StallWatch::Options> stall =
      StallOptionsFromFlags(config.options.heartbeat_interval);
  if (!stall.ok()) return stall.status();
  config.options.stall = *stall;
  config.options.hung_wait =
      std::max(absl::GetFlag(FLAGS_hung_wait), absl::Milliseconds(1));
  config.options.push_generation_end = absl::GetFlag(FLAGS_push_generation_end);
  config.options.sweep_interval =
      std::min(absl::Milliseconds(200), absl::Milliseconds(lease_ms) / 4);
  config.options.preemption.window = absl::GetFlag(FLAGS_preempt_window);
  if (config.options.preemption.window <= absl::ZeroDuration() ||
      absl::GetFlag(FLAGS_drain_grace) < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "--preempt_window must be > 0 and --drain_grace >= 0");
  }
  absl::StatusOr<ringleader::LogStore::Limits> logs = LogLimitsFromFlags();
  if (!logs.ok()) return logs.status();
  config.options.log_limits = *logs;
  return config;
}

// How long a drained coordinator still answers (a job's final state).
constexpr absl::Duration kDrainLinger = absl::Seconds(5);

// After the first stop signal: serves on while a job has live work (a
// generation running or being preempted), for at most `grace`, or until
// `hard` (a second signal). Polls: the coordinator's state has no single
// event for "nothing left", and a 100 ms tick is nothing beside the grace.
void Drain(ringleader::Coordinator& coordinator, absl::Duration grace,
           absl::Notification& hard) {
  // Nothing in flight when the signal came (the batch script stopping it
  // after its job ended, say): no reason to wait.
  if (grace <= absl::ZeroDuration() || !coordinator.HasLiveWork()) return;
  const absl::Time deadline = absl::Now() + grace;
  LOG(INFO) << "draining for up to " << grace
            << ": serving until no job has a generation running or being "
               "preempted";
  while (coordinator.HasLiveWork() && absl::Now() < deadline) {
    if (hard.WaitForNotificationWithTimeout(absl::Milliseconds(100))) return;
  }
  if (coordinator.HasLiveWork()) {
    LOG(INFO) << "drain grace over";
    return;
  }
  // The workers exit as the job settles; whoever followed them (the Slurm
  // batch script's `ringctl get`) still reads the job's final state.
  const absl::Duration linger = std::min(
      kDrainLinger, std::max(absl::ZeroDuration(), deadline - absl::Now()));
  LOG(INFO) << "drained: no live work left; serving " << linger << " more";
  hard.WaitForNotificationWithTimeout(linger);
}

// The server started on `config`, its port written where --port_file says.
absl::StatusOr<std::unique_ptr<ringleader::CoordinatorServer>> StartServing(
    const ringleader::CoordinatorServerConfig& config) {
  auto server = ringleader::CoordinatorServer::Start(config);
  if (!server.ok()) return server.status();
  if (absl::Status s = ringleader::WritePortFile(absl::GetFlag(FLAGS_port_file),
                                                 (*server)->port());
      !s.ok()) {
    return s;
  }
  LOG(INFO) << "coordinator serving on port " << (*server)->port() << ", state "
            << config.state_path;
  if ((*server)->metrics_port() != 0) {
    if (absl::Status s = ringleader::WritePortFile(
            absl::GetFlag(FLAGS_metrics_port_file), (*server)->metrics_port());
        !s.ok()) {
      return s;
    }
    LOG(INFO) << "metrics on port " << (*server)->metrics_port()
              << " at /metrics"
              << (config.dashboard ? ", the dashboard at /" : "");
  }
  return server;
}

}  // namespace

int main(int argc, char** argv) {
  // First: a stop signal from here on is handled, whichever thread takes it
  // (common/signal_watch.h), and waits for the watch started below.
  if (absl::Status s = ringleader::SignalWatch::Install(
          {std::begin(kStopSignals), std::end(kStopSignals)});
      !s.ok()) {
    std::cerr << "ringleader-coordinator: " << s.message() << "\n";
    return 1;
  }
  absl::SetProgramUsageMessage(kUsage);
  if (ringleader::WantsFlagHelp(argc, argv)) {
    std::cout << ringleader::FlagHelp(kUsage, FlagGroups(), {"coordinator/"});
    return 0;
  }
  absl::ParseCommandLine(argc, argv);
  // Debian builds Abseil without NDEBUG, which leaves absl::Mutex's deadlock
  // detection on: every lock then updates one global lock-order graph (and
  // records stack traces). Measured on 4096 simulated workers it was the
  // coordinator's top user-space cost; lock order is checked by the tests.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  LimitMallocArenas();
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = true;
  LOG(INFO) << "ringleader-coordinator, build: "
            << ringleader::BuildModeDescription();

  absl::StatusOr<ringleader::CoordinatorServerConfig> parsed =
      ConfigFromFlags();
  if (!parsed.ok()) {
    std::cerr << "ringleader-coordinator: " << parsed.status().message()
              << "\n";
    return 2;
  }
  auto server = StartServing(*parsed);
  if (!server.ok()) {
    std::cerr << "ringleader-coordinator: " << server.status().message()
              << "\n";
    return 1;
  }
  // Before READY: a supervisor may stop us as soon as it has seen it (a
  // signal that came earlier waits in the watch's pipe until now).
  absl::Notification stop;
  absl::Notification hard_stop;  // A second signal during the drain.
  ringleader::SignalWatch signals(
      [&stop, &hard_stop, first = absl::InfinitePast()](int signal) mutable {
        LOG(INFO) << "got " << strsignal(signal);
        // Slurm delivers one stop more than once (to the process and to its
        // group): only a signal well after the first is the second.
        const absl::Time now = absl::Now();
        if (!stop.HasBeenNotified()) {
          first = now;
          stop.Notify();
        } else if (now - first >= absl::Seconds(1) &&
                   !hard_stop.HasBeenNotified()) {
          hard_stop.Notify();
        }
      });
  // Type=notify: ready only now that the state is recovered, the server
  // accepts calls and the port file is written. The watchdog's liveness
  // check takes the coordinator's locks, so a deadlocked coordinator stops
  // pinging and systemd restarts it.
  ringleader::SdNotify(
      absl::StrCat("READY=1\nSTATUS=serving on port ", (*server)->port()));
  std::unique_ptr<ringleader::SdWatchdog> watchdog =
      ringleader::SdWatchdog::StartIfEnabled([&server] {
        (*server)->coordinator().user_calls().ListWorkers();
        return true;
      });
  stop.WaitForNotification();
  Drain((*server)->coordinator(), absl::GetFlag(FLAGS_drain_grace), hard_stop);
  LOG(INFO) << "coordinator shutting down";
  ringleader::SdNotify("STOPPING=1");
  watchdog.reset();
  (*server)->Shutdown();
  return 0;
}
