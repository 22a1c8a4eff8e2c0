#include "worker/coordinator_client.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "glog/logging.h"
#include "worker/phase_report.h"

namespace ringleader {
namespace {

// A rank blocked this long in one collective beats every kBlockedBeat: its
// generation may have ended (a peer hung), and it should learn that at
// once, not a heartbeat interval later. Healthy collectives finish well
// before, so training at full speed adds no calls.
constexpr std::chrono::milliseconds kBlockedFor(200);
constexpr absl::Duration kBlockedBeat = absl::Milliseconds(100);

bool Retryable(const absl::Status& s) {
  return absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s);
}

}  // namespace

CoordinatorClient::CoordinatorClient(std::shared_ptr<grpc::Channel> channel,
                                     Options options)
    : channel_(std::move(channel)),
      stub_(v1::WorkerService::NewStub(channel_)),
      options_(std::move(options)) {}

std::shared_ptr<grpc::Channel> CoordinatorClient::channel() const {
  absl::MutexLock lock(&channel_mu_);
  return channel_;
}

std::shared_ptr<v1::WorkerService::Stub> CoordinatorClient::Stub() const {
  absl::MutexLock lock(&channel_mu_);
  return stub_;
}

void CoordinatorClient::ReplaceChannel() {
  std::shared_ptr<grpc::Channel> fresh = options_.new_channel();
  // Calls in flight keep the old channel alive until they finish.
  absl::MutexLock lock(&channel_mu_);
  channel_ = std::move(fresh);
  stub_ = v1::WorkerService::NewStub(channel_);
}

CoordinatorClient::~CoordinatorClient() { StopHeartbeats(); }

std::unique_ptr<grpc::ClientContext> CoordinatorClient::Ctx(
    absl::Duration timeout) const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() +
                    absl::ToChronoMilliseconds(timeout));
  AttachWorkerCredential(ctx.get(), credential());
  return ctx;
}

