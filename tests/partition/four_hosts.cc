#include "tests/partition/four_hosts.h"

#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "grpcpp/create_channel_posix.h"
#include "tests/integration/worker_logs.h"

namespace ringleader::testing {
namespace {

constexpr char kCoordinator[] = "coord";
// The recorder follows the job at most this long.
constexpr absl::Duration kRecordFor = absl::Minutes(30);

std::string WorkerHost(int i) { return absl::StrCat("w", i); }

// The end of a log without the per-step sample lines.
std::string Tail(const std::string& log, size_t bytes) {
  std::string text;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (!absl::StrContains(line, "] samples generation=")) {
      absl::StrAppend(&text, line, "\n");
    }
  }
  return text.size() > bytes ? "..." + text.substr(text.size() - bytes) : text;
}

}  // namespace

std::string FaultName(FourHosts::Fault fault) {
  switch (fault) {
    case FourHosts::Fault::kNone:
      return "none";
    case FourHosts::Fault::kCoordinator:
      return "coordinator partitioned";
    case FourHosts::Fault::kWorker:
      return "worker partitioned";
    case FourHosts::Fault::kHeartbeats:
      return "worker-to-coordinator traffic dropped";
  }
  return "?";
}

absl::StatusOr<std::unique_ptr<FourHosts>> FourHosts::Start(
    const std::string& name, const v1::JobSpec& spec, bool max_jobs_one,
    const std::string& log_dir) {
  std::unique_ptr<FourHosts> h(new FourHosts());
  h->log_dir_ = log_dir;
  std::vector<std::string> hosts = {kCoordinator};
  for (int i = 0; i < kWorkers; ++i) hosts.push_back(WorkerHost(i));
  absl::StatusOr<std::unique_ptr<VirtualNetwork>> net =
      VirtualNetwork::Create(hosts);
  if (!net.ok()) return net.status();
  h->net_ = *std::move(net);
  const VirtualNetwork* n = h->net_.get();
  ClusterOptions options;
  options.host = n->Address(kCoordinator);
  options.coordinator_prefix = n->CommandPrefix(kCoordinator);
  options.log_dir = log_dir;
  // The test is in the root namespace, which reaches no host: its channel
  // is a socket made on the coordinator's host, to the coordinator's own
  // address there (loopback: no fault touches it).
  options.connect =
      [n](int port) -> absl::StatusOr<std::shared_ptr<grpc::Channel>> {
    const std::string address = n->Address(kCoordinator);
    absl::StatusOr<int> fd =
        n->ConnectTcp(kCoordinator, address, port, absl::Seconds(30));
    if (!fd.ok()) return fd.status();
    return grpc::CreateInsecureChannelFromFd(absl::StrCat(address, ":", port),
                                             *fd);
  };
  absl::StatusOr<std::unique_ptr<Cluster>> cluster =
      Cluster::Start(name, std::move(options));
  if (!cluster.ok()) return cluster.status();
  h->cluster_ = *std::move(cluster);
  absl::StatusOr<std::string> job = h->cluster_->Submit(spec);
  if (!job.ok()) return job.status();
  h->job_id_ = *job;
  h->recorder_ =
      std::make_unique<JobRecorder>(&h->cluster_->users(), h->job_id_,
                                    log_dir + "/job_states.log", kRecordFor);
  // Every optimizer step in the worker logs, with its time: what trained
  // while the network was broken.
  setenv("GLOG_vmodule", "trainer=1", 1);
  std::vector<pid_t> pids;
  for (int i = 0; i < kWorkers; ++i) {
    std::vector<std::string> flags = {
        absl::StrCat("--address=", n->Address(WorkerHost(i))), "--threads=1"};
    if (max_jobs_one) flags.push_back("--max_jobs=1");
    absl::StatusOr<Subprocess*> w =
        h->cluster_->StartWorker(flags, n->CommandPrefix(WorkerHost(i)));
    if (!w.ok()) return w.status();
    pids.push_back((*w)->pid());
  }
  h->exits_ = std::make_unique<ExitClock>(pids);
  return h;
}

FourHosts::~FourHosts() {
  exits_.reset();
  recorder_.reset();
  cluster_.reset();
  net_.reset();
}

absl::StatusOr<v1::Job> FourHosts::WaitUntilTraining(int64_t step,
                                                     absl::Duration timeout) {
  return recorder_->WaitFor(
      [step](const v1::Job& j) {
        return j.state() == v1::JOB_STATE_RUNNING &&
               j.world_size() == kWorkers && j.progress().step() >= step;
      },
      timeout);
}

absl::StatusOr<v1::Job> FourHosts::WaitForEnd(absl::Duration timeout) {
  return recorder_->WaitForEnd(timeout);
}

std::vector<std::string> FourHosts::WorkerLogs() const {
  std::vector<std::string> logs;
  for (int i = 0; i < kWorkers; ++i) {
    logs.push_back(
        ReadFileOrEmpty(absl::StrCat(log_dir_, "/worker", i, ".log")));
  }
  return logs;
}

absl::StatusOr<int> FourHosts::WorkerWithRank(int64_t generation,
                                              int64_t rank) const {
  const std::vector<std::string> logs = WorkerLogs();
  for (int i = 0; i < kWorkers; ++i) {
    for (const RankLine& r : ParseRankLines(logs[i])) {
      if (r.generation == generation && r.rank == rank) return i;
    }
  }
  return absl::NotFoundError(absl::StrCat("no worker log says \"generation ",
                                          generation, ": rank ", rank, "\""));
}

absl::Status FourHosts::Inject(Fault fault, int worker) {
  switch (fault) {
    case Fault::kNone:
      return absl::OkStatus();
    case Fault::kCoordinator:
      return net_->Isolate(kCoordinator);
    case Fault::kWorker:
      return net_->Isolate(WorkerHost(worker));
    case Fault::kHeartbeats:
      return net_->DropFromTo(WorkerHost(worker), kCoordinator);
  }
  return absl::InvalidArgumentError("unknown fault");
}

std::string FourHosts::LogTails(size_t bytes) const {
  std::string out;
  for (const std::string& name :
       {std::string("job_states"), std::string("coordinator"),
        std::string("worker0"), std::string("worker1"),
        std::string("worker2")}) {
    absl::StrAppend(
        &out, "\n--- ", name, ".log (", log_dir_, ") ---\n",
        Tail(ReadFileOrEmpty(absl::StrCat(log_dir_, "/", name, ".log")),
             bytes));
  }
  return out;
}

}  // namespace ringleader::testing
