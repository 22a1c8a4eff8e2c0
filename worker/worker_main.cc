// ringleader-worker: one training worker per GPU or CPU slot.
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/flag_help.h"
#include "common/metrics.h"
#include "common/metrics_http.h"
#include "common/port_file.h"
#include "common/signal_watch.h"
#include "common/systemd/notify.h"
#include "common/tls_credentials.h"
#include "glog/logging.h"
#include "worker/device/communicator_factory.h"
#include "worker/malloc_tuning.h"
#include "worker/torch_logging.h"
#include "worker/torch_threads.h"
#include "worker/worker_daemon.h"
#include "worker/worker_env.h"

ABSL_FLAG(std::string, coordinator, "",
          "Coordinator HOST:PORT (default: $RINGLEADER_COORDINATOR, else "
          "$MASTER_ADDR:$MASTER_PORT as a Kubeflow PyTorchJob sets them, else "
          "under Slurm the first node of $SLURM_JOB_NODELIST at "
          "$RINGLEADER_COORDINATOR_PORT or 7070, else 127.0.0.1:7070).");
ABSL_FLAG(std::string, device, "cpu",
          "cpu, cuda:N, or cuda: the launcher's local rank ($LOCAL_RANK, "
          "else Slurm's $SLURM_LOCALID).");
ABSL_FLAG(std::optional<std::string>, address, std::nullopt,
          "Address other workers reach this one at for collectives (default "
          "127.0.0.1; under Slurm, this host's address, as its hostname "
          "resolves).");
ABSL_FLAG(int, threads, 1,
          "Intra-op threads for LibTorch and for OpenBLAS's pool (unless "
          "$OPENBLAS_NUM_THREADS is set); one per rank avoids "
          "oversubscribing cores when several ranks share a host.");
ABSL_FLAG(bool, keep_freed_memory, true,
          "Keep freed memory in the process for the next step instead of "
          "returning it to the kernel (glibc malloc; see "
          "worker/malloc_tuning.h).");
ABSL_FLAG(std::optional<int>, max_jobs, std::nullopt,
          "Exit after this many jobs (0, the default: serve forever; under "
          "Slurm the default is 1: a job step ends with its job); with status "
          "0 only when the last one finished (succeeded), else 1, so that a "
          "supervisor restarts a worker that lost its job.");
ABSL_FLAG(int, collective_timeout_s, 60, "Timeout of one collective.");
ABSL_FLAG(absl::Duration, preempt_grace, absl::Seconds(30),
          "On SIGTERM while training (a scheduler's preemption): stop at the "
          "next step boundary, tell the coordinator, and when every rank of "
          "the generation is leaving, rank 0 commits a checkpoint of the "
          "last completed step; stop regardless after this long. A second "
          "SIGTERM/SIGINT, or SIGTERM while not training, stops at once. "
          "Deploy files give the process more than this before SIGKILL.");
ABSL_FLAG(bool, recover_from_peers, true,
          "When a generation ends, keep this rank's training state in memory "
          "and recover the next generation from the newest state a member "
          "kept, not from the last checkpoint file (false: disk only, as a "
          "comparison; costs one copy of the model and optimizer state).");
ABSL_FLAG(int64_t, fault_lose_allreduce_result_at_step, 0,
          "Fault injection for tests, not for production: the first "
          "all-reduce of this optimizer step completes for the peers but "
          "fails on this worker, once (the generation ends with it a step "
          "behind them); 0: off, else >= 2.");
ABSL_FLAG(int, fault_lose_allreduce_result_rank, -1,
          "Fault injection for tests: --fault_lose_allreduce_result_at_step "
          "applies only while this worker has this rank (-1: any rank).");
ABSL_FLAG(absl::Duration, fault_delay_end_notice, absl::ZeroDuration(),
          "Fault injection for tests, not for production: act on the "
          "coordinator's word that a generation ended this much later");
ABSL_FLAG(bool, fault_exit_during_recovery, false,
          "Fault injection for tests, not for production: exit with status 3 "
          "when about to take part in a recovery from a member's memory, "
          "after the kept states were exchanged.");
ABSL_FLAG(int, preempted_exit_code, 0,
          "Exit status after a preemption (the worker left its job at "
          "SIGTERM with its work saved): 0, a stop asked for; 143 (128 + "
          "SIGTERM) for a supervisor that restarts on it, as a Kubeflow "
          "PyTorchJob's restartPolicy ExitCode does for 128-255.");
