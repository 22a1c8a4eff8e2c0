#ifndef RINGLEADER_COORDINATOR_LEASE_SWEEP_H_
#define RINGLEADER_COORDINATOR_LEASE_SWEEP_H_

// The lease sweep: every `interval` the workers whose lease ran out are
// judged, and those gone leave the registry. A lapsed lease is evidence, not
// a verdict (docs/design-notes.md): a generation member the liveness
// evidence keeps (MemberLiveness) stays registered, SILENT, and is asked
// again at the next sweep. A dead worker is noticed within lease + interval.

#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/timer_queue.h"
#include "coordinator/hooks.h"
#include "coordinator/member_liveness.h"
#include "coordinator/worker_registry.h"

namespace ringleader {

// Sweeps on the timer queue's thread between Start and Stop, and whenever
// Sweep is called. Thread-safe.
class LeaseSweep {
 public:
  LeaseSweep(WorkerRegistry& workers, const MemberLiveness& liveness,
             const Clock* clock, TimerQueue* timers, absl::Duration interval,
             WorkerGoneHook gone)
      : workers_(workers),
        liveness_(liveness),
        clock_(clock),
        timers_(timers),
        interval_(interval),
        gone_(std::move(gone)) {}

  void Start();
  // No sweep is scheduled after it; one that runs already finishes.
  void Stop();
  // Runs one sweep now: each worker judged gone goes to the gone hook.
  void Sweep();

 private:
  void ScheduleNext();

  WorkerRegistry& workers_;
  const MemberLiveness& liveness_;
  const Clock* const clock_;
  TimerQueue* const timers_;
  const absl::Duration interval_;
  const WorkerGoneHook gone_;

  absl::Mutex mu_;
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  TimerQueue::TimerId timer_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_LEASE_SWEEP_H_
