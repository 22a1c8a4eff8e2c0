#ifndef RINGLEADER_WORKER_DATA_BATCH_LOADER_H_
#define RINGLEADER_WORKER_DATA_BATCH_LOADER_H_

// Turns one rank's sample indices for an epoch into batches of tensors,
// prepared by a background thread a few batches ahead so that the training
// step rarely waits for data (torch's DataLoader with one worker and
// prefetch_factor). The time it does wait is reported, as the data-wait
// metric.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "worker/data/dataset.h"

namespace ringleader {

struct Batch {
  // One per model input: [B, field dims...], CPU, contiguous, of the
  // dataset's input_fields().
  std::vector<at::Tensor> inputs;
  at::Tensor targets;  // [B, target dims...].
  int64_t index = 0;   // Position of this batch in the epoch, from 0.
  // The dataset index of each sample, for error messages.
  std::vector<int64_t> sample_ids;

  int64_t size() const { return targets.defined() ? targets.size(0) : 0; }
};

// Thread-safety: Next() is for one consumer thread; status(), data_wait()
// and the accessors may be called from any thread. The destructor must not
// race with Next(). The dataset must outlive the loader.
class BatchLoader {
 public:
  // Batches are indices[0..B), indices[B..2B), ... in order; the last one
  // holds the remainder. Preparation starts at once, at most `prefetch`
  // finished batches ahead of the consumer. InvalidArgument unless
  // batch_size >= 1 and 1 <= prefetch <= 1024; OutOfRange when an index is
  // outside the dataset (checked here, so a mismatch between the
  // coordinator's dataset size and this worker's shows before training).
  // `clock` (not owned, must outlive the loader) times the data wait.
  // `augment`, when set, runs on each gathered batch in the loader's thread
  // (random crops and flips of training images). `pin_memory` gathers each
  // batch into page-locked memory (DataLoader's pin_memory), so that its
  // copy to a GPU is asynchronous; it needs a CUDA LibTorch.
  using Augment = std::function<void(Batch&)>;
  static absl::StatusOr<std::unique_ptr<BatchLoader>> Create(
      const Dataset& dataset, std::vector<int64_t> indices, int64_t batch_size,
      int prefetch = 2, const Clock* clock = RealClock::Get(),
      Augment augment = nullptr, bool pin_memory = false);

  // Stops the thread: a batch being gathered is finished, nothing more is.
  ~BatchLoader();

  BatchLoader(const BatchLoader&) = delete;
  BatchLoader& operator=(const BatchLoader&) = delete;

  // The next batch, blocking until it is ready; nullopt after the last one
  // or once preparing a batch failed (see status()).
  std::optional<Batch> Next();

  // OK, or why the loader stopped before the end.
  absl::Status status() const;
  // Total time Next() spent blocked because no batch was ready yet.
  absl::Duration data_wait() const;

  int64_t num_batches() const { return num_batches_; }
  int64_t num_samples() const { return static_cast<int64_t>(indices_.size()); }

 private:
  BatchLoader(const Dataset& dataset, std::vector<int64_t> indices,
              int64_t batch_size, int prefetch, const Clock* clock,
              Augment augment, bool pin_memory);

  void Produce();
  absl::StatusOr<Batch> MakeBatch(int64_t b) const;

  bool CanProduce() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stop_ || static_cast<int>(queue_.size()) < prefetch_;
  }
  bool CanConsume() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !queue_.empty() || producer_done_;
  }

  const Dataset& dataset_;
  const std::vector<int64_t> indices_;
  const int64_t batch_size_;
  const int64_t num_batches_;
  const int prefetch_;
  const Clock* const clock_;
  const Augment augment_;
  const bool pin_memory_;

  mutable absl::Mutex mu_;
  std::deque<Batch> queue_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool producer_done_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  absl::Duration data_wait_ ABSL_GUARDED_BY(mu_);

  // Last, so it starts after every member above is initialized.
  std::thread thread_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_BATCH_LOADER_H_
