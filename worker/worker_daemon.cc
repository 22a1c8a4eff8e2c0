#include "worker/worker_daemon.h"

#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/job_over.h"
#include "common/logging.h"
#include "worker/client_link.h"
#include "worker/comm/collective_wait.h"
#include "worker/comm/lost_result_communicator.h"
#include "worker/data/job_data.h"
#include "worker/device/communicator_factory.h"
#include "worker/train/checkpoint/kept_state.h"
#include "worker/train/job_error.h"
#include "worker/train/preempted.h"
#include "worker/train/step/reducer_options.h"
#include "worker/train/trainer.h"

namespace ringleader {
namespace {

// How long a rank whose collective broke waits for the coordinator's word
// on why (WorkerDaemon::AwaitEndNotice).
constexpr absl::Duration kEndNoticeWait = absl::Seconds(2);

// 128 random bits, hex, made once per process: the coordinator's way to
// tell this process from another with the same hostname and pid (PID 1 of
// containers sharing a host's network and name).
const std::string& ProcessIncarnation() {
  static const std::string* id = [] {
    std::random_device random;
    std::string hex;
    for (int i = 0; i < 4; ++i) {
      absl::StrAppendFormat(&hex, "%08x", static_cast<uint32_t>(random()));
    }
    return new std::string(hex);
  }();
  return *id;
}

}  // namespace

WorkerDaemon::WorkerDaemon(WorkerConfig config)
    : config_(std::move(config)),
      device_(ParseDevice(config_.device).value_or(Device{})) {
  CoordinatorClient::Options o;
  o.hostname = config_.hostname;
  o.device = config_.device;
  o.pid = static_cast<int>(::getpid());
  o.process_id = ProcessIncarnation();
  o.address = config_.address;
  o.unreachable_timeout = config_.unreachable_timeout;
  o.keeps_state = config_.recover_from_peers;
  std::shared_ptr<grpc::ChannelCredentials> credentials =
      config_.credentials != nullptr ? config_.credentials
                                     : grpc::InsecureChannelCredentials();
  // Reconnects use the same credentials.
  o.new_channel = [target = config_.coordinator, credentials] {
    // Its own subchannels: by default channels with equal arguments share
    // them, and a new channel would inherit the old one's backoff.
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    return grpc::CreateCustomChannel(target, credentials, args);
  };
  client_ = std::make_unique<CoordinatorClient>(o.new_channel(), o);
  if (config_.ship_job_logs) {
    log_capture_ = std::make_unique<JobLogCapture>(config_.job_log_limits);
    log_shipper_ = std::make_unique<JobLogShipper>(
        log_capture_.get(),
        [this](v1::AppendLogsRequest& r) { return client_->AppendLogs(r); });
  }
}

WorkerDaemon::~WorkerDaemon() {
  {
    absl::MutexLock lock(&grace_mu_);
    grace_cancelled_ = true;
  }
  if (grace_timer_.joinable()) grace_timer_.join();
  log_shipper_.reset();
  log_capture_.reset();
  client_->StopHeartbeats();
}

void WorkerDaemon::NoteGeneration(const v1::JoinRendezvousResponse& gen,
                                  int32_t restarts, int32_t max_restarts) {
  if (restarts >= 0) {
    LOG(INFO) << "generation " << gen.generation() << " after "
              << (gen.job_restarts() > restarts ? "a failure"
                                                : "a membership change")
              << "; the job spent " << gen.job_restarts() << " of "
              << max_restarts << " restarts";
  }
  // The lines from here on carry the rank.
  if (log_capture_ != nullptr)
    log_capture_->SetRank(gen.generation(), gen.rank());
  if (config_.metrics != nullptr) {
    config_.metrics->generations->Increment();
    config_.metrics->job_restarts->Set(gen.job_restarts());
  }
}

void WorkerDaemon::BeginJobLog(const std::string& job_id) {
  if (log_capture_ != nullptr) log_capture_->BeginJob(job_id);
}

void WorkerDaemon::EndJobLog() {
  if (log_capture_ == nullptr) return;
  log_capture_->EndJob();
  // The job's last lines (why it failed, say) before the next job's: a
  // coordinator that is away does not hold the daemon up for long, and
  // what it did not take stays queued for it.
  log_shipper_->Flush(absl::Seconds(5));
}

void WorkerDaemon::Preempt(absl::Duration grace) {
  bool now;
  {
    absl::MutexLock lock(&mu_);
    now = preempt_.exchange(true) || comm_ == nullptr;
  }
  if (now) {
    LOG(WARNING) << "stopping now (not training, or signalled again)";
    Stop();
    return;
  }
  LOG(WARNING) << "preempted: leaving at the next step boundary; stopping "
                  "regardless in "
               << grace;
  // Only the first call gets here (preempt_ was false).
  grace_timer_ = std::thread([this, grace] {
    bool cancelled;
    {
      absl::MutexLock lock(&grace_mu_);
      cancelled =
          grace_mu_.AwaitWithTimeout(absl::Condition(&grace_cancelled_), grace);
    }
    if (cancelled) return;
    LOG(WARNING) << "preemption grace of " << grace << " over: stopping";
    Stop();
  });
}

void WorkerDaemon::Stop() {
  stop_ = true;
  aborted_ = true;
  absl::MutexLock lock(&mu_);
  if (comm_ != nullptr) comm_->Abort();
}

void WorkerDaemon::OnAbort(const v1::GenerationAbort& abort) {
  if (config_.faults.delay_end_notice > absl::ZeroDuration()) {
    absl::SleepFor(config_.faults.delay_end_notice);
  }
  absl::MutexLock lock(&mu_);
  if (abort.job_id() != job_id_) return;
  if (abort.generation() != 0 && abort.generation() != generation_) return;
  LOG(WARNING) << "generation " << abort.generation() << " of " << job_id_
               << " ended: " << abort.reason();
  aborted_ = true;
  end_heard_ = true;
  if (abort.preempt_window_ms() > 0) {
    preempt_notice_until_ =
        absl::Now() + absl::Milliseconds(abort.preempt_window_ms());
  }
  if (comm_ != nullptr) comm_->Abort();
}

void WorkerDaemon::AwaitEndNotice() {
  // A collective broken by a peer that left for a preemption fails here
  // before the coordinator's notice that the generation is being preempted
  // arrives (milliseconds later): deciding without it, this rank would keep
  // its state to rejoin, miss the window and stop the job being preempted
  // whole. The coordinator ends the generation before the next one can form
  // anyway, so waiting for its word costs a rejoin nothing; the bound covers
  // a coordinator that is away (pushed at once, or carried by the next
  // heartbeat, 1 s by default, when pushes are off).
  auto heard = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return end_heard_ || preempt_.load() || stop_.load();
  };
  if (heard()) return;
  LOG(WARNING) << "a collective broke before the coordinator said why the "
                  "generation ended: waiting up to "
               << kEndNoticeWait << " for its word";
  mu_.AwaitWithTimeout(absl::Condition(&heard), kEndNoticeWait);
}

