#ifndef RINGLEADER_WORKER_TRAIN_BATCH_SPLIT_H_
#define RINGLEADER_WORKER_TRAIN_BATCH_SPLIT_H_

// How the ranks share each global batch when they are balanced by speed
// (DdpSpec.balance_batches). A global batch is a run of W * batch_size
// positions of the epoch's sequence (common/distributed_sampler.h); the even
// split gives rank r positions r, r + W, ... Balanced, rank r takes
// counts[r] of them: the same samples make the step, in other hands. Every
// function here is pure and deterministic, so ranks that agree on their
// inputs agree on the split.

#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace ringleader {

// `total` samples split over the ranks in proportion to `rates` (samples a
// second, one per rank; a rate <= 0 counts as the slowest one), each rank
// at least `least` (capped at total / ranks): largest remainders, ties to
// the lower rank. Sums to `total`.
std::vector<int64_t> SplitByRates(int64_t total,
                                  const std::vector<double>& rates,
                                  int64_t least = 1);

// The positions in [0, sum(counts)) of `rank`'s samples: with m the least
// count, the even split's r, r + W, ..., r + (m - 1) W, then the rank's
// counts[rank] - m further ones from the tail [m W, total), ranks in order.
// Equal counts give exactly the even split.
std::vector<int64_t> RankPositions(const std::vector<int64_t>& counts,
                                   int rank);

// The time a step that waits for every rank takes under `counts`, in units
// of 1 / rate: the slowest rank's counts[r] / rates[r].
double SlowestRankTime(const std::vector<int64_t>& counts,
                       const std::vector<double>& rates);

// Which split each batch of an epoch uses: set by the training thread,
// read by the loader's threads ahead of it. A change applies from a batch
// no loader thread has read yet, so every rank cuts each batch alike.
// Thread-safe.
class BatchSplitSchedule {
 public:
  // `counts` from batch 0 on.
  explicit BatchSplitSchedule(std::vector<int64_t> counts);

  // `counts` from batch `from` on; `from` must be past every batch read
  // (CHECK-fails otherwise: the ranks could disagree).
  void Set(int64_t from, std::vector<int64_t> counts);
  // The counts batch `b` uses.
  std::vector<int64_t> CountsFor(int64_t b) const;

 private:
  mutable absl::Mutex mu_;
  // (first batch, counts), in order of the first batch.
  std::vector<std::pair<int64_t, std::vector<int64_t>>> changes_
      ABSL_GUARDED_BY(mu_);
  mutable int64_t last_read_ ABSL_GUARDED_BY(mu_) = -1;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_BATCH_SPLIT_H_
