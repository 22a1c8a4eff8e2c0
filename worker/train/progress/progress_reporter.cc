#include "worker/train/progress/progress_reporter.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ringleader {

ProgressReporter::ProgressReporter(Send send)
    : send_(std::move(send)), thread_([this] { Loop(); }) {}

ProgressReporter::~ProgressReporter() {
  cancel_ = true;
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

int64_t ProgressReporter::Enqueue(v1::ReportProgressRequest report, bool kept) {
  if (report.finished() || report.eval_epoch() > eval_epoch_) kept = true;
  eval_epoch_ = std::max(eval_epoch_, report.eval_epoch());
  const int64_t seq = next_seq_++;
  if (!kept && !queue_.empty() && !queue_.back().kept) {
    // Latest wins: the one it replaces counts as done.
    queue_.back() = Entry{std::move(report), seq, false};
    return seq;
  }
  queue_.push_back(Entry{std::move(report), seq, kept});
  return seq;
}

void ProgressReporter::Submit(v1::ReportProgressRequest report) {
  absl::MutexLock lock(&mu_);
  Enqueue(std::move(report), false);
}

absl::Status ProgressReporter::Deliver(v1::ReportProgressRequest report,
                                       absl::Duration timeout) {
  const int64_t step = report.step();
  absl::MutexLock lock(&mu_);
  const int64_t seq = Enqueue(std::move(report), true);
  awaited_ = seq;
  awaited_outcome_.reset();
  auto sent = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return awaited_outcome_.has_value() || stop_;
  };
  mu_.AwaitWithTimeout(absl::Condition(&sent), timeout);
  awaited_ = 0;
  if (!awaited_outcome_.has_value()) {
    return absl::DeadlineExceededError(
        absl::StrCat("progress report of step ", step, " not delivered within ",
                     absl::FormatDuration(timeout)));
  }
  absl::Status out = *std::move(awaited_outcome_);
  awaited_outcome_.reset();
  return out;
}

absl::Status ProgressReporter::Flush(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  const int64_t through = next_seq_ - 1;
  auto done = [this, through]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return done_through_ >= through || stop_;
  };
  if (!mu_.AwaitWithTimeout(absl::Condition(&done), timeout) ||
      done_through_ < through) {
    return absl::DeadlineExceededError(
        absl::StrCat("progress reports not delivered within ",
                     absl::FormatDuration(timeout)));
  }
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
      return !queue_.empty() || stop_;
    };
    mu_.Await(absl::Condition(&work));
    if (stop_) return;  // What is left belongs to a generation that is over.
    Entry e = std::move(queue_.front());
    queue_.pop_front();
    mu_.Unlock();
    absl::Status s = send_(e.report, &cancel_);
    mu_.Lock();
    ++sent_;
    done_through_ = e.seq;
    if (e.seq == awaited_) awaited_outcome_ = s;
    if (!s.ok() && error_.ok()) error_ = s;
  }
}

}  // namespace ringleader
