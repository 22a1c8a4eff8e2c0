#include "worker/train/checkpoint/commit_queue.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace ringleader {

CommitQueue::CommitQueue(Send send, Committed on_committed)
    : send_(std::move(send)),
      on_committed_(std::move(on_committed)),
      thread_([this] { Loop(); }) {}

CommitQueue::~CommitQueue() {
  cancel_ = true;
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

std::optional<CommitQueue::Answer> CommitQueue::Push(
    v1::CommitCheckpointRequest commit, absl::Duration wait) {
  absl::MutexLock lock(&mu_);
  const bool alone = answered_ == pushed_;
  const int64_t ticket = ++pushed_;
  queue_.push_back(std::move(commit));
  if (!alone || wait <= absl::ZeroDuration()) return std::nullopt;
  awaited_ = ticket;
  auto answered = [this, ticket]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return answered_ >= ticket || stop_;
  };
  mu_.AwaitWithTimeout(absl::Condition(&answered), wait);
  awaited_ = 0;
  std::optional<Answer> out = std::move(awaited_answer_);
  awaited_answer_.reset();
  return out;
}

absl::Status CommitQueue::Verdict() const {
  absl::MutexLock lock(&mu_);
  return verdict_;
}

absl::Status CommitQueue::Drain(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto drained = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return answered_ == pushed_ || stop_;
  };
  if (!mu_.AwaitWithTimeout(absl::Condition(&drained), timeout) ||
      answered_ != pushed_) {
    return absl::DeadlineExceededError(absl::StrCat(
        pushed_ - answered_, " checkpoint commit(s) not answered after ",
        absl::FormatDuration(timeout)));
  }
  return verdict_;
}

int64_t CommitQueue::pending() const {
  absl::MutexLock lock(&mu_);
  return pushed_ - answered_;
}

void CommitQueue::Answered(const v1::CommitCheckpointRequest& commit,
                           const Answer& answer) {
  ++answered_;
  if (answered_ == awaited_) awaited_answer_ = answer;
  if (!verdict_.ok()) return;
  if (!answer.ok()) {
    verdict_ = answer.status();
  } else if (answer->generation_ended()) {
    // The coordinator has told every member (WatchGeneration, then
    // heartbeats), and each aborts its communicator: peers do not depend on
    // this rank's communicator going away, which an NCCL peer on the same
    // host would not notice.
    verdict_ = absl::AbortedError(absl::StrCat(
        "generation ", commit.generation(), " of job ", commit.job_id(),
        " ended at checkpoint step ", commit.step(), " for a scale-up"));
  }
}

void CommitQueue::Loop() {
  absl::MutexLock lock(&mu_);
  while (true) {
    auto work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !queue_.empty() || stop_;
    };
    mu_.Await(absl::Condition(&work));
    if (stop_) return;  // What is left belongs to a generation that is over.
    v1::CommitCheckpointRequest commit = std::move(queue_.front());
    queue_.pop_front();
    if (!verdict_.ok()) {
      // Training stops at the verdict: nothing after it is committed.
      Answered(commit, verdict_);
      continue;
    }
    mu_.Unlock();
    Answer answer = send_(commit, &cancel_);
    if (answer.ok()) on_committed_(commit, *answer);
    mu_.Lock();
    Answered(commit, answer);
  }
}

}  // namespace ringleader
