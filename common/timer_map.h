#ifndef RINGLEADER_COMMON_TIMER_MAP_H_
#define RINGLEADER_COMMON_TIMER_MAP_H_

#include <functional>
#include <map>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "common/timer_queue.h"

namespace ringleader {

// The ordered set of pending timers shared by the real and fake timer queues.
// Not thread-safe: the owner guards it.
class TimerMap {
 public:
  TimerQueue::TimerId Add(absl::Time when, std::function<void()> fn);
  bool Remove(TimerQueue::TimerId id);
  // Earliest deadline, if any timer is pending.
  std::optional<absl::Time> Earliest() const;
  // Removes and returns the earliest timer's callback if it is due at `now`.
  std::optional<std::function<void()>> PopDue(absl::Time now);
  size_t size() const { return by_id_.size(); }

 private:
  using Key = std::pair<absl::Time, TimerQueue::TimerId>;
  TimerQueue::TimerId next_id_ = 1;
  std::map<Key, std::function<void()>> by_time_;
  absl::flat_hash_map<TimerQueue::TimerId, absl::Time> by_id_;
};

}  // namespace ringleader

#endif  // RINGLEADER_COMMON_TIMER_MAP_H_
