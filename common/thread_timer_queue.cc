#include "common/thread_timer_queue.h"

#include <utility>

namespace ringleader {

ThreadTimerQueue::ThreadTimerQueue() : thread_([this] { Loop(); }) {}

ThreadTimerQueue::~ThreadTimerQueue() { Shutdown(); }

void ThreadTimerQueue::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  thread_.join();
  absl::MutexLock lock(&mu_);
  timers_ = TimerMap();
}

TimerQueue::TimerId ThreadTimerQueue::Schedule(absl::Time when,
                                               std::function<void()> fn) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return 0;
  // The loop re-evaluates its wait whenever mu_ is released (absl::Mutex
  // conditions), so an earlier deadline is noticed at once.
  return timers_.Add(when, std::move(fn));
}

bool ThreadTimerQueue::Cancel(TimerId id) {
  absl::MutexLock lock(&mu_);
  return timers_.Remove(id);
}

void ThreadTimerQueue::Loop() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    std::optional<absl::Time> earliest = timers_.Earliest();
    auto due_or_stopping = [this,
                            earliest]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stopping_ || timers_.Earliest() != earliest ||
             (earliest.has_value() && *earliest <= absl::Now());
    };
    if (earliest.has_value()) {
      mu_.AwaitWithDeadline(absl::Condition(&due_or_stopping), *earliest);
    } else {
      mu_.Await(absl::Condition(&due_or_stopping));
    }
    if (stopping_) break;
    while (auto fn = timers_.PopDue(absl::Now())) {
      mu_.Unlock();
      (*fn)();
      mu_.Lock();
      if (stopping_) break;
    }
  }
}

}  // namespace ringleader