bool WorkerDaemon::AwaitOwnPreemption() {
  absl::MutexLock lock(&mu_);
  AwaitEndNotice();
  // preempt_ is set under mu_ (Preempt), so the condition sees it change.
  auto signalled = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return preempt_.load();
  };
  const absl::Time until = preempt_notice_until_;
  if (until == absl::InfinitePast()) return preempt_;
  mu_.AwaitWithDeadline(absl::Condition(&signalled), until);
  return preempt_;
}

bool WorkerDaemon::LoseThisAllReduce(int rank) {
  const FaultInjection& f = config_.faults;
  // The step's all-reduces are launched after the previous step was
  // counted (the trainer sets the client's step through its link at each
  // step boundary).
  if (lost_an_allreduce_ || f.lose_allreduce_result_at_step <= 0 ||
      (f.lose_allreduce_result_rank >= 0 &&
       rank != f.lose_allreduce_result_rank) ||
      client_->step() != f.lose_allreduce_result_at_step - 1) {
    return false;
  }
  lost_an_allreduce_ = true;
  LOG(WARNING) << "fault injection: rank " << rank
               << " loses the result of an all-reduce of step "
               << f.lose_allreduce_result_at_step;
  return true;
}

bool WorkerDaemon::HeartbeatAlive(absl::Duration within) const {
  const absl::Time last = client_->LastHeartbeatLoop();
  return last != absl::InfiniteFuture() && absl::Now() - last < within;
}