ABSL_FLAG(bool, ship_job_logs, true,
          "Send the lines logged while serving a job to the coordinator, for "
          "`ringctl logs JOB` (they still go to stderr as well).");
ABSL_FLAG(bool, report_phases, true,
          "Say in each heartbeat what training is doing (data loading, "
          "forward, all-reduce wait...) and for how long, so the coordinator "
          "can name the rank a stalled job waits for. Off only to weigh its "
          "cost (bench/observability).");
ABSL_FLAG(int64_t, job_log_queue_bytes, 4 << 20,
          "Job lines queued for the coordinator at most (while it is away); "
          "beyond it the oldest are dropped and counted, never blocking.");
ABSL_FLAG(std::string, metrics_listen, "",
          "HOST:PORT to serve Prometheus metrics on at /metrics (port 0 picks "
          "a free port); empty: off. Suggested: 0.0.0.0:9465 (+ GPU index).");
ABSL_FLAG(std::string, metrics_port_file, "",
          "If set, the metrics port is written here once serving.");
ABSL_FLAG(std::string, tls_ca, "",
          "PEM CA of the coordinator's certificate: connect over TLS.");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM client certificate (with --tls_key and --tls_ca): mutual TLS, "
          "needed when the coordinator has --tls_client_ca.");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert.");

namespace {
// SIGTERM and SIGINT are taken on a thread of their own (common/
// signal_watch.h): the daemon's response takes locks, which no signal
// handler may. The first is a preemption (WorkerDaemon::Preempt), a second
// stops at once.
constexpr int kStopSignals[] = {SIGTERM, SIGINT};
// Signals this close to the first are the same request.
constexpr absl::Duration kSameSignal = absl::Seconds(1);

constexpr char kUsage[] =
    "ringleader-worker: registers with the coordinator, trains the jobs it is "
    "given with its peers, and reports progress.\n"
    "  ringleader-worker --coordinator=HOST:PORT --device=cpu|cuda:N";

const std::vector<ringleader::FlagGroup>& FlagGroups() {
  static const auto* groups = new std::vector<ringleader::FlagGroup>{
      {"Coordinator", {"coordinator", "tls_ca", "tls_cert", "tls_key"}},
      {"Device and threads", {"device", "threads", "keep_freed_memory"}},
      {"Collectives", {"address", "collective_timeout_s"}},
      {"Recovery", {"recover_from_peers"}},
      {"Lifetime", {"max_jobs", "preempt_grace", "preempted_exit_code"}},
      {"Metrics", {"metrics_listen", "metrics_port_file"}},
      {"Job logs and phases",
       {"ship_job_logs", "job_log_queue_bytes", "report_phases"}},
      {"Fault injection (tests)",
       {"fault_lose_allreduce_result_at_step",
        "fault_lose_allreduce_result_rank", "fault_exit_during_recovery",
        "fault_delay_end_notice"}},
  };
  return *groups;
}

// This host's address as its name resolves (IPv4 preferred), for peers on
// other nodes; "" when it does not resolve.
std::string HostAddress(const std::string& hostname) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(hostname.c_str(), nullptr, &hints, &found) != 0) return "";
  std::string v4, v6;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {0};
    const void* raw =
        a->ai_family == AF_INET
            ? static_cast<const void*>(
                  &reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr)
            : static_cast<const void*>(
                  &reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr);
    if (::inet_ntop(a->ai_family, raw, text, sizeof(text)) == nullptr) continue;
    std::string& slot = a->ai_family == AF_INET ? v4 : v6;
    if (slot.empty()) slot = text;
  }
  ::freeaddrinfo(found);
  return v4.empty() ? v6 : v4;
}

// A task of a Slurm job step serves that job and ends with it, and peers
// on other nodes reach it at its host's address, unless the flags say
// otherwise.
void ApplySlurmDefaults(ringleader::WorkerConfig& config) {
  if (!absl::GetFlag(FLAGS_max_jobs).has_value()) config.max_jobs = 1;
  if (!absl::GetFlag(FLAGS_address).has_value()) {
    const std::string address = HostAddress(config.hostname);
    if (!address.empty()) config.address = address;
  }
}

