#include "tests/integration/cluster.h"

#include <signal.h>

#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/grpc_status.h"
#include "common/job_over.h"

namespace ringleader::testing {
namespace {

std::unique_ptr<grpc::ClientContext> Ctx(absl::Duration d) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() +
                    absl::ToChronoMilliseconds(d));
  return ctx;
}

// Logs go to one file per process (the daemons log to stderr).
ProcessOptions LogTo(
    const std::string& log,
    std::vector<std::pair<std::string, std::optional<std::string>>> env = {}) {
  ProcessOptions o;
  o.env = std::move(env);
  o.stdout_path = log + ".out";
  o.stderr_path = log;
  return o;
}

}  // namespace

std::string FreshDir(const std::string& name) {
  const std::string dir = absl::StrCat(TestTempDir(), "/", name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

absl::StatusOr<std::unique_ptr<Cluster>> Cluster::Start(
    const std::string& name, std::vector<std::string> coordinator_flags) {
  ClusterOptions options;
  options.coordinator_flags = std::move(coordinator_flags);
  return Start(name, std::move(options));
}

absl::StatusOr<std::unique_ptr<Cluster>> Cluster::Start(
    const std::string& name, ClusterOptions options) {
  std::unique_ptr<Cluster> c(new Cluster());
  c->dir_ = FreshDir(name);
  c->options_ = std::move(options);
  if (c->options_.log_dir.empty()) c->options_.log_dir = c->dir_;
  std::filesystem::create_directories(c->options_.log_dir);
  if (absl::Status s = c->StartCoordinator(); !s.ok()) return s;
  return c;
}

void Cluster::StopCoordinator(int signal) {
  if (coordinator_ == nullptr) return;
  coordinator_->Kill(signal);
  coordinator_->Wait(absl::Seconds(30));
  coordinator_.reset();
}

void Cluster::SignalCoordinator(int signal) {
  if (coordinator_ != nullptr) coordinator_->Kill(signal);
}

absl::Status Cluster::StartCoordinator(bool same_port) {
  const std::string port_file =
      absl::StrCat(dir_, "/port.", ++coordinator_starts_);
  std::vector<std::string> argv = options_.coordinator_prefix;
  for (std::string arg :
       {RunfilePath("coordinator/ringleader-coordinator"),
        absl::StrCat("--listen=", options_.host, ":", same_port ? port_ : 0),
        absl::StrCat("--state=", dir_, "/state.db"),
        absl::StrCat("--port_file=", port_file)}) {
    argv.push_back(std::move(arg));
  }
  for (const std::string& f : options_.coordinator_flags) argv.push_back(f);
  const std::string log = absl::StrCat(options_.log_dir, "/coordinator.log");
  absl::StatusOr<std::unique_ptr<Subprocess>> p =
      Subprocess::Start(argv, LogTo(log));
  if (!p.ok()) return p.status();
  coordinator_ = *std::move(p);
  absl::StatusOr<std::string> port =
      WaitForFile(port_file, absl::Seconds(30), coordinator_.get());
  if (!port.ok()) {
    return absl::UnavailableError(
        absl::StrCat("coordinator did not start: ", port.status().message(),
                     "\n", ReadFileOrEmpty(log)));
  }
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(*port), &port_)) {
    return absl::InternalError(absl::StrCat("bad port file: ", *port));
  }
  return Connect();
}

absl::Status Cluster::Connect() {
  if (options_.connect) {
    absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
        options_.connect(port_);
    if (!channel.ok()) return channel.status();
    channel_ = *std::move(channel);
  } else {
    channel_ =
        grpc::CreateChannel(target(), grpc::InsecureChannelCredentials());
  }
  users_ = v1::UserService::NewStub(channel_);
  return absl::OkStatus();
}