absl::Status WorkerDaemon::Run() {
  if (absl::Status s = CheckDevice(config_.device); !s.ok()) return s;
  if (absl::Status s = client_->Register(); !s.ok()) return s;
  LOG(INFO) << "registered as " << client_->worker_id() << " ("
            << config_.device << ") with " << config_.coordinator;
  client_->StartHeartbeats(
      [this](const v1::GenerationAbort& a) { OnAbort(a); });
  if (config_.on_registered) config_.on_registered();
  int jobs = 0;
  absl::Status last;
  while (!stop_ && !preempt_) {
    absl::StatusOr<v1::JobAssignment> a =
        client_->WaitForAssignment(absl::Seconds(1));
    if (absl::IsDeadlineExceeded(a.status())) continue;
    if (!a.ok()) return a.status();
    BeginJobLog(a->job_id());
    last = RunJob(*a);
    // Idle again: heartbeats no longer name the job.
    client_->SetCurrent("", 0);
    if (IsPreempted(last)) {
      preempted_ = true;
      LOG(WARNING) << "job " << a->job_id() << ": " << last.message();
      EndJobLog();
      break;
    }
    if (!last.ok()) {
      LOG(ERROR) << "job " << a->job_id() << ": " << last.message();
      last = absl::Status(last.code(),
                          absl::StrCat("job ", a->job_id(),
                                       " did not finish: ", last.message()));
    }
    EndJobLog();
    if (config_.max_jobs > 0 && ++jobs >= config_.max_jobs) break;
  }
  const bool asked = stop_ || preempt_;
  client_->Leave(preempted_ ? "preempted"
                 : asked    ? "stopped"
                            : "done")
      .IgnoreError();
  // A daemon that ends without finishing its job fails, so that systemd's
  // Restart=on-failure and Kubernetes restart it; a stop asked for (a
  // preemption among them) is not a failure.
  return asked ? absl::OkStatus() : last;
}

absl::Status WorkerDaemon::EndedWithoutThisRank(const std::string& job_id,
                                                const absl::Status& refused) {
  // Counted out (a partition, a lapsed lease) and back after the others
  // finished: the job succeeded with this rank's steps in it, carried by
  // the survivors, so the daemon ends as the job did (a --max_jobs=1 task
  // under Slurm or a pod exits 0, not as a failure to restart).
  if (JobOverState(refused) == v1::JOB_STATE_SUCCEEDED) {
    LOG(INFO) << "job " << job_id << " succeeded without this rank";
    return absl::OkStatus();
  }
  return refused;
}

absl::Status WorkerDaemon::FailJob(const std::string& job_id,
                                   const absl::Status& error) {
  // Missing, truncated or malformed data fails the same way on every try:
  // the job fails at once with the reason (retrying would spend restarts
  // and leave the reason in this log). The report needs a rank, so the
  // worker joins the generation first.
  absl::StatusOr<v1::JoinRendezvousResponse> gen =
      client_->Join(job_id, config_.rendezvous_timeout);
  if (!gen.ok()) return error;
  const absl::Status marked = JobError(error, "loading the data");
  LOG(ERROR) << "job " << job_id << " cannot go on: " << marked.message();
  ClientLink link(client_.get());
  ReportJobError(link, job_id, gen->generation(), gen->rank(), marked);
  return marked;
}

void WorkerDaemon::LeaveAfterFailure(const std::string& job_id,
                                     const v1::JoinRendezvousResponse& gen,
                                     const absl::Status& error) {
  // The job's own errors were reported: they fail the job. Any other
  // failure of this rank (a disk that will not take a file, say) ends its
  // generation; the coordinator hears why from the rank, not a guess from
  // its closed watch, and the job goes on elsewhere if it can. The process
  // registers again under its id at its next heartbeat.
  if (IsJobError(error)) return;
  const std::string why =
      absl::StrCat("rank ", gen.rank(), " of generation ", gen.generation(),
                   " of job ", job_id, " failed: ", error.message());
  LOG(ERROR) << why;
  if (absl::Status s = client_->Leave(why.substr(0, 1000)); !s.ok()) {
    LOG(WARNING) << "could not tell the coordinator: " << s.message();
  }
}

CommunicatorRequest WorkerDaemon::CommunicatorRequestFor(
    const std::string& job_id, const v1::JoinRendezvousResponse& gen) {
  CommunicatorRequest request;
  request.client = client_.get();
  request.job_id = job_id;
  request.generation = gen.generation();
  request.rank = gen.rank();
  request.world_size = gen.world_size();
  request.device = device_;
  request.cpu_transport = gen.spec().ddp().cpu_transport();
  request.buckets_in_flight = BucketsInFlightFor(gen.spec().ddp());
  request.address = config_.address;
  request.timeout = config_.collective_timeout;
  request.cancelled = &aborted_;
  return request;
}

