#ifndef RINGLEADER_WORKER_TRAIN_BATCH_BALANCER_H_
#define RINGLEADER_WORKER_TRAIN_BATCH_BALANCER_H_

// Balances the ranks of a generation by speed (DdpSpec.balance_batches):
// each rank times the compute of its micro-batches (forward and backward,
// not the waits), and every `window` micro-batches the ranks sum their
// times and sample counts in one small all-reduce. From the same sums every
// rank computes the same split of the global batch, in proportion to the
// measured rates; it is taken only when it shortens the slowest rank's
// step by 3% or more, so noise does not churn the batch shapes. A change
// applies from the first batch that no rank's loader can have cut yet: one
// past the largest prefetch of any rank.

#include <c10/core/Device.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "worker/comm/communicator.h"

namespace ringleader {

class BatchBalancer {
 public:
  struct Options {
    int64_t per_rank_batch = 1;  // The even split's count.
    int prefetch = 1;            // This rank's loader's.
    int64_t window = 10;         // Micro-batches between agreements.
  };
  struct Change {
    int64_t from_batch = 0;  // Of the epoch the agreement was made in.
    std::vector<int64_t> counts;
  };

  // `comm` (not owned) is the generation's; `device` holds the agreement's
  // tensor.
  BatchBalancer(Communicator* comm, c10::Device device, Options options);

  // The split in force: the last agreed, the even one at first.
  const std::vector<int64_t>& counts() const { return counts_; }

  // This rank computed a micro-batch of `samples` in `busy`.
  void Add(int64_t samples, absl::Duration busy);

  // Called by every rank after each micro-batch, `b` its index in the
  // epoch. At the end of a window the ranks agree (a collective: every rank
  // must call it alike); a new split, when it pays, applies from batch
  // `from_batch` on. The first window of a generation is warm-up and only
  // discarded. ABORTED when the collective fails.
  absl::StatusOr<std::optional<Change>> AfterMicroBatch(int64_t b);

 private:
  absl::StatusOr<std::optional<Change>> Agree(int64_t b);

  Communicator* const comm_;
  const c10::Device device_;
  const Options options_;
  std::vector<int64_t> counts_;
  std::vector<double> rates_;  // Smoothed samples/s, per rank; 0: unknown.
  int64_t micro_batches_ = 0;
  int64_t window_samples_ = 0;
  absl::Duration window_busy_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_BATCH_BALANCER_H_