absl::Status CoordinatorClient::WithBackoff(
    absl::FunctionRef<absl::Status()> attempt,
    absl::FunctionRef<bool(const absl::Status&)> retry) const {
  const absl::Time give_up = absl::Now() + options_.unreachable_timeout;
  absl::Duration backoff = absl::Milliseconds(100);
  // Bounded by unreachable_timeout.
  while (true) {
    absl::Status s = attempt();
    if (s.ok() || !retry(s) || absl::Now() + backoff > give_up) return s;
    LOG(WARNING) << s.message() << "; retrying in " << backoff;
    absl::SleepFor(backoff);
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

absl::Status CoordinatorClient::Retrying(
    absl::string_view what, absl::Duration timeout,
    absl::FunctionRef<grpc::Status(grpc::ClientContext*)> rpc) const {
  return WithBackoff(
      [&] { return FromGrpcStatus(rpc(Ctx(timeout).get()), what); },
      [this](const absl::Status& s) {
        absl::MutexLock lock(&mu_);
        return absl::IsUnavailable(s) && !stop_;
      });
}

absl::Status CoordinatorClient::RetryingThroughOutage(
    absl::string_view what, absl::Duration timeout,
    absl::FunctionRef<grpc::Status(grpc::ClientContext*)> rpc,
    const std::atomic<bool>* cancel) const {
  return WithBackoff(
      [&] { return FromGrpcStatus(rpc(Ctx(timeout).get()), what); },
      [this, cancel](const absl::Status& s) {
        if (!Retryable(s) || (cancel != nullptr && cancel->load())) {
          return false;
        }
        absl::MutexLock lock(&mu_);
        return !stop_;
      });
}

std::string CoordinatorClient::worker_id() const {
  absl::MutexLock lock(&mu_);
  return worker_id_;
}

WorkerCredential CoordinatorClient::credential() const {
  absl::MutexLock lock(&mu_);
  return {worker_id_, worker_token_};
}

absl::Status CoordinatorClient::RegisterOnce(const std::string& resume_job_id) {
  v1::RegisterRequest req;
  req.set_hostname(options_.hostname);
  req.set_device(options_.device);
  req.set_pid(options_.pid);
  req.set_process_id(options_.process_id);
  req.set_address(options_.address);
  req.set_resume_job_id(resume_job_id);
  v1::RegisterResponse resp;
  absl::Status s = FromGrpcStatus(
      Stub()->Register(Ctx(options_.rpc_timeout).get(), req, &resp),
      "register");
  if (!s.ok()) return s;
  absl::MutexLock lock(&mu_);
  worker_id_ = resp.worker_id();
  worker_token_ = resp.worker_token();
  heartbeat_interval_ =
      absl::Milliseconds(std::max<int64_t>(resp.heartbeat_interval_ms(), 50));
  return absl::OkStatus();
}

absl::Status CoordinatorClient::Register() {
  return WithBackoff([this] { return RegisterOnce(); }, Retryable);
}

absl::Status CoordinatorClient::RegisterAgain(const std::string& stale_id,
                                              const std::string& job_id) {
  absl::MutexLock lock(&register_mu_);
  if (worker_id() != stale_id) return absl::OkStatus();  // Already done.
  return RegisterOnce(job_id);
}

v1::HeartbeatRequest CoordinatorClient::BeatRequest(
    const std::string& worker_id) const {
  v1::HeartbeatRequest req;
  req.set_worker_id(worker_id);
  {
    absl::MutexLock lock(&mu_);
    req.set_job_id(job_id_);
    req.set_generation(generation_);
  }
  req.set_step(step_);
  req.set_collective_wait_ms(collective_wait_.Waiting().count());
  AddPhase(phases_.Read(), req);
  return req;
}

bool CoordinatorClient::Unknown(const std::string& worker_id) {
  v1::HeartbeatResponse resp;  // Its directive comes again with the next.
  return Stub()
             ->Heartbeat(Ctx(options_.rpc_timeout).get(),
                         BeatRequest(worker_id), &resp)
             .error_code() == grpc::StatusCode::NOT_FOUND;
}

void CoordinatorClient::StartHeartbeats(AbortHook on_abort) {
  on_abort_ = std::move(on_abort);
  phases_.Enter(Phase::kIdle);
  GenerationWatch::Options watch;
  watch.channel = [this] { return channel(); };
  watch.credential = [this] { return credential(); };
  watch.on_ended = on_abort_;
  watch.max_backoff = options_.max_backoff;
  watch_ = std::make_unique<GenerationWatch>(std::move(watch));
  heartbeat_thread_ = std::thread([this] { HeartbeatLoop(); });
}

void CoordinatorClient::StopHeartbeats() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (watch_ != nullptr) watch_->Stop();
  if (heartbeat_thread_.joinable()) heartbeat_thread_.join();
}

void CoordinatorClient::SetCurrent(const std::string& job_id,
                                   int64_t generation, bool keep_watch) {
  {
    absl::MutexLock lock(&mu_);
    job_id_ = job_id;
    generation_ = generation;
    if (job_id.empty()) serving_job_.clear();
  }
  // Joining or connecting until the trainer's spans say more; idle without
  // a job.
  phases_.Enter(job_id.empty() ? Phase::kIdle : Phase::kRendezvous);
  if (watch_ != nullptr && !keep_watch) watch_->Set(job_id, generation);
}

absl::Time CoordinatorClient::LastHeartbeatLoop() const {
  const int64_t ns = last_beat_ns_.load();
  if (ns == INT64_MAX) return absl::InfiniteFuture();
  if (ns == INT64_MIN) return absl::InfinitePast();
  return absl::FromUnixNanos(ns);
}

void CoordinatorClient::HeartbeatLoop() {
  // However the loop ends, the watchdog must see it as dead.
  struct MarkEnded {
    std::atomic<int64_t>* ns;
    ~MarkEnded() { ns->store(INT64_MIN); }
  } mark_ended{&last_beat_ns_};
  last_beat_ns_ = absl::ToUnixNanos(absl::Now());
  absl::Time last_contact = absl::Now();
  absl::Duration backoff = absl::Milliseconds(100);
  int unreachable_beats = 0;
  while (true) {
    absl::Duration interval;
    {
      absl::MutexLock lock(&mu_);
      if (stop_) return;
      interval = heartbeat_interval_;
    }
    const v1::HeartbeatRequest req = BeatRequest(worker_id());
    v1::HeartbeatResponse resp;
    absl::Status s = FromGrpcStatus(
        Stub()->Heartbeat(
            Ctx(std::min(options_.rpc_timeout, interval * 3)).get(), req,
            &resp),
        "heartbeat");
    last_beat_ns_ = absl::ToUnixNanos(absl::Now());
    absl::Duration wait = interval;
    // Any failure counts: behind a silent partition every beat ends
    // DEADLINE_EXCEEDED, never UNAVAILABLE, and the channel still needs
    // replacing once the network is back.
    if (s.ok() || absl::IsNotFound(s)) unreachable_beats = 0;
    if (s.ok()) {
      last_contact = absl::Now();
      backoff = absl::Milliseconds(100);
      OnBeatAnswered(resp);
    } else if (absl::IsNotFound(s)) {
      OnLeaseLost(s, req.worker_id());
      wait = absl::ZeroDuration();
    } else {
      LOG(WARNING) << s.message();
      if (++unreachable_beats >= 3 && options_.new_channel) {
        LOG(WARNING) << "coordinator unreachable; connecting on a new channel";
        ReplaceChannel();
        unreachable_beats = 0;
      }
      if (absl::Now() - last_contact > options_.unreachable_timeout) {
        absl::MutexLock lock(&mu_);
        unreachable_ = true;
        return;
      }
      wait = std::min(backoff, interval);
      backoff = std::min(backoff * 2, options_.max_backoff);
    }
    // Only when the coordinator answers: an unreachable one gets the
    // backoff.
    if (s.ok() && collective_wait_.Waiting() >= kBlockedFor) {
      wait = std::min(wait, kBlockedBeat);
    }
    absl::MutexLock lock(&mu_);
    auto stopping = [this]()
                        ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_; };
    mu_.AwaitWithTimeout(absl::Condition(&stopping), wait);
  }
}

