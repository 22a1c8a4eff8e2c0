#ifndef RINGLEADER_COMMON_TIMER_QUEUE_H_
#define RINGLEADER_COMMON_TIMER_QUEUE_H_

#include <cstdint>
#include <functional>

#include "absl/time/time.h"

namespace ringleader {

// Runs callbacks at a point in time. The coordinator uses it for every
// deadline (KV waits, barriers, rendezvous last call, lease expiry) so that a
// waiting RPC costs a map entry, never a thread.
//
// Callbacks run without any TimerQueue lock held and may call Schedule or
// Cancel. Implementations are thread-safe.
class TimerQueue {
 public:
  using TimerId = uint64_t;
  virtual ~TimerQueue() = default;
  // Runs `fn` once at or after `when`. Never runs it inline.
  virtual TimerId Schedule(absl::Time when, std::function<void()> fn) = 0;
  // Returns true if the timer was pending and will not run.
  virtual bool Cancel(TimerId id) = 0;
};

}  // namespace ringleader

#endif  // RINGLEADER_COMMON_TIMER_QUEUE_H_
