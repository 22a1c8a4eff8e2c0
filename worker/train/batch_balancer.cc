#include "worker/train/batch_balancer.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "worker/train/batch_split.h"
#include "worker/train/int64_all_reduce.h"

namespace ringleader {
namespace {

// A new split must shorten the slowest rank's step by this much: below it,
// the measured difference was mostly noise on a 2-vCPU VM (whose vCPUs ran
// 5% to 12% apart), and each new batch shape costs its kernels' first-use
// setup. At 1%, the split followed the noise (issue 37's profile).
constexpr double kWorthChanging = 0.97;
// Weight of the newest window in the smoothed rates: about the last three
// windows count.
constexpr double kNewest = 0.3;

}  // namespace

BatchBalancer::BatchBalancer(Communicator* comm, c10::Device device,
                             Options options)
    : comm_(comm),
      device_(device),
      options_(options),
      counts_(comm->world_size(), options.per_rank_batch),
      rates_(comm->world_size(), 0.0) {}

void BatchBalancer::Add(int64_t samples, absl::Duration busy) {
  window_samples_ += samples;
  window_busy_ += busy;
}

absl::StatusOr<std::optional<BatchBalancer::Change>>
BatchBalancer::AfterMicroBatch(int64_t b) {
  ++micro_batches_;
  if (micro_batches_ % options_.window != 0) return std::nullopt;
  absl::StatusOr<std::optional<Change>> change = Agree(b);
  window_samples_ = 0;
  window_busy_ = absl::ZeroDuration();
  return change;
}

absl::StatusOr<std::optional<BatchBalancer::Change>> BatchBalancer::Agree(
    int64_t b) {
  const int world = comm_->world_size();
  const int rank = comm_->rank();
  // Rank r's busy nanoseconds, samples and prefetch in slots r, W + r,
  // 2W + r: the sum is every rank's, exactly, on every rank.
  std::vector<int64_t> mine(3 * world, 0);
  mine[rank] = absl::ToInt64Nanoseconds(window_busy_);
  mine[world + rank] = window_samples_;
  mine[2 * world + rank] = options_.prefetch;
  absl::StatusOr<std::vector<int64_t>> all =
      AllReduceInt64Sum(*comm_, mine, device_);
  if (!all.ok()) return all.status();
  if (micro_batches_ == options_.window) return std::nullopt;  // Warm-up.
  int64_t prefetch = 1;
  for (int r = 0; r < world; ++r) {
    const int64_t ns = (*all)[r];
    const int64_t samples = (*all)[world + r];
    prefetch = std::max(prefetch, (*all)[2 * world + r]);
    if (ns <= 0 || samples <= 0) return std::nullopt;
    const double rate = samples * 1e9 / static_cast<double>(ns);
    rates_[r] =
        rates_[r] > 0 ? kNewest * rate + (1 - kNewest) * rates_[r] : rate;
  }
  // Half the even share at least: a model with BatchNorm keeps a batch to
  // take statistics of, and the split stays near DDP's (3 to 1 at most).
  std::vector<int64_t> proposed =
      SplitByRates(options_.per_rank_batch * world, rates_,
                   (options_.per_rank_batch + 1) / 2);
  if (proposed == counts_ ||
      SlowestRankTime(proposed, rates_) >
          kWorthChanging * SlowestRankTime(counts_, rates_)) {
    return std::nullopt;
  }
  counts_ = proposed;
  // Every rank's loader may have cut up to `prefetch` batches past `b`.
  Change change{b + prefetch + 1, counts_};
  if (rank == 0) {
    LOG(INFO) << "balanced batches: ranks take " << absl::StrJoin(counts_, "/")
              << " samples of each global "
              << "batch from batch " << change.from_batch << " (measured "
              << absl::StrJoin(rates_, "/",
                               [](std::string* out, double r) {
                                 absl::StrAppend(out, static_cast<int64_t>(r));
                               })
              << " samples/s)";
  }
  return change;
}

}  // namespace ringleader