void CoordinatorClient::OnBeatAnswered(const v1::HeartbeatResponse& resp) {
  if (resp.has_assignment()) {
    absl::MutexLock lock(&mu_);
    if (serving_job_.empty()) assignment_ = resp.assignment();
  } else if (resp.has_abort() && on_abort_) {
    on_abort_(resp.abort());
  }
}

void CoordinatorClient::OnLeaseLost(const absl::Status& s,
                                    const std::string& stale_id) {
  // The lease was lost (we stalled, or the coordinator restarted). A new
  // registration is a new worker: whatever generation we were in is over.
  LOG(WARNING) << s.message() << "; registering again";
  v1::GenerationAbort abort;
  {
    absl::MutexLock lock(&mu_);
    abort.set_job_id(job_id_);
    abort.set_generation(generation_);
  }
  abort.set_reason("lease lost; registered again");
  abort.set_rejoin(false);
  // A coordinator that gave the process its id back still counts on it
  // where it did; it tells the worker if its generation ended.
  if (RegisterAgain(stale_id, abort.job_id()).ok() && on_abort_ &&
      !abort.job_id().empty() && worker_id() != stale_id) {
    on_abort_(abort);
  }
}

absl::StatusOr<v1::JobAssignment> CoordinatorClient::WaitForAssignment(
    absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return assignment_.has_value() || unreachable_ || stop_;
  };
  if (!mu_.AwaitWithTimeout(absl::Condition(&ready), timeout)) {
    return absl::DeadlineExceededError("no job assigned yet");
  }
  if (assignment_.has_value()) {
    v1::JobAssignment a = *std::move(assignment_);
    assignment_.reset();
    serving_job_ = a.job_id();
    return a;
  }
  if (unreachable_) {
    return absl::UnavailableError(
        absl::StrCat("coordinator unreachable for ",
                     absl::FormatDuration(options_.unreachable_timeout)));
  }
  return absl::CancelledError("client stopping");
}

