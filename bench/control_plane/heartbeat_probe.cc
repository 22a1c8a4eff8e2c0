#include "bench/control_plane/heartbeat_probe.h"

#include <utility>

#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"

namespace ringleader::bench {

HeartbeatProbe::HeartbeatProbe(v1::WorkerService::Stub& stub,
                               v1::HeartbeatRequest request,
                               WorkerCredential worker, absl::Duration interval)
    : stub_(stub),
      request_(std::move(request)),
      worker_(std::move(worker)),
      interval_(interval),
      thread_([this] { Run(); }) {}

HeartbeatProbe::~HeartbeatProbe() { Stop(); }

void HeartbeatProbe::Run() {
  while (!stop_.WaitForNotificationWithTimeout(interval_)) {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
    AttachWorkerCredential(&ctx, worker_);
    v1::HeartbeatResponse resp;
    const absl::Time sent = absl::Now();
    grpc::Status s = stub_.Heartbeat(&ctx, request_, &resp);
    const double ms = absl::ToDoubleMilliseconds(absl::Now() - sent);
    absl::MutexLock lock(&mu_);
    samples_.push_back({sent, s.ok() ? ms : -1});
  }
}

std::vector<HeartbeatProbe::Sample> HeartbeatProbe::Stop() {
  if (!stop_.HasBeenNotified()) stop_.Notify();
  if (thread_.joinable()) thread_.join();
  absl::MutexLock lock(&mu_);
  return samples_;
}

}  // namespace ringleader::bench
