#ifndef RINGLEADER_COORDINATOR_STALL_SWEEP_H_
#define RINGLEADER_COORDINATOR_STALL_SWEEP_H_

// Every `interval`, the jobs whose waiting-for verdict (StallWatch) appeared,
// changed or went are handed to `publish`, which puts it in the job that
// WatchJob streams: a watcher sees the line within an interval of a
// heartbeat that makes it, and no snapshot while it stays the same.

#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/timer_queue.h"
#include "coordinator/stall_watch.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader {

// Sweeps on the timer queue's thread between Start and Stop, and whenever
// Sweep is called. Thread-safe.
class StallSweep {
 public:
  // `waiting_for` null: the job's wait ended.
  using Publish = std::function<void(const std::string& job_id,
                                     const v1::WaitingFor* waiting_for)>;

  StallSweep(StallWatch& stalls, const Clock* clock, TimerQueue* timers,
             absl::Duration interval, Publish publish)
      : stalls_(stalls),
        clock_(clock),
        timers_(timers),
        interval_(interval),
        publish_(std::move(publish)) {}

  void Start();
  // No sweep is scheduled after it; one that runs already finishes.
  void Stop();
  void Sweep();

 private:
  void ScheduleNext();

  StallWatch& stalls_;
  const Clock* const clock_;
  TimerQueue* const timers_;
  const absl::Duration interval_;
  const Publish publish_;

  absl::Mutex mu_;
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  TimerQueue::TimerId timer_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_STALL_SWEEP_H_
