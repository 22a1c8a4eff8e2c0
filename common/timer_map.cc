#include "common/timer_map.h"

namespace ringleader {

TimerQueue::TimerId TimerMap::Add(absl::Time when, std::function<void()> fn) {
  TimerQueue::TimerId id = next_id_++;
  by_time_.emplace(Key{when, id}, std::move(fn));
  by_id_.emplace(id, when);
  return id;
}

bool TimerMap::Remove(TimerQueue::TimerId id) {
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return false;
  by_time_.erase(Key{it->second, id});
  by_id_.erase(it);
  return true;
}

std::optional<absl::Time> TimerMap::Earliest() const {
  if (by_time_.empty()) return std::nullopt;
  return by_time_.begin()->first.first;
}

std::optional<std::function<void()>> TimerMap::PopDue(absl::Time now) {
  if (by_time_.empty() || by_time_.begin()->first.first > now) {
    return std::nullopt;
  }
  auto node = by_time_.extract(by_time_.begin());
  by_id_.erase(node.key().second);
  return std::move(node.mapped());
}

}  // namespace ringleader
