#include "common/fake_clock.h"

#include <utility>

namespace ringleader {

absl::Time FakeClock::Now() const {
  absl::MutexLock lock(&mu_);
  return now_;
}

TimerQueue::TimerId FakeClock::Schedule(absl::Time when,
                                        std::function<void()> fn) {
  absl::MutexLock lock(&mu_);
  return timers_.Add(when, std::move(fn));
}

bool FakeClock::Cancel(TimerId id) {
  absl::MutexLock lock(&mu_);
  return timers_.Remove(id);
}

void FakeClock::Advance(absl::Duration d) {
  absl::Time target;
  {
    absl::MutexLock lock(&mu_);
    target = now_ + d;
  }
  while (true) {
    std::function<void()> fn;
    {
      absl::MutexLock lock(&mu_);
      std::optional<absl::Time> earliest = timers_.Earliest();
      if (!earliest.has_value() || *earliest > target) {
        now_ = target;
        return;
      }
      if (*earliest > now_) now_ = *earliest;
      fn = std::move(*timers_.PopDue(now_));
    }
    fn();
  }
}

size_t FakeClock::pending_timers() const {
  absl::MutexLock lock(&mu_);
  return timers_.size();
}

}  // namespace ringleader