absl::StatusOr<v1::JoinRendezvousResponse> CoordinatorClient::Join(
    const std::string& job_id, absl::Duration timeout) {
  phases_.Enter(Phase::kRendezvous);
  v1::JoinRendezvousRequest req;
  req.set_job_id(job_id);
  req.set_timeout_ms(absl::ToInt64Milliseconds(timeout));
  req.set_keeps_state(options_.keeps_state);
  v1::JoinRendezvousResponse resp;
  absl::Status s = AsRegistered("rejoin job", job_id, [&] {
    return Retrying("join rendezvous", timeout + options_.rpc_timeout,
                    [&](grpc::ClientContext* ctx) {
                      // RegisterAgain may change it.
                      req.set_worker_id(worker_id());
                      return Stub()->JoinRendezvous(ctx, req, &resp);
                    });
  });
  if (!s.ok()) return s;
  return resp;
}

absl::Status CoordinatorClient::AsRegistered(
    absl::string_view what, const std::string& job_id,
    absl::FunctionRef<absl::Status()> call) {
  absl::Status s;
  // Bounded: each round registers again at most once, and only when the
  // coordinator said it does not know us.
  for (int round = 0; round < 3; ++round) {
    const std::string id = worker_id();
    s = call();
    // NOT_FOUND is also the answer for a job that is gone, UNAUTHENTICATED
    // (a generation's calls) for a token that is not the worker's: ask.
    if ((!absl::IsNotFound(s) && !absl::IsUnauthenticated(s)) || round == 2 ||
        !Unknown(id)) {
      break;
    }
    LOG(WARNING) << "the coordinator no longer knows worker " << id
                 << "; registering again to " << what << " " << job_id;
    if (absl::Status r = RegisterAgain(id, job_id); !r.ok()) return r;
  }
  return s;
}

absl::Status CoordinatorClient::Barrier(const std::string& job_id,
                                        int64_t generation, int32_t rank,
                                        const std::string& name,
                                        absl::Duration timeout) {
  v1::BarrierRequest req;
  req.set_job_id(job_id);
  req.set_generation(generation);
  req.set_rank(rank);
  req.set_name(name);
  req.set_timeout_ms(absl::ToInt64Milliseconds(timeout));
  v1::BarrierResponse resp;
  return Retrying(absl::StrCat("barrier ", name),
                  timeout + options_.rpc_timeout,
                  [&](grpc::ClientContext* ctx) {
                    return Stub()->Barrier(ctx, req, &resp);
                  });
}

absl::Status CoordinatorClient::PublishNcclId(const std::string& job_id,
                                              int64_t generation,
                                              int64_t comm_index,
                                              const std::string& unique_id) {
  v1::PublishNcclIdRequest req;
  req.set_job_id(job_id);
  req.set_generation(generation);
  req.set_rank(0);
  req.set_comm_index(comm_index);
  req.set_unique_id(unique_id);
  v1::PublishNcclIdResponse resp;
  absl::Status s = Retrying("publish NCCL id", options_.rpc_timeout,
                            [&](grpc::ClientContext* ctx) {
                              return Stub()->PublishNcclId(ctx, req, &resp);
                            });
  // A retry of a publish that went through finds its own id there.
  return absl::IsAlreadyExists(s) ? absl::OkStatus() : s;
}

