// kv_bootstrap_bench: what thousands of pending KV waits cost the rest of the
// coordinator. Per N simulated ranks, against a real coordinator process:
//   bootstrap: N ranks bootstrap Gloo through the KV store (every rank's
//              wait pending while the ranks write their keys over --spread_ms;
//              bench/control_plane/kv_bootstrap_load.h);
//   flood:     the adversary: --flood_waits waits naming the same
//              --flood_keys keys while all but one of those keys are written;
// and meanwhile a worker of a running job heartbeats every --probe_ms: its
// answer times (p50/p99/max) are what its lease depends on. Prints a table
// and appends JSON lines to <results>/kv_bootstrap.jsonl, tagged --label
// (run once with an older --coordinator_binary to compare side by side).
//
//   bazel run -c opt //bench/control_plane:kv_bootstrap_bench -- --sizes=256,1024,4096
#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "bench/common/bench_coordinator.h"
#include "bench/common/bench_env.h"
#include "bench/control_plane/heartbeat_probe.h"
#include "bench/control_plane/kv_bootstrap_load.h"
#include "grpcpp/grpcpp.h"
#include "ringleader/v1/user_service.grpc.pb.h"
#include "ringleader/v1/worker_service.grpc.pb.h"

ABSL_FLAG(std::string, sizes, "256,1024,4096", "Simulated ranks N to run.");
ABSL_FLAG(int, peers, 16, "Keys each simulated rank waits for.");
ABSL_FLAG(int, value_bytes, 64, "Bytes of each rank's key.");
ABSL_FLAG(int64_t, spread_ms, 1000, "Window over which the ranks write.");
ABSL_FLAG(int, flood_waits, 100, "The flood's pending waits.");
ABSL_FLAG(int, flood_keys, 4096, "Keys each flood wait names.");
ABSL_FLAG(int64_t, probe_ms, 5, "Heartbeat probe interval.");
ABSL_FLAG(int, writers, 16, "Threads writing keys at once.");
ABSL_FLAG(int64_t, lease_ms, 3000, "Coordinator --lease_ms.");
ABSL_FLAG(std::string, label, "current", "Tag of this run's lines.");
ABSL_FLAG(std::string, coordinator_binary, "",
          "Coordinator binary (default: from the runfiles).");
ABSL_FLAG(std::string, results_dir, "",
          "Where kv_bootstrap.jsonl goes (default <workspace>/bench/results).");
ABSL_FLAG(std::string, work_dir, "/tmp/ringleader-kv-bench",
          "The coordinators' state and logs.");

namespace ringleader::bench {
namespace {

std::unique_ptr<grpc::ClientContext> Ctx(const WorkerCredential& worker = {}) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
  AttachWorkerCredential(ctx.get(), worker);
  return ctx;
}

// A channel with a connection of its own (the probe must not queue behind
// the load's frames on one connection).
std::shared_ptr<grpc::Channel> Channel(const std::string& target, int id) {
  grpc::ChannelArguments args;
  args.SetInt("ringleader.kv_bench_channel", id);
  args.SetMaxReceiveMessageSize(64 << 20);
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(),
                                   args);
}

// One registered worker running a 1-worker job: the probe's heartbeats and
// the KV space the load uses.
struct FormedJob {
  v1::HeartbeatRequest hb;
  WorkerCredential worker;
};

