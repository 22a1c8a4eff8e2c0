#include "bench/crosshost/netdelay/delay_line.h"

#include <algorithm>

namespace ringleader {

DelayLine::DelayLine(Clock::duration delay, size_t capacity)
    : delay_(delay), capacity_(capacity) {}

bool DelayLine::Admit(uint32_t id, Clock::time_point now) {
  if (held_.size() >= capacity_) {
    ++counters_.dropped;
    return false;
  }
  // A clock that stepped back must not release a packet before one that
  // arrived earlier: deadlines never decrease along the FIFO.
  Clock::time_point deadline = now + delay_;
  if (!held_.empty()) deadline = std::max(deadline, held_.back().deadline);
  held_.push_back({id, deadline});
  ++counters_.admitted;
  counters_.max_depth = std::max(counters_.max_depth, held_.size());
  return true;
}

std::optional<DelayLine::Clock::time_point> DelayLine::NextDeadline() const {
  if (held_.empty()) return std::nullopt;
  return held_.front().deadline;
}

void DelayLine::ReleaseDue(Clock::time_point now, std::vector<uint32_t>* out) {
  while (!held_.empty() && held_.front().deadline <= now) {
    const Clock::duration late = now - held_.front().deadline;
    counters_.total_lateness += late;
    counters_.max_lateness = std::max(counters_.max_lateness, late);
    if (late > std::chrono::milliseconds(1)) ++counters_.late_over_1ms;
    out->push_back(held_.front().id);
    held_.pop_front();
    ++counters_.released;
  }
}

void DelayLine::ReleaseAll(std::vector<uint32_t>* out) {
  for (const Held& h : held_) out->push_back(h.id);
  counters_.released += held_.size();
  held_.clear();
}

}  // namespace ringleader
