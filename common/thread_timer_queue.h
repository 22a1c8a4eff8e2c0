#ifndef RINGLEADER_COMMON_THREAD_TIMER_QUEUE_H_
#define RINGLEADER_COMMON_THREAD_TIMER_QUEUE_H_

#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/timer_map.h"
#include "common/timer_queue.h"

namespace ringleader {

// A TimerQueue served by one thread: thousands of pending deadlines cost one
// thread in all. Callbacks run on that thread, so they must be short.
// Thread-safe. Shutdown (or the destructor) stops the thread and drops
// pending timers without running them; afterwards Schedule is a no-op, so the
// owners of callbacks can be destroyed safely.
class ThreadTimerQueue final : public TimerQueue {
 public:
  ThreadTimerQueue();
  ~ThreadTimerQueue() override;

  TimerId Schedule(absl::Time when, std::function<void()> fn) override;
  bool Cancel(TimerId id) override;
  void Shutdown();

 private:
  void Loop();

  absl::Mutex mu_;
  TimerMap timers_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace ringleader

#endif  // RINGLEADER_COMMON_THREAD_TIMER_QUEUE_H_
