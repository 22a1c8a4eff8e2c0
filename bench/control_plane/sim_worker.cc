#include "bench/control_plane/sim_worker.h"

#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/distributed_sampler.h"
#include "common/grpc_status.h"
#include "common/shard_plan.h"
#include "common/worker_credential.h"

namespace ringleader {

SimWorker::SimWorker(std::shared_ptr<grpc::Channel> channel, Options options)
    : stub_(v1::WorkerService::NewStub(channel)), options_(options) {}

std::unique_ptr<grpc::ClientContext> SimWorker::Ctx(
    absl::Duration timeout) const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() +
                    absl::ToChronoMilliseconds(timeout));
  AttachWorkerCredential(ctx.get(), {worker_id_, worker_token_});
  return ctx;
}

absl::Status SimWorker::Register() {
  v1::RegisterRequest req;
  req.set_hostname(options_.hostname);
  req.set_pid(options_.pid);
  req.set_device("cpu");
  req.set_address("127.0.0.1");
  v1::RegisterResponse resp;
  if (absl::Status s = FromGrpcStatus(
          stub_->Register(Ctx(absl::Seconds(10)).get(), req, &resp),
          "register");
      !s.ok()) {
    return s;
  }
  worker_id_ = resp.worker_id();
  worker_token_ = resp.worker_token();
  heartbeat_interval_ = absl::Milliseconds(resp.heartbeat_interval_ms());
  return absl::OkStatus();
}

absl::StatusOr<v1::JobAssignment> SimWorker::WaitForAssignment() {
  const absl::Time give_up = absl::Now() + options_.assignment_timeout;
  // Polls at the heartbeat interval the coordinator asked for; bounded.
  while (absl::Now() < give_up) {
    v1::HeartbeatRequest req;
    req.set_worker_id(worker_id_);
    v1::HeartbeatResponse resp;
    if (absl::Status s = FromGrpcStatus(
            stub_->Heartbeat(Ctx(absl::Seconds(10)).get(), req, &resp),
            "heartbeat");
        !s.ok()) {
      return s;
    }
    if (resp.has_assignment()) return resp.assignment();
    absl::SleepFor(std::min(heartbeat_interval_, absl::Milliseconds(200)));
  }
  return absl::DeadlineExceededError("no job was assigned in time");
}

absl::StatusOr<SimWorker::Result> SimWorker::Run() {
  if (absl::Status s = Register(); !s.ok()) return s;
  absl::StatusOr<v1::JobAssignment> job = WaitForAssignment();
  if (!job.ok()) return job.status();
  job_id_ = job->job_id();

  // Heartbeats go on during the job, from their own thread.
  std::atomic<bool> done{false};
  std::thread beat([this, &done] {
    while (!done) {
      Heartbeat();
      for (absl::Duration waited; !done && waited < heartbeat_interval_;
           waited += absl::Milliseconds(50)) {
        absl::SleepFor(absl::Milliseconds(50));
      }
    }
  });
  Result out;
  out.job_id = job_id_;
  v1::JoinRendezvousRequest jreq;
  jreq.set_job_id(job_id_);
  jreq.set_worker_id(worker_id_);
  jreq.set_timeout_ms(120000);
  v1::JoinRendezvousResponse gen;
  const absl::Time join_start = absl::Now();
  absl::Status s = FromGrpcStatus(
      stub_->JoinRendezvous(Ctx(absl::Seconds(130)).get(), jreq, &gen),
      "join rendezvous");
  out.rendezvous_time = absl::Now() - join_start;
  if (s.ok()) {
    generation_ = gen.generation();
    out.generation = gen.generation();
    out.rank = gen.rank();
    s = Train(gen, out);
  }
  done = true;
  beat.join();
  v1::LeaveRequest leave;
  leave.set_worker_id(worker_id_);
  leave.set_reason(s.ok() ? "finished" : std::string(s.message()));
  v1::LeaveResponse lr;
  stub_->Leave(Ctx(absl::Seconds(5)).get(), leave, &lr);
  if (!s.ok()) return s;
  return out;
}

void SimWorker::Heartbeat() {
  v1::HeartbeatRequest req;
  req.set_worker_id(worker_id_);
  req.set_job_id(job_id_);
  req.set_generation(generation_);
  const int64_t step = step_;
  req.set_step(step);
  if (options_.report_phases && step > 0) {
    // What a training worker says between two steps: in its forward for a
    // fraction of the step time.
    req.set_phase(v1::WORKER_PHASE_FORWARD);
    req.set_phase_ms(absl::ToInt64Milliseconds(options_.step_time) / 3);
    req.set_phase_step(step + 1);
    req.set_step_time_ms(absl::ToInt64Milliseconds(options_.step_time));
  }
  v1::HeartbeatResponse resp;
  stub_->Heartbeat(Ctx(absl::Seconds(5)).get(), req, &resp);
}

