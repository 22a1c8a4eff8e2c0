#include "worker/logs/job_log_shipper.h"

#include <utility>

namespace ringleader {
namespace {

// Codes that say the coordinator will never take the batch.
bool RefusedForGood(const absl::Status& s) {
  return absl::IsInvalidArgument(s) || absl::IsFailedPrecondition(s) ||
         absl::IsPermissionDenied(s) || absl::IsOutOfRange(s);
}

// Codes that may pass once the worker registers again.
bool RefusedForNow(const absl::Status& s) {
  return absl::IsNotFound(s) || absl::IsUnauthenticated(s);
}

}  // namespace

JobLogShipper::JobLogShipper(JobLogCapture* capture, Send send, Options options)
    : capture_(capture),
      send_(std::move(send)),
      options_(options),
      thread_([this] { Loop(); }) {}

JobLogShipper::~JobLogShipper() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  capture_->Wake();
  thread_.join();
}

void JobLogShipper::Loop() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stop_) return;
    }
    capture_->AwaitLines(options_.max_lines / 2, options_.interval);
    DrainOnce();
    absl::MutexLock lock(&mu_);
    ++rounds_;
  }
}

void JobLogShipper::DrainOnce() {
  while (true) {
    std::optional<JobLogBatch> batch =
        capture_->Take(options_.max_lines, options_.max_bytes);
    if (!batch.has_value()) return;
    v1::AppendLogsRequest req;
    req.set_job_id(batch->job_id);
    req.set_dropped(batch->dropped);
    for (const v1::LogLine& line : batch->lines) *req.add_lines() = line;
    const absl::Status s = send_(req);
    if (!Settle(s, *batch)) {
      capture_->PutBack(*std::move(batch));
      return;  // The next round tries again.
    }
  }
}

bool JobLogShipper::Settle(const absl::Status& s, JobLogBatch& batch) {
  const int64_t n = static_cast<int64_t>(batch.lines.size());
  if (s.ok()) {
    refusals_ = 0;
    sent_lines_ += n;
    return true;
  }
  if (RefusedForGood(s) ||
      (RefusedForNow(s) && ++refusals_ >= options_.refusals_before_discard)) {
    refusals_ = 0;
    discarded_lines_ += n;
    return true;
  }
  return false;  // Away, slow or busy: kept for the next round.
}

bool JobLogShipper::Flush(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  // Two rounds: the one in progress may have taken its batch before the
  // lines the caller logged last.
  for (int i = 0; i < 2; ++i) {
    int64_t start;
    {
      absl::MutexLock lock(&mu_);
      start = rounds_;
    }
    capture_->Wake();
    absl::MutexLock lock(&mu_);
    auto next = [this, start]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return rounds_ > start || stop_;
    };
    if (!mu_.AwaitWithDeadline(absl::Condition(&next), deadline)) return false;
  }
  return capture_->queued() == 0;
}

}  // namespace ringleader
