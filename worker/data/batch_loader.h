#ifndef RINGLEADER_WORKER_DATA_BATCH_LOADER_H_
#define RINGLEADER_WORKER_DATA_BATCH_LOADER_H_

// Turns one rank's sample indices for an epoch into batches of tensors,
// prepared by background threads a few batches ahead so that the training
// step rarely waits for data (torch's DataLoader with num_workers and
// prefetch_factor). The time it does wait is reported, as the data-wait
// metric.
//
// With several threads, each batch is cut into chunks of samples that the
// threads gather in parallel (decoding images is the slow part), and a
// thread moves on to the next batch as soon as no chunk of this one is left:
// unlike DataLoader's workers, which each make whole batches, the first
// batch is ready as soon as the threads together made it, and at most
// `prefetch` batches exist ahead of the consumer whatever the thread count.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <map>
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

struct BatchLoaderOptions {
  // Batches being made or ready ahead of the consumer, in [1, 1024].
  int prefetch = 2;
  // Loader threads, in [1, 256].
  int threads = 1;
  // The training epoch the batches belong to (Dataset::GatherForEpoch);
  // unset: GatherFields (evaluation).
  std::optional<int64_t> epoch;
  const Clock* clock = RealClock::Get();  // Not owned; times the data wait.
  // Runs on each gathered batch, in a loader thread (random crops and
  // flips of training arrays).
  std::function<void(Batch&)> augment;
  // Gathers into page-locked memory (DataLoader's pin_memory), so that the
  // copy to a GPU is asynchronous; needs a CUDA LibTorch.
  bool pin_memory = false;
  // Batch b's samples, asked once, by a loader thread, when it starts on
  // the batch (ranks that share each global batch by speed: their batches
  // vary in size). Unset: indices[bB, (b+1)B), as Create says. The index
  // vector still gives the number of batches.
  std::function<std::vector<int64_t>(int64_t b)> batch_ids;
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
  // The same, with every option (several threads, an epoch).
  static absl::StatusOr<std::unique_ptr<BatchLoader>> Create(
      const Dataset& dataset, std::vector<int64_t> indices, int64_t batch_size,
      BatchLoaderOptions options);

  // Stops the threads: chunks being gathered are finished, nothing more is.
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
  int threads() const { return num_threads_; }
  int64_t num_samples() const { return static_cast<int64_t>(indices_.size()); }

 private:
  // A batch being gathered: its tensors and how many of its chunks are
  // done.
  struct Pending {
    Batch batch;
    std::vector<void*> buffers;  // Each input's data.
    int64_t chunks = 0;
    int64_t chunks_done = 0;
  };
  // One unit of work: samples [begin, end) of batch `batch`.
  struct Chunk {
    int64_t batch = 0;
    int64_t begin = 0;
    int64_t end = 0;
  };

  BatchLoader(const Dataset& dataset, std::vector<int64_t> indices,
              int64_t batch_size, BatchLoaderOptions options);

  void Work();
  // The next chunk to gather, allocating its batch when it is the first;
  // nullopt when there is none left or the loader stops.
  std::optional<Chunk> Claim() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Gather(const Chunk& c, Pending& p) const;
  absl::StatusOr<Pending> Allocate(int64_t b) const;
  // Batch b's samples (options_.batch_ids or the index vector's slice).
  std::vector<int64_t> BatchIds(int64_t b) const;

  bool CanClaim() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stop_ || failed_batch_ >= 0 || next_batch_ >= num_batches_ ||
           next_batch_ < consumed_ + prefetch_;
  }
  bool CanConsume() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return ready_.count(consumed_) > 0 || consumed_ >= num_batches_ ||
           (failed_batch_ >= 0 && consumed_ >= failed_batch_) ||
           workers_done_ == num_threads_;
  }

  const Dataset& dataset_;
  const std::vector<int64_t> indices_;
  const int64_t batch_size_;
  const int64_t num_batches_;
  const int prefetch_;
  const int num_threads_;
  const int64_t chunk_size_;
  const BatchLoaderOptions options_;

  mutable absl::Mutex mu_;
  // The next chunk to hand out.
  int64_t next_batch_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t next_begin_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<int64_t, Pending> pending_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, Batch> ready_ ABSL_GUARDED_BY(mu_);
  int64_t consumed_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  // The first batch that failed (-1: none), and why.
  int64_t failed_batch_ ABSL_GUARDED_BY(mu_) = -1;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  int workers_done_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Duration data_wait_ ABSL_GUARDED_BY(mu_);

  // Last, so they start after every member above is initialized.
  std::vector<std::thread> threads_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_BATCH_LOADER_H_