absl::Status SimWorker::Report(const v1::JoinRendezvousResponse& gen,
                               int64_t epoch, int64_t step, int64_t total,
                               int64_t train_size, double samples_per_sec,
                               bool last) {
  v1::ReportProgressRequest p;
  p.set_job_id(job_id_);
  p.set_generation(gen.generation());
  p.set_rank(gen.rank());
  p.set_epoch(epoch);
  p.set_step(step);
  p.set_total_steps(total);
  p.set_train_size(train_size);
  p.set_samples_per_sec(samples_per_sec);
  p.set_loss(2.0 / (1.0 + 0.01 * static_cast<double>(step)));
  p.set_finished(last);
  if (options_.history_fields) {
    // A training window's step time: what makes rank 0's report a point of
    // the job's history (ProgressAggregator::Point).
    p.set_step_time_ms(absl::ToDoubleMilliseconds(options_.step_time));
    p.set_learning_rate(0.1 / (1.0 + 0.001 * static_cast<double>(step)));
    p.set_grad_norm(1.0 + 1.0 / (1.0 + static_cast<double>(step)));
    p.set_data_wait_share(0.01);
  }
  v1::ReportProgressResponse pr;
  return FromGrpcStatus(
      stub_->ReportProgress(Ctx(absl::Seconds(10)).get(), p, &pr),
      "report progress");
}

absl::Status SimWorker::AppendLogs(const v1::JoinRendezvousResponse& gen,
                                   int64_t step) {
  v1::AppendLogsRequest req;
  req.set_worker_id(worker_id_);
  req.set_job_id(job_id_);
  const int64_t now_ms = absl::ToUnixMillis(absl::Now());
  for (int i = 0; i < pending_log_lines_; ++i) {
    v1::LogLine* line = req.add_lines();
    line->set_time_ms(now_ms);
    line->set_rank(gen.rank());
    line->set_generation(gen.generation());
    line->set_severity("INFO");
    std::string text = absl::StrCat("step ", step, " line ", i, " ");
    text.resize(std::max<size_t>(text.size(), options_.log_line_bytes), 'x');
    line->set_text(std::move(text));
  }
  v1::AppendLogsResponse resp;
  return FromGrpcStatus(
      stub_->AppendLogs(Ctx(absl::Seconds(10)).get(), req, &resp),
      "append logs");
}

absl::Status SimWorker::Train(const v1::JoinRendezvousResponse& gen,
                              Result& out) {
  const v1::JobSpec& spec = gen.spec();
  v1::BarrierRequest b;
  b.set_job_id(job_id_);
  b.set_generation(gen.generation());
  b.set_rank(gen.rank());
  b.set_name("start");
  b.set_timeout_ms(60000);
  v1::BarrierResponse br;
  if (absl::Status s = FromGrpcStatus(
          stub_->Barrier(Ctx(absl::Seconds(70)).get(), b, &br), "barrier");
      !s.ok()) {
    return s;
  }
  const int64_t train_size = spec.dataset().synthetic_train_size() > 0
                                 ? spec.dataset().synthetic_train_size()
                                 : 60000;
  const int64_t steps_per_epoch =
      StepsPerEpoch(train_size, gen.world_size(), spec.batch_size(),
                    spec.dataset().drop_last());
  const int64_t total = steps_per_epoch * spec.epochs();
  const int every =
      spec.progress_every_steps() > 0 ? spec.progress_every_steps() : 10;
  int64_t step = 0;
  for (int64_t epoch = 0; epoch < spec.epochs(); ++epoch) {
    // Planned locally, as a real worker does (common/shard_plan.h): the
    // coordinator is not asked.
    ShardPlanInput plan;
    plan.epoch = epoch;
    plan.world_size = gen.world_size();
    plan.rank = gen.rank();
    plan.dataset_size = train_size;
    const v1::ShardAssignment shard = PlanShard(spec, plan);
    const int64_t steps = RemainingSteps(shard, spec.batch_size());
    const absl::Time epoch_start = absl::Now();
    for (int64_t i = 0; i < steps; ++i, ++step) {
      absl::SleepFor(options_.step_time);  // Simulated compute.
      step_ = step + 1;
      const bool last = epoch + 1 == spec.epochs() && i + 1 == steps;
      if ((step + 1) % every != 0 && !last) continue;
      const double secs = absl::ToDoubleSeconds(absl::Now() - epoch_start);
      if (absl::Status s =
              Report(gen, epoch, step + 1, total, train_size,
                     secs > 0 ? (i + 1) * spec.batch_size() / secs : 0, last);
          !s.ok()) {
        return s;
      }
      // Sent about once a second, as the worker's JobLogShipper does, with
      // the lines of every report since.
      pending_log_lines_ += options_.log_lines_per_report;
      if (pending_log_lines_ > 0 &&
          (absl::Now() - last_log_send_ >= absl::Seconds(1) || last)) {
        if (absl::Status s = AppendLogs(gen, step + 1); !s.ok()) return s;
        pending_log_lines_ = 0;
        last_log_send_ = absl::Now();
      }
    }
  }
  out.steps = step;
  return absl::OkStatus();
}

}  // namespace ringleader
