#include "worker/train/checkpoint/checkpoint_writer.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace ringleader {

CheckpointWriter::CheckpointWriter() : thread_([this] { Loop(); }) {}

CheckpointWriter::~CheckpointWriter() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

absl::Status CheckpointWriter::Submit(Write write, Then then) {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !job_.has_value();
  };
  // As long as the write takes: a synchronous write would have blocked the
  // training thread for all of it.
  mu_.Await(absl::Condition(&idle));
  if (!error_.ok()) return error_;
  job_ = Job{std::move(write), std::move(then)};
  return absl::OkStatus();
}

absl::Status CheckpointWriter::WaitIdle(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !job_.has_value();
  };
  if (!mu_.AwaitWithTimeout(absl::Condition(&idle), timeout)) {
    return absl::DeadlineExceededError(
        absl::StrCat("a checkpoint is still being written after ",
                     absl::FormatDuration(timeout)));
  }
  return error_;
}

absl::Status CheckpointWriter::status() const {
  absl::MutexLock lock(&mu_);
  return error_;
}

void CheckpointWriter::Loop() {
  absl::MutexLock lock(&mu_);
  while (true) {
    auto work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return job_.has_value() || stop_;
    };
    mu_.Await(absl::Condition(&work));
    // Submit waits for the slot, so a job still here at the stop was handed
    // over before it: it is written (its file may be resumed from by a later
    // generation once committed; it is small harm if not).
    if (!job_.has_value()) return;
    Write write = job_->write;
    Then then = job_->then;
    mu_.Unlock();
    absl::Status s = write();
    if (s.ok() && then) then();
    mu_.Lock();
    if (!s.ok() && error_.ok()) error_ = s;
    job_.reset();
  }
}

}  // namespace ringleader