absl::StatusOr<std::string> CoordinatorClient::FetchNcclId(
    const std::string& job_id, int64_t generation, int32_t rank,
    int64_t comm_index, absl::Duration timeout) {
  v1::FetchNcclIdRequest req;
  req.set_job_id(job_id);
  req.set_generation(generation);
  req.set_rank(rank);
  req.set_comm_index(comm_index);
  req.set_timeout_ms(absl::ToInt64Milliseconds(timeout));
  v1::FetchNcclIdResponse resp;
  absl::Status s = Retrying("fetch NCCL id", timeout + options_.rpc_timeout,
                            [&](grpc::ClientContext* ctx) {
                              return Stub()->FetchNcclId(ctx, req, &resp);
                            });
  if (!s.ok()) return s;
  return resp.unique_id();
}

absl::StatusOr<v1::ShardAssignment> CoordinatorClient::GetShard(
    const v1::GetShardRequest& r) {
  v1::ShardAssignment resp;
  absl::Status s = Retrying("get shard", options_.rpc_timeout,
                            [&](grpc::ClientContext* ctx) {
                              return Stub()->GetShard(ctx, r, &resp);
                            });
  if (!s.ok()) return s;
  return resp;
}

absl::Status CoordinatorClient::ReportProgress(
    const v1::ReportProgressRequest& r, const std::atomic<bool>* cancel) {
  v1::ReportProgressResponse resp;
  return AsRegistered("report the progress of job", r.job_id(), [&] {
    return RetryingThroughOutage(
        "report progress", options_.rpc_timeout,
        [&](grpc::ClientContext* ctx) {
          return Stub()->ReportProgress(ctx, r, &resp);
        },
        cancel);
  });
}

absl::StatusOr<v1::CommitCheckpointResponse>
CoordinatorClient::CommitCheckpoint(const v1::CommitCheckpointRequest& r,
                                    const std::atomic<bool>* cancel) {
  v1::CommitCheckpointResponse resp;
  absl::Status s = AsRegistered("commit a checkpoint of job", r.job_id(), [&] {
    return RetryingThroughOutage(
        "commit checkpoint", options_.rpc_timeout,
        [&](grpc::ClientContext* ctx) {
          return Stub()->CommitCheckpoint(ctx, r, &resp);
        },
        cancel);
  });
  if (!s.ok()) return s;
  return resp;
}

absl::Status CoordinatorClient::AppendLogs(v1::AppendLogsRequest& r) {
  r.set_worker_id(worker_id());
  v1::AppendLogsResponse resp;
  return FromGrpcStatus(
      Stub()->AppendLogs(Ctx(options_.rpc_timeout).get(), r, &resp),
      "append logs");
}

absl::Status CoordinatorClient::Leave(const std::string& reason) {
  v1::LeaveRequest req;
  req.set_worker_id(worker_id());
  req.set_reason(reason);
  v1::LeaveResponse resp;
  return FromGrpcStatus(
      Stub()->Leave(Ctx(options_.rpc_timeout).get(), req, &resp), "leave");
}

absl::StatusOr<v1::PreemptResponse> CoordinatorClient::Preempt(
    const v1::PreemptRequest& r, absl::Duration timeout) {
  // Through a coordinator restart, within `timeout` in all: UNAVAILABLE
  // means no coordinator took the call, and a restarted one adopts the
  // generation and opens a new window for the members that call again.
  const absl::Time deadline = absl::Now() + timeout;
  v1::PreemptResponse resp;
  absl::Status s;
  absl::Duration backoff = absl::Milliseconds(50);
  // Bounded by the deadline (and the backoff's floor, so by a count too).
  while (true) {
    const absl::Duration left = deadline - absl::Now();
    s = FromGrpcStatus(Stub()->Preempt(Ctx(left).get(), r, &resp), "preempt");
    if (!absl::IsUnavailable(s) || deadline - absl::Now() <= backoff) break;
    absl::SleepFor(backoff);
    backoff = std::min(backoff * 2, absl::Milliseconds(500));
  }
  if (!s.ok()) return s;
  return resp;
}

}  // namespace ringleader