absl::StatusOr<FormedJob> FormJob(grpc::Channel& channel) {
  auto workers = v1::WorkerService::NewStub(
      std::shared_ptr<grpc::Channel>(&channel, [](grpc::Channel*) {}));
  auto users = v1::UserService::NewStub(
      std::shared_ptr<grpc::Channel>(&channel, [](grpc::Channel*) {}));
  v1::RegisterRequest reg;
  reg.set_hostname("kv-bench");
  reg.set_pid(1);
  reg.set_device("cpu");
  reg.set_address("127.0.0.1");
  v1::RegisterResponse worker;
  grpc::Status s = workers->Register(Ctx().get(), reg, &worker);
  if (!s.ok()) return absl::InternalError("register: " + s.error_message());
  v1::SubmitJobRequest submit;
  v1::JobSpec* spec = submit.mutable_spec();
  spec->set_name("kv-bench");
  spec->mutable_model()->set_arch(v1::MODEL_ARCH_MLP);
  spec->mutable_dataset()->set_format(v1::DATASET_FORMAT_SYNTHETIC);
  spec->mutable_dataset()->set_synthetic_train_size(1 << 20);
  spec->mutable_optimizer()->set_kind(v1::OPTIMIZER_KIND_SGD);
  spec->mutable_optimizer()->set_learning_rate(0.05);
  spec->set_epochs(1);
  spec->set_batch_size(32);
  spec->set_min_workers(1);
  spec->set_max_workers(1);
  v1::SubmitJobResponse job;
  s = users->SubmitJob(Ctx().get(), submit, &job);
  if (!s.ok()) return absl::InternalError("submit: " + s.error_message());
  v1::HeartbeatRequest hb;
  hb.set_worker_id(worker.worker_id());
  v1::HeartbeatResponse assigned;
  const WorkerCredential me{worker.worker_id(), worker.worker_token()};
  s = workers->Heartbeat(Ctx(me).get(), hb, &assigned);
  if (!s.ok() || assigned.assignment().job_id() != job.job_id()) {
    return absl::InternalError("no assignment: " + s.error_message());
  }
  v1::JoinRendezvousRequest join;
  join.set_job_id(job.job_id());
  join.set_worker_id(worker.worker_id());
  join.set_timeout_ms(10'000);
  v1::JoinRendezvousResponse gen;
  s = workers->JoinRendezvous(Ctx(me).get(), join, &gen);
  if (!s.ok()) return absl::InternalError("join: " + s.error_message());
  hb.set_job_id(job.job_id());
  hb.set_generation(gen.generation());
  return FormedJob{hb, me};
}

// Heartbeat answer times (ms) in a window of a phase.
struct Window {
  std::vector<double> ms;
  int failed = 0;
};

Window Between(const std::vector<HeartbeatProbe::Sample>& samples,
               absl::Time from, absl::Time to) {
  Window w;
  for (const auto& s : samples) {
    if (s.sent < from || s.sent > to) continue;
    if (s.ms < 0) {
      ++w.failed;
    } else {
      w.ms.push_back(s.ms);
    }
  }
  return w;
}

// A phase: its load and the heartbeats while the waits were being sent
// (`issuing`) and while they were pending and keys were written (`writing`).
struct PhaseRow {
  std::string phase;
  LoadResult load;
  Window issuing, writing;
  double cpu_s = 0;
};

std::string Stats(Window w) {
  return absl::StrFormat("%5d hb, p50 %6.2f p99 %7.2f max %7.2f ms, %d failed",
                         static_cast<int>(w.ms.size()), Percentile(w.ms, 50),
                         Percentile(w.ms, 99), Percentile(w.ms, 100), w.failed);
}

std::string JsonWindow(const char* name, Window w) {
  return absl::StrFormat(
      R"("%s":{"heartbeats":%d,"failed":%d,"p50_ms":%.2f,"p99_ms":%.2f,)"
      R"("max_ms":%.2f})",
      name, static_cast<int>(w.ms.size()), w.failed, Percentile(w.ms, 50),
      Percentile(w.ms, 99), Percentile(w.ms, 100));
}

std::string Json(int n, const PhaseRow& p, const std::string& job_state) {
  return absl::StrFormat(
      R"({"label":"%s","ranks":%d,"phase":"%s","waits":%d,"waits_ok":%d,)"
      R"("writes":%d,"writing_s":%.3f,"completion_s":%.3f,%s,%s,)"
      R"("coordinator_cpu_s":%.2f,"job_state":"%s","error":"%s",)"
      R"("load":%.2f})",
      absl::GetFlag(FLAGS_label), n, p.phase, p.load.waits, p.load.waits_ok,
      p.load.writes,
      absl::ToDoubleSeconds(p.load.writes_ended - p.load.writes_started),
      absl::ToDoubleSeconds(p.load.completion),
      JsonWindow("issuing", p.issuing), JsonWindow("writing", p.writing),
      p.cpu_s, job_state, absl::CHexEscape(p.load.first_error), LoadAverage1());
}

// Runs `load` with the probe going; the row of the phase.
template <typename Load>
PhaseRow Phase(const std::string& name, v1::WorkerService::Stub& probe_stub,
               const FormedJob& job, pid_t coordinator, Load load) {
  PhaseRow row;
  row.phase = name;
  const double cpu0 = ProcessCpuSeconds(coordinator);
  const absl::Time start = absl::Now();
  HeartbeatProbe probe(probe_stub, job.hb, job.worker,
                       absl::Milliseconds(absl::GetFlag(FLAGS_probe_ms)));
  row.load = load();
  const std::vector<HeartbeatProbe::Sample> samples = probe.Stop();
  row.cpu_s = ProcessCpuSeconds(coordinator) - cpu0;
  row.issuing = Between(samples, start, row.load.writes_started);
  row.writing =
      Between(samples, row.load.writes_started, row.load.writes_ended);
  return row;
}

void Print(int n, const PhaseRow& r, const std::string& state) {
  std::cout << absl::StrFormat(
      "%-7s %5d %-9s %5d/%-5d waits; %5d writes in %6.2f s | while "
      "writing: %s | while issuing: %s | cpu %5.2f s | job %s%s\n",
      absl::GetFlag(FLAGS_label), n, r.phase, r.load.waits_ok, r.load.waits,
      r.load.writes,
      absl::ToDoubleSeconds(r.load.writes_ended - r.load.writes_started),
      Stats(r.writing), Stats(r.issuing), r.cpu_s, state,
      r.load.first_error.empty() ? "" : " | " + r.load.first_error);
}

absl::Status RunSize(int n, std::ofstream& out) {
  absl::StatusOr<BenchCoordinator> coord = StartBenchCoordinator(
      absl::GetFlag(FLAGS_coordinator_binary),
      absl::StrCat(absl::GetFlag(FLAGS_work_dir), "/", n),
      {absl::StrCat("--lease_ms=", absl::GetFlag(FLAGS_lease_ms)),
       absl::StrCat("--heartbeat_ms=", absl::GetFlag(FLAGS_lease_ms) / 3)});
  if (!coord.ok()) return coord.status();
  auto load_channel = Channel(coord->target, 1);
  auto probe_channel = Channel(coord->target, 2);
  absl::StatusOr<FormedJob> formed = FormJob(*load_channel);
  if (!formed.ok()) return formed.status();
  const v1::HeartbeatRequest* hb = &formed->hb;
  auto load_stub = v1::WorkerService::NewStub(load_channel);
  auto probe_stub = v1::WorkerService::NewStub(probe_channel);
  const KvSpace space{hb->job_id(), hb->generation(), formed->worker};
  const pid_t pid = coord->process->pid();
  std::vector<PhaseRow> rows;
  BootstrapOptions b;
  b.ranks = n;
  b.peers = absl::GetFlag(FLAGS_peers);
  b.value_bytes = absl::GetFlag(FLAGS_value_bytes);
  b.spread = absl::Milliseconds(absl::GetFlag(FLAGS_spread_ms));
  b.writers = absl::GetFlag(FLAGS_writers);
  rows.push_back(Phase("bootstrap", *probe_stub, *formed, pid,
                       [&] { return RunBootstrap(*load_stub, space, b); }));
  FloodOptions f;
  f.waits = absl::GetFlag(FLAGS_flood_waits);
  f.keys_per_wait = absl::GetFlag(FLAGS_flood_keys);
  f.writers = absl::GetFlag(FLAGS_writers);
  rows.push_back(Phase("flood", *probe_stub, *formed, pid,
                       [&] { return RunFlood(*load_stub, space, f); }));
  // Did the probed worker keep its job? A missed lease fails it.
  auto users = v1::UserService::NewStub(load_channel);
  v1::GetJobRequest get;
  get.set_job_id(hb->job_id());
  v1::Job job;
  grpc::Status s = users->GetJob(Ctx().get(), get, &job);
  const std::string state =
      s.ok() ? v1::JobState_Name(job.state()) : s.error_message();
  for (const PhaseRow& row : rows) {
    out << Json(n, row, state) << "\n";
    Print(n, row, state);
  }
  coord->process->Stop(absl::Seconds(5));
  return absl::OkStatus();
}

}  // namespace
}  // namespace ringleader::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  using namespace ringleader::bench;
  SetUpRunfiles(argv[0]);
  std::ofstream out(
      ResultsDir(absl::GetFlag(FLAGS_results_dir)) + "/kv_bootstrap.jsonl",
      std::ios::app);
  std::cout << MachineDescription() << "\n";
  int rc = 0;
  for (absl::string_view size :
       absl::StrSplit(absl::GetFlag(FLAGS_sizes), ',')) {
    int n = 0;
    if (!absl::SimpleAtoi(size, &n) || n < 2) {
      std::cerr << "bad size " << size << "\n";
      return 2;
    }
    if (absl::Status s = RunSize(n, out); !s.ok()) {
      std::cerr << "N=" << n << ": " << s << "\n";
      rc = 1;
    }
  }
  return rc;
}
