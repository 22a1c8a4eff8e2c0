#include "coordinator/scheduler/availability.h"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

namespace ringleader::scheduler {
namespace {

int32_t Clamp(int64_t v) {
  return static_cast<int32_t>(std::clamp<int64_t>(
      v, 0, std::numeric_limits<int32_t>::max()));  // Counts of workers.
}

}  // namespace

Availability::Availability(int32_t free_now, absl::Time now) : now_(now) {
  deltas_[now_] += free_now;
}

void Availability::Release(int32_t workers, absl::Time end) {
  if (end == absl::InfiniteFuture()) return;
  deltas_[std::max(end, now_ + absl::Nanoseconds(1))] += workers;
}

void Availability::FreeNow(int32_t workers) { deltas_[now_] += workers; }

void Availability::Take(int32_t workers) { deltas_[now_] -= workers; }

void Availability::Reserve(int32_t workers, absl::Time from) {
  deltas_[std::max(from, now_)] -= workers;
}

int32_t Availability::Now() const {
  auto it = deltas_.find(now_);
  return Clamp(it == deltas_.end() ? 0 : it->second);
}

int32_t Availability::Headroom() const {
  int64_t free = 0, least = std::numeric_limits<int64_t>::max();
  for (const auto& [t, d] : deltas_) {
    free += d;
    least = std::min(least, free);
  }
  return Clamp(least);
}

absl::Time Availability::EarliestFit(int32_t workers) const {
  // The free count after each change, then the least of those from each
  // change on: the first change whose suffix minimum covers `workers`.
  std::vector<std::pair<absl::Time, int64_t>> steps;
  int64_t free = 0;
  for (const auto& [t, d] : deltas_) {
    free += d;
    steps.emplace_back(t, free);
  }
  absl::Time fit = absl::InfiniteFuture();
  int64_t least = std::numeric_limits<int64_t>::max();
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    least = std::min(least, it->second);
    if (least >= workers) fit = it->first;
  }
  return fit;
}

}  // namespace ringleader::scheduler