// The daemon's configuration from the flags and the environment;
// INVALID_ARGUMENT (exit 2) names the flag at fault.
absl::StatusOr<ringleader::WorkerConfig> ConfigFromFlags() {
  ringleader::WorkerConfig config;
  absl::StatusOr<ringleader::WorkerEnv> env = ringleader::ResolveWorkerEnv(
      absl::GetFlag(FLAGS_coordinator), ringleader::ProcessEnvironment());
  if (!env.ok()) return absl::InvalidArgumentError(env.status().message());
  LOG(INFO) << ringleader::DescribeWorkerEnv(*env);
  config.coordinator = env->coordinator;
  ringleader::ClientTlsFiles tls;
  tls.ca = absl::GetFlag(FLAGS_tls_ca);
  tls.cert = absl::GetFlag(FLAGS_tls_cert);
  tls.key = absl::GetFlag(FLAGS_tls_key);
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      ringleader::MakeChannelCredentials(tls);
  if (!credentials.ok()) {
    return absl::InvalidArgumentError(credentials.status().message());
  }
  config.credentials = *std::move(credentials);
  absl::StatusOr<std::string> device =
      ringleader::ResolveDevice(absl::GetFlag(FLAGS_device), *env);
  if (!device.ok()) return device.status();
  config.device = *std::move(device);
  // A device this build or host cannot train on fails here, not mid-job.
  if (absl::Status s = ringleader::CheckDevice(config.device); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--device: ", s.message()));
  }
  char host[256] = {0};
  ::gethostname(host, sizeof(host) - 1);
  config.hostname = host;
  config.address = absl::GetFlag(FLAGS_address).value_or("127.0.0.1");
  config.max_jobs = absl::GetFlag(FLAGS_max_jobs).value_or(0);
  if (env->slurm_job_id.has_value()) ApplySlurmDefaults(config);
  config.collective_timeout =
      absl::Seconds(absl::GetFlag(FLAGS_collective_timeout_s));
  config.recover_from_peers = absl::GetFlag(FLAGS_recover_from_peers);
  if (absl::GetFlag(FLAGS_preempt_grace) <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--preempt_grace must be > 0");
  }
  if (const int code = absl::GetFlag(FLAGS_preempted_exit_code);
      code < 0 || code > 255) {
    return absl::InvalidArgumentError("--preempted_exit_code must be 0..255");
  }
  config.ship_job_logs = absl::GetFlag(FLAGS_ship_job_logs);
  config.report_phases = absl::GetFlag(FLAGS_report_phases);
  config.job_log_limits.max_bytes = absl::GetFlag(FLAGS_job_log_queue_bytes);
  if (config.job_log_limits.max_bytes < 64 * 1024) {
    return absl::InvalidArgumentError("--job_log_queue_bytes must be >= 65536");
  }
  config.faults.lose_allreduce_result_at_step =
      absl::GetFlag(FLAGS_fault_lose_allreduce_result_at_step);
  config.faults.lose_allreduce_result_rank =
      absl::GetFlag(FLAGS_fault_lose_allreduce_result_rank);
  config.faults.exit_during_recovery =
      absl::GetFlag(FLAGS_fault_exit_during_recovery);
  config.faults.delay_end_notice = absl::GetFlag(FLAGS_fault_delay_end_notice);
  // Step 1's all-reduces would be lost at step 0, where the setup's are.
  if (config.faults.lose_allreduce_result_at_step < 0 ||
      config.faults.lose_allreduce_result_at_step == 1) {
    return absl::InvalidArgumentError(
        "--fault_lose_allreduce_result_at_step must be 0 (off) or >= 2");
  }
  return config;
}

// Applies --threads and --keep_freed_memory to this process.
absl::Status ApplyProcessSettings() {
  const int threads = absl::GetFlag(FLAGS_threads);
  if (threads < 1 || threads > 256) {
    return absl::InvalidArgumentError("--threads must be in 1..256");
  }
  LOG(INFO) << SetTorchThreads(threads);
  if (absl::GetFlag(FLAGS_keep_freed_memory)) {
    if (absl::Status s = ringleader::KeepFreedMemoryForReuse(); !s.ok()) {
      LOG(WARNING) << s.message();
    }
  }
  return absl::OkStatus();
}

// The /metrics endpoint of --metrics_listen (null when unset), its port
// written to --metrics_port_file. INVALID_ARGUMENT (exit 2) for a bad
// address, INTERNAL (exit 1) for a port file that cannot be written.
absl::StatusOr<std::unique_ptr<ringleader::metrics::HttpServer>>
StartMetricsHttp() {
  const std::string listen = absl::GetFlag(FLAGS_metrics_listen);
  if (listen.empty()) return nullptr;
  auto http = ringleader::metrics::HttpServer::Start(
      listen, &ringleader::metrics::Registry::Default());
  if (!http.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--metrics_listen: ", http.status().message()));
  }
  LOG(INFO) << "metrics on port " << (*http)->port() << " at /metrics";
  if (absl::Status s = ringleader::WritePortFile(
          absl::GetFlag(FLAGS_metrics_port_file), (*http)->port());
      !s.ok()) {
    return s;
  }
  return http;
}