absl::Status WorkerDaemon::TrainGeneration(
    const std::string& job_id, const v1::JoinRendezvousResponse& gen,
    Communicator* comm, const JobData& data, KeptState& kept,
    absl::Time joined_at) {
  {
    absl::MutexLock lock(&mu_);
    comm_ = comm;
    if (aborted_) comm_->Abort();
  }
  // Heartbeats say how long training has been blocked in a collective.
  WaitTimedCommunicator timed(comm, client_->collective_wait());
  std::optional<LostResultCommunicator> lossy;
  if (config_.faults.lose_allreduce_result_at_step > 0) {
    lossy.emplace(
        &timed, [this, rank = gen.rank()] { return LoseThisAllReduce(rank); });
  }
  ClientLink link(client_.get());
  TrainerEnv env;
  env.link = &link;
  // The final sends wait no longer than the client retries a call.
  env.send_timeout = config_.unreachable_timeout;
  env.comm = lossy.has_value() ? static_cast<Communicator*>(&*lossy) : &timed;
  if (config_.faults.exit_during_recovery) {
    env.before_state_broadcast = [] {
      LOG(ERROR) << "fault injection: exiting in the middle of a recovery "
                    "from a member's memory";
      std::_Exit(3);
    };
  }
  env.data = &data;
  env.device = config_.device;
  env.aborted = &aborted_;
  env.preempt = &preempt_;
  env.await_own_preemption = [this] { return AwaitOwnPreemption(); };
  env.metrics = config_.metrics;
  if (config_.recover_from_peers) env.kept = &kept;
  env.joined_at = joined_at;
  if (config_.report_phases) env.phases = client_->phases();
  const absl::Status s = Trainer(env, job_id, gen).Run();
  absl::MutexLock lock(&mu_);
  comm_ = nullptr;
  return s;
}

absl::Status WorkerDaemon::RunJob(const v1::JobAssignment& assignment) {
  const std::string& job_id = assignment.job_id();
  LOG(INFO) << "assigned job " << job_id;
  absl::StatusOr<JobData> data =
      LoadJobData(assignment.spec().dataset(), assignment.spec().seed());
  if (!data.ok()) return FailJob(job_id, data.status());
  // Each generation: join, connect, train; an ended generation means rejoin.
  // The coordinator counts the restarts (failures, not scale-ups: each join
  // says how many the job spent) and fails the job past its budget, which
  // ends the loop with the join's error. The bound only stops a daemon whose
  // coordinator keeps ending generations: a failure loses at most
  // max_workers members and each scale-up adds at least one back.
  const int64_t max_generations =
      (int64_t{assignment.spec().max_restarts()} + 1) *
      (int64_t{assignment.spec().max_workers()} + 1);
  int32_t restarts = -1;
  // Until its first generation: the first step reports how long it took
  // from the heartbeat that brought the assignment (a replacement's first
  // heartbeats bring it when its job waits for workers).
  absl::Time joined_at = absl::Now();
  // This rank's training state when a generation ends under it: the next
  // generation recovers from the members' memory (peer_recovery.h).
  KeptState kept;
  for (int64_t g = 0; g < max_generations && !stop_ && !preempt_; ++g) {
    absl::StatusOr<v1::JoinRendezvousResponse> gen =
        client_->Join(job_id, config_.rendezvous_timeout);
    if (!gen.ok()) return EndedWithoutThisRank(job_id, gen.status());
    NoteGeneration(*gen, restarts, assignment.spec().max_restarts());
    restarts = gen->job_restarts();
    {
      absl::MutexLock lock(&mu_);
      job_id_ = job_id;
      generation_ = gen->generation();
      aborted_ = stop_.load();
      preempt_notice_until_ = absl::InfinitePast();
      end_heard_ = false;
    }
    client_->SetCurrent(job_id, gen->generation());
    client_->SetStep(0);
    LOG(INFO) << "generation " << gen->generation() << ": rank " << gen->rank()
              << " of " << gen->world_size();
    absl::StatusOr<std::unique_ptr<Communicator>> comm =
        CreateCommunicator(CommunicatorRequestFor(job_id, *gen));
    absl::Status s;
    if (comm.ok()) {
      s = TrainGeneration(job_id, *gen, comm->get(), *data, kept,
                          std::exchange(joined_at, absl::InfinitePast()));
    } else {
      s = comm.status();
    }
    if (IsPreempted(s)) {
      client_->SetCurrent(job_id, 0);
      return s;
    }
    // Heartbeats stop naming the generation; a worker that rejoins keeps
    // its watch open until the coordinator ends it.
    const bool rejoins = !s.ok() && (absl::IsAborted(s) || aborted_);
    // Before the watch closes: the coordinator reads a watch closed first
    // as the process gone.
    if (!s.ok() && !rejoins) LeaveAfterFailure(job_id, *gen, s);
    client_->SetCurrent(job_id, 0, /*keep_watch=*/rejoins);
    if (s.ok()) {
      if (config_.metrics != nullptr) config_.metrics->jobs_done->Increment();
      return s;
    }
    if (!absl::IsAborted(s) && !aborted_) return s;
    if (config_.metrics != nullptr) config_.metrics->rejoins->Increment();
    LOG(WARNING) << "rejoining job " << job_id << " after: " << s.message();
  }
  return absl::AbortedError(absl::StrCat("job ", job_id, " kept restarting"));
}

}  // namespace ringleader
