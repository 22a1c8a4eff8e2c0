#include "worker/generation_watch.h"

#include <algorithm>
#include <utility>

#include "glog/logging.h"

namespace ringleader {

GenerationWatch::GenerationWatch(Options options)
    : options_(std::move(options)) {
  thread_ = std::thread([this] { Loop(); });
}

GenerationWatch::~GenerationWatch() { Stop(); }

void GenerationWatch::Set(const std::string& job_id, int64_t generation) {
  absl::MutexLock lock(&mu_);
  target_ = Target{job_id, generation};
  if (open_ != nullptr) open_->TryCancel();  // Loop skips a stream still due.
}

void GenerationWatch::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
    if (open_ != nullptr) open_->TryCancel();
  }
  if (thread_.joinable()) thread_.join();
}

int64_t GenerationWatch::opened() const {
  absl::MutexLock lock(&mu_);
  return opened_;
}

bool GenerationWatch::unsupported() const {
  absl::MutexLock lock(&mu_);
  return unsupported_;
}

bool GenerationWatch::DueLocked() const {
  return !unsupported_ && target_.generation > 0 && !(target_ == done_);
}

bool GenerationWatch::AwaitIdle(absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return open_ == nullptr && !backing_off_ && !DueLocked();
  };
  return mu_.AwaitWithTimeout(absl::Condition(&idle), timeout);
}

void GenerationWatch::Loop() {
  int failures = 0;
  Target failing;  // The target `failures` counts for.
  while (true) {
    Target target;
    {
      absl::MutexLock lock(&mu_);
      auto due = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stop_ || DueLocked();
      };
      mu_.Await(absl::Condition(&due));
      if (stop_) return;
      target = target_;
    }
    if (!(target == failing)) {
      failing = target;
      failures = 0;
    }
    absl::Duration lasted;
    const Outcome outcome = WatchOnce(target, &lasted);
    if (outcome == Outcome::kCancelled) continue;
    if (outcome == Outcome::kUnsupported) {
      absl::MutexLock lock(&mu_);
      unsupported_ = true;
      continue;
    }
    if (outcome == Outcome::kFailed && lasted < kLongLived &&
        ++failures < kMaxTries) {
      // Capped exponential backoff: 100 ms, 200 ms, ... up to max_backoff.
      const absl::Duration wait =
          std::min(options_.first_backoff * (int64_t{1} << (failures - 1)),
                   options_.max_backoff);
      Backoff(target, wait);
      continue;
    }
    if (outcome == Outcome::kFailed && lasted >= kLongLived) {
      failures = 0;
      continue;
    }
    if (outcome == Outcome::kFailed) {
      LOG(WARNING) << "WatchGeneration failed " << failures
                   << " times for generation " << target.generation
                   << "; its end will come with a heartbeat";
    }
    absl::MutexLock lock(&mu_);
    done_ = target;
  }
}

GenerationWatch::Outcome GenerationWatch::WatchOnce(const Target& target,
                                                    absl::Duration* lasted) {
  const absl::Time start = absl::Now();
  *lasted = absl::ZeroDuration();
  const WorkerCredential credential = options_.credential();
  grpc::ClientContext ctx;
  AttachWorkerCredential(&ctx, credential);
  {
    absl::MutexLock lock(&mu_);
    if (stop_ || !(target_ == target)) return Outcome::kCancelled;
    open_ = &ctx;
    ++opened_;
  }
  v1::WatchGenerationRequest req;
  req.set_worker_id(credential.worker_id);
  req.set_job_id(target.job_id);
  req.set_generation(target.generation);
  std::unique_ptr<v1::WorkerService::Stub> stub =
      v1::WorkerService::NewStub(options_.channel());
  std::unique_ptr<grpc::ClientReader<v1::GenerationEvent>> reader =
      stub->WatchGeneration(&ctx, req);
  v1::GenerationEvent event;
  const bool got = reader->Read(&event);
  if (got) ctx.TryCancel();  // One event per call; don't wait for the end.
  const grpc::Status status = reader->Finish();
  bool cancelled;
  {
    absl::MutexLock lock(&mu_);
    open_ = nullptr;
    cancelled = stop_ || !(target_ == target);
  }
  *lasted = absl::Now() - start;
  if (got && event.has_ended()) {
    LOG(INFO) << "generation " << event.ended().generation() << " of job "
              << event.ended().job_id()
              << " ended (pushed by the coordinator): "
              << event.ended().reason();
    if (options_.on_ended) options_.on_ended(event.ended());
    return Outcome::kEnded;
  }
  if (cancelled) return Outcome::kCancelled;
  if (status.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
    LOG(INFO) << "the coordinator does not push generation ends: "
              << status.error_message();
    return Outcome::kUnsupported;
  }
  VLOG(1) << "WatchGeneration for generation " << target.generation << ": "
          << status.error_code() << " " << status.error_message();
  return Outcome::kFailed;
}

bool GenerationWatch::Backoff(const Target& target, absl::Duration wait) {
  absl::MutexLock lock(&mu_);
  backing_off_ = true;
  auto moved = [this, &target]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stop_ || !(target_ == target);
  };
  const bool waited = !mu_.AwaitWithTimeout(absl::Condition(&moved), wait);
  backing_off_ = false;
  return waited;
}

}  // namespace ringleader