// The answer to SIGTERM and SIGINT: the first is a preemption within
// --preempt_grace, a second a while later the hard stop.
ringleader::SignalWatch::Handler PreemptOnSignal(
    ringleader::WorkerDaemon& daemon) {
  return [&daemon, grace = absl::GetFlag(FLAGS_preempt_grace),
          first = absl::InfinitePast()](int signal) mutable {
    LOG(WARNING) << "got " << strsignal(signal);
    // One preemption can arrive twice: Slurm's step daemon signals each
    // task and srun forwards its own SIGTERM to them too. Only a signal
    // well after the first is the second, the hard stop.
    const absl::Time now = absl::Now();
    if (first != absl::InfinitePast() && now - first < kSameSignal) {
      LOG(WARNING) << "the same preemption again; ignored";
      return;
    }
    if (first == absl::InfinitePast()) first = now;
    daemon.Preempt(grace);
  };
}

// Prints `s` as the worker's own error; the exit code for it.
int Fail(const absl::Status& s) {
  std::cerr << "ringleader-worker: " << s.message() << "\n";
  return absl::IsInvalidArgument(s) ? 2 : 1;
}
}  // namespace

int main(int argc, char** argv) {
  // First: a stop signal from here on is handled, whichever thread takes it
  // (common/signal_watch.h), and waits for the watch started below.
  if (absl::Status s = ringleader::SignalWatch::Install(
          {std::begin(kStopSignals), std::end(kStopSignals)});
      !s.ok()) {
    std::cerr << "ringleader-worker: " << s.message() << "\n";
    return 1;
  }
  absl::SetProgramUsageMessage(kUsage);
  if (ringleader::WantsFlagHelp(argc, argv)) {
    std::cout << ringleader::FlagHelp(kUsage, FlagGroups(), {"worker/"});
    return 0;
  }
  absl::ParseCommandLine(argc, argv);
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = true;
  ShowTorchLogInfo();
  LogModelPrints();
  LOG(INFO) << "ringleader-worker, build: "
            << ringleader::BuildModeDescription();

  absl::StatusOr<ringleader::WorkerConfig> parsed = ConfigFromFlags();
  if (!parsed.ok()) return Fail(parsed.status());
  ringleader::WorkerConfig config = *std::move(parsed);
  if (absl::Status s = ApplyProcessSettings(); !s.ok()) return Fail(s);

  // Type=notify: READY once registered; the watchdog pings while the
  // heartbeat thread keeps beating (a hung worker is restarted by systemd).
  std::unique_ptr<ringleader::SdWatchdog> watchdog;
  ringleader::WorkerDaemon* daemon_ptr = nullptr;
  config.on_registered = [&watchdog, &daemon_ptr,
                          coordinator = config.coordinator] {
    ringleader::SdNotify("READY=1\nSTATUS=registered with " + coordinator);
    if (std::optional<absl::Duration> timeout =
            ringleader::SdWatchdogTimeout()) {
      watchdog = std::make_unique<ringleader::SdWatchdog>(
          *timeout / 2, [&daemon_ptr, within = *timeout] {
            return daemon_ptr->HeartbeatAlive(within);
          });
    }
  };
  ringleader::WorkerMetrics metrics(&ringleader::metrics::Registry::Default());
  config.metrics = &metrics;
  absl::StatusOr<std::unique_ptr<ringleader::metrics::HttpServer>>
      metrics_http = StartMetricsHttp();
  if (!metrics_http.ok()) return Fail(metrics_http.status());
  ringleader::WorkerDaemon daemon(config);
  daemon_ptr = &daemon;
  absl::Status s;
  {
    ringleader::SignalWatch signals(PreemptOnSignal(daemon));
    s = daemon.Run();
  }
  ringleader::SdNotify("STOPPING=1");
  watchdog.reset();
  if (!s.ok()) {
    std::cerr << "ringleader-worker: " << s.message() << "\n";
    return 1;
  }
  const int code =
      daemon.preempted() ? absl::GetFlag(FLAGS_preempted_exit_code) : 0;
  // The last line: with the signal's "got ..." it times a stop from the log
  // alone (bench/recovery's Slurm requeue).
  LOG(INFO) << "exits with status " << code
            << (daemon.preempted() ? " (preempted)" : "");
  return code;
}
