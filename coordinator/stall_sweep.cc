#include "coordinator/stall_sweep.h"

#include <vector>

namespace ringleader {

void StallSweep::Start() {
  {
    absl::MutexLock lock(&mu_);
    running_ = true;
  }
  ScheduleNext();
}

void StallSweep::Stop() {
  absl::MutexLock lock(&mu_);
  running_ = false;
  timers_->Cancel(timer_);
}

void StallSweep::ScheduleNext() {
  absl::MutexLock lock(&mu_);
  if (!running_) return;
  timer_ = timers_->Schedule(clock_->Now() + interval_, [this] {
    Sweep();
    ScheduleNext();
  });
}

void StallSweep::Sweep() {
  const std::vector<StallWatch::Change> changes =
      stalls_.Changes(clock_->Now());
  for (const StallWatch::Change& c : changes) {
    publish_(c.job_id, c.waiting_for.has_value() ? &*c.waiting_for : nullptr);
  }
}

}  // namespace ringleader
