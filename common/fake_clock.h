#ifndef RINGLEADER_COMMON_FAKE_CLOCK_H_
#define RINGLEADER_COMMON_FAKE_CLOCK_H_

#include <functional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/timer_map.h"
#include "common/timer_queue.h"

namespace ringleader {

// A clock that moves only when a test calls Advance, together with the timer
// queue it drives: timers run inside Advance, on the caller's thread, in
// deadline order. Thread-safe.
class FakeClock final : public Clock, public TimerQueue {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1'700'000'000))
      : now_(start) {}

  absl::Time Now() const override;
  TimerId Schedule(absl::Time when, std::function<void()> fn) override;
  bool Cancel(TimerId id) override;

  // Moves time forward by `d`, running every timer that becomes due.
  void Advance(absl::Duration d);
  size_t pending_timers() const;

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
  TimerMap timers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ringleader

#endif  // RINGLEADER_COMMON_FAKE_CLOCK_H_