absl::StatusOr<Subprocess*> Cluster::StartWorker(
    std::vector<std::string> flags,
    const std::vector<std::string>& command_prefix) {
  std::vector<std::string> argv = command_prefix;
  argv.push_back(RunfilePath("worker/ringleader-worker"));
  argv.push_back(absl::StrCat("--coordinator=", target()));
  for (std::string& f : flags) argv.push_back(std::move(f));
  absl::StatusOr<std::unique_ptr<Subprocess>> p = Subprocess::Start(
      argv,
      // The environment a deployment gives it: none of OpenBLAS's or
      // OpenMP's thread settings (--threads sizes both pools).
      LogTo(absl::StrCat(options_.log_dir, "/worker", workers_.size(), ".log"),
            {{"OPENBLAS_NUM_THREADS", std::nullopt},
             {"OMP_NUM_THREADS", std::nullopt}}));
  if (!p.ok()) return p.status();
  workers_.push_back(*std::move(p));
  return workers_.back().get();
}

std::vector<std::string> Cluster::WorkerLogs() const {
  std::vector<std::string> logs;
  for (size_t w = 0; w < workers_.size(); ++w) {
    logs.push_back(
        ReadFileOrEmpty(absl::StrCat(options_.log_dir, "/worker", w, ".log")));
  }
  return logs;
}

absl::Status Cluster::StartWorkers(int n,
                                   const std::vector<std::string>& flags) {
  for (int i = 0; i < n; ++i) {
    if (absl::StatusOr<Subprocess*> w = StartWorker(flags); !w.ok()) {
      return w.status();
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Cluster::Submit(const v1::JobSpec& spec) {
  v1::SubmitJobRequest req;
  *req.mutable_spec() = spec;
  v1::SubmitJobResponse resp;
  if (absl::Status s = FromGrpcStatus(
          users_->SubmitJob(Ctx(absl::Seconds(10)).get(), req, &resp),
          "SubmitJob");
      !s.ok()) {
    return s;
  }
  return resp.job_id();
}

absl::StatusOr<v1::Job> Cluster::Get(const std::string& job_id) {
  v1::GetJobRequest req;
  req.set_job_id(job_id);
  v1::Job job;
  if (absl::Status s = FromGrpcStatus(
          users_->GetJob(Ctx(absl::Seconds(10)).get(), req, &job), "GetJob");
      !s.ok()) {
    return s;
  }
  return job;
}

absl::StatusOr<v1::Job> Cluster::WaitUntil(
    const std::string& job_id, std::function<bool(const v1::Job&)> until,
    absl::Duration timeout) {
  auto ctx = Ctx(timeout);
  v1::WatchJobRequest req;
  req.set_job_id(job_id);
  auto stream = users_->WatchJob(ctx.get(), req);
  v1::Job job, last;
  bool any = false, reached = false;
  // Bounded by the context's deadline.
  while (stream->Read(&job)) {
    last = job;
    any = true;
    if (until(job) || IsJobOver(job.state())) {
      reached = true;
      ctx->TryCancel();
      break;
    }
  }
  stream->Finish().ok();
  if (!reached) {
    return absl::DeadlineExceededError(absl::StrCat(
        "job ", job_id, ": condition not reached; last state ",
        any ? v1::JobState_Name(last.state()) : "none", " ", last.message()));
  }
  return last;
}

absl::StatusOr<v1::Job> Cluster::WaitForEnd(const std::string& job_id,
                                            absl::Duration timeout) {
  absl::StatusOr<v1::Job> last = WaitUntil(
      job_id, [](const v1::Job&) { return false; }, timeout);
  if (!last.ok()) return last.status();
  if (!IsJobOver(last->state())) {
    return absl::DeadlineExceededError(
        absl::StrCat("job ", job_id, " not finished; last state ",
                     v1::JobState_Name(last->state()), " ", last->message()));
  }
  return last;
}

bool RunningAt(const v1::Job& job, int world, int64_t step) {
  return job.state() == v1::JOB_STATE_RUNNING && job.world_size() == world &&
         job.progress().step() >= step;
}

}  // namespace ringleader::testing
