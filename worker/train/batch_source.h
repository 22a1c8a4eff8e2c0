#ifndef RINGLEADER_WORKER_TRAIN_BATCH_SOURCE_H_
#define RINGLEADER_WORKER_TRAIN_BATCH_SOURCE_H_

// Where a rank's batches come from (torch's DistributedSampler + DataLoader):
// its shard of each epoch's permutation, or of the test split, read ahead by
// a BatchLoader. The shards are planned here, from what the generation fixes
// (the job's spec, world size, rank, the split's size, where it resumed),
// with the function the coordinator's GetShard uses (common/shard_plan.h):
// training never waits on the coordinator for them.

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "common/shard_plan.h"
#include "ringleader/v1/worker_service.pb.h"
#include "worker/data/batch_loader.h"
#include "worker/data/dataset.h"
#include "worker/data/job_data.h"
#include "worker/data/loader_settings.h"
#include "worker/train/batch_split.h"

namespace ringleader {

// Not thread-safe; the data must outlive it.
class BatchSource {
 public:
  struct Epoch {
    v1::ShardAssignment shard;
    std::unique_ptr<BatchLoader> loader;
  };

  // `resume`: the checkpoint the generation resumed from (ResumePoint's
  // epoch and epoch_sample_offset), whose epoch starts at that offset.
  // `pin_memory`: batches in page-locked memory (for a CUDA device).
  BatchSource(const JobData* data, const v1::JoinRendezvousResponse& generation,
              ShardResume resume, bool pin_memory = false);

  // This rank's shard of training epoch `epoch`, and of the test split.
  v1::ShardAssignment TrainShard(int64_t epoch) const;
  v1::ShardAssignment TestShard() const;

  // This rank's batches of training epoch `epoch`, augmented when the job
  // asks for it. With `split` (not owned, must outlive the epoch's loader),
  // each full global batch is shared by its counts (batch_split.h) instead
  // of evenly; a short last batch is shared evenly.
  absl::StatusOr<Epoch> Train(int64_t epoch,
                              const BatchSplitSchedule* split = nullptr) const;
  // This rank's part of the test split, padding excluded, so that pooled
  // metrics count every test sample exactly once. Null when the test split
  // is empty.
  absl::StatusOr<std::unique_ptr<BatchLoader>> Test(int64_t batch_size) const;

  // Where batch `b` of `epoch` starts in the epoch's permutation (the ranks
  // are strided): its first sample's position, which seeds its dropout.
  int64_t SamplePosition(const Epoch& epoch, int64_t b) const;
  // The samples of the epoch every rank together consumed once batch `b`
  // is done (a prefix of the permutation): where a checkpoint or a kept
  // state taken after it resumes.
  int64_t ConsumedAfter(const Epoch& epoch, int64_t b) const;
  // What a rank's loss on batch `b` of `samples` weighs so that the ranks'
  // averaged gradient is the global batch's mean: its share of the batch
  // against the even share (1 when the split is even).
  double LossWeight(const Epoch& epoch, int64_t b, int64_t samples) const;

  const Dataset& train_data() const { return *data_->train; }
  const Dataset& test_data() const { return *data_->test; }
  int64_t batch_size() const { return spec_.batch_size(); }
  // Batches this rank's training loaders read ahead.
  int prefetch() const { return loader_.prefetch; }

 private:
  const JobData* const data_;
  const v1::JobSpec spec_;
  const int32_t world_size_;
  const int32_t rank_;
  // The loader's threads and prefetch (dataset.loader_threads, ...).
  BatchLoaderOptions LoaderOptions() const;

  const ShardResume resume_;
  const bool pin_memory_;
  const LoaderSettings loader_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_BATCH_SOURCE_H_
