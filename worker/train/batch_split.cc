#include "worker/train/batch_split.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

#include "glog/logging.h"

namespace ringleader {

namespace {

// Each rate as a positive weight: one not measured counts as the slowest.
std::vector<double> Weights(const std::vector<double>& rates) {
  double slowest = std::numeric_limits<double>::infinity();
  for (double r : rates) {
    if (r > 0) slowest = std::min(slowest, r);
  }
  if (!std::isfinite(slowest)) slowest = 1;  // No rate known: even.
  std::vector<double> weight(rates.size());
  for (size_t r = 0; r < rates.size(); ++r) {
    weight[r] = rates[r] > 0 ? rates[r] : slowest;
  }
  return weight;
}

// `total` over the ranks not `fixed`, in proportion to `weight`: whole
// parts, then the leftover samples to the largest remainders, ties to the
// lower rank.
void ShareOut(int64_t total, const std::vector<double>& weight,
              const std::vector<bool>& fixed, std::vector<int64_t>& counts) {
  double sum = 0;
  for (size_t r = 0; r < weight.size(); ++r) {
    if (!fixed[r]) sum += weight[r];
  }
  std::vector<double> remainder(weight.size(), -1);
  int64_t given = 0;
  for (size_t r = 0; r < weight.size(); ++r) {
    if (fixed[r]) continue;
    const double share = static_cast<double>(total) * weight[r] / sum;
    counts[r] = std::min<int64_t>(total, static_cast<int64_t>(share));
    given += counts[r];
    remainder[r] = share - static_cast<double>(counts[r]);
  }
  std::vector<size_t> order;
  for (size_t r = 0; r < weight.size(); ++r) {
    if (!fixed[r]) order.push_back(r);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return remainder[a] > remainder[b];
  });
  for (size_t k = 0; given < total; ++k, ++given) {
    ++counts[order[k % order.size()]];
  }
}

}  // namespace

std::vector<int64_t> SplitByRates(int64_t total,
                                  const std::vector<double>& rates,
                                  int64_t least) {
  const int64_t world = static_cast<int64_t>(rates.size());
  CHECK_GE(world, 1);
  CHECK_GE(total, 0);
  least = std::clamp<int64_t>(least, 0, total / world);
  const std::vector<double> weight = Weights(rates);
  // Water-filling: a rank whose share falls under `least` gets `least`, and
  // the others share the rest; at most W rounds, as each fixes a rank.
  std::vector<bool> fixed(rates.size(), false);
  std::vector<int64_t> counts(rates.size(), least);
  for (int64_t round = 0; round < world; ++round) {
    int64_t free_total = total;
    double sum = 0;
    for (size_t r = 0; r < rates.size(); ++r) {
      if (fixed[r]) {
        free_total -= least;
      } else {
        sum += weight[r];
      }
    }
    bool more = false;
    for (size_t r = 0; r < rates.size(); ++r) {
      if (!fixed[r] && free_total * weight[r] / sum < least) {
        fixed[r] = more = true;
      }
    }
    if (more) continue;
    ShareOut(free_total, weight, fixed, counts);
    break;
  }
  return counts;
}

std::vector<int64_t> RankPositions(const std::vector<int64_t>& counts,
                                   int rank) {
  const int64_t world = static_cast<int64_t>(counts.size());
  CHECK(rank >= 0 && rank < world);
  const int64_t least = *std::min_element(counts.begin(), counts.end());
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(counts[rank]));
  for (int64_t i = 0; i < least; ++i) out.push_back(rank + i * world);
  int64_t tail = least * world;
  for (int r = 0; r < rank; ++r) tail += counts[r] - least;
  for (int64_t i = 0; i < counts[rank] - least; ++i) out.push_back(tail + i);
  return out;
}

double SlowestRankTime(const std::vector<int64_t>& counts,
                       const std::vector<double>& rates) {
  CHECK_EQ(counts.size(), rates.size());
  double slowest = 0;
  for (size_t r = 0; r < counts.size(); ++r) {
    if (rates[r] <= 0) return std::numeric_limits<double>::infinity();
    slowest = std::max(slowest, static_cast<double>(counts[r]) / rates[r]);
  }
  return slowest;
}

BatchSplitSchedule::BatchSplitSchedule(std::vector<int64_t> counts) {
  changes_.emplace_back(0, std::move(counts));
}

void BatchSplitSchedule::Set(int64_t from, std::vector<int64_t> counts) {
  absl::MutexLock lock(&mu_);
  CHECK_GT(from, last_read_) << "a batch split changed under a batch a "
                                "loader thread already cut";
  CHECK_GT(from, changes_.back().first);
  changes_.emplace_back(from, std::move(counts));
}

std::vector<int64_t> BatchSplitSchedule::CountsFor(int64_t b) const {
  absl::MutexLock lock(&mu_);
  last_read_ = std::max(last_read_, b);
  auto it = std::upper_bound(
      changes_.begin(), changes_.end(), b,
      [](int64_t v, const auto& change) { return v < change.first; });
  return std::prev(it)->second;
}

}  // namespace ringleader
