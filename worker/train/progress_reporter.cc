#include "worker/train/progress_reporter.h"

#include <utility>

namespace ringleader {

ProgressReporter::ProgressReporter(Send send)
    : send_(std::move(send)), thread_([this] { Loop(); }) {}

ProgressReporter::~ProgressReporter() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void ProgressReporter::Submit(v1::ReportProgressRequest report) {
  absl::MutexLock lock(&mu_);
  queued_ = std::move(report);
}

absl::Status ProgressReporter::Flush() {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return (!queued_.has_value() && !busy_) || stop_;
  };
  mu_.Await(absl::Condition(&idle));
  absl::Status s = error_;
  error_ = absl::OkStatus();
  return s;
}

int64_t ProgressReporter::sent() const {
  absl::MutexLock lock(&mu_);
  return sent_;
}

void ProgressReporter::Loop() {
  absl::MutexLock lock(&mu_);
  while (true) {
    auto work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return queued_.has_value() || stop_;
    };
    mu_.Await(absl::Condition(&work));
    if (!queued_.has_value()) return;  // Stopping with nothing queued.
    v1::ReportProgressRequest r = *std::move(queued_);
    queued_.reset();
    busy_ = true;
    mu_.Unlock();
    absl::Status s = send_(r);
    mu_.Lock();
    busy_ = false;
    ++sent_;
    if (!s.ok() && error_.ok()) error_ = s;
  }
}

}  // namespace ringleader
