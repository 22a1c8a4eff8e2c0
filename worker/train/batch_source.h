#ifndef RINGLEADER_WORKER_TRAIN_BATCH_SOURCE_H_
#define RINGLEADER_WORKER_TRAIN_BATCH_SOURCE_H_

// Where a rank's batches come from (torch's DistributedSampler + DataLoader):
// the coordinator's shard of each epoch's permutation, or of the test split,
// read ahead by a BatchLoader.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "ringleader/v1/worker_service.pb.h"
#include "worker/coordinator_client.h"
#include "worker/data/batch_loader.h"
#include "worker/data/dataset.h"
#include "worker/job_data.h"

namespace ringleader {

// Not thread-safe; the client and the data must outlive it.
class BatchSource {
 public:
  struct Epoch {
    v1::ShardAssignment shard;
    std::unique_ptr<BatchLoader> loader;
  };

  // `resumed_checkpoint_id`: the checkpoint the generation resumed from (0:
  // none), which the coordinator starts the first epoch's shard after.
  BatchSource(CoordinatorClient* client, const JobData* data,
              std::string job_id, const v1::JoinRendezvousResponse& generation,
              int64_t resumed_checkpoint_id);

  // This rank's batches of training epoch `epoch`, augmented when the job
  // asks for it.
  absl::StatusOr<Epoch> Train(int64_t epoch) const;
  // This rank's part of the test split, padding excluded, so that pooled
  // metrics count every test sample exactly once. Null when the test split
  // is empty.
  absl::StatusOr<std::unique_ptr<BatchLoader>> Test(int64_t batch_size) const;

  const Dataset& train_data() const { return *data_->train; }
  const Dataset& test_data() const { return *data_->test; }
  int64_t batch_size() const { return batch_size_; }

 private:
  v1::GetShardRequest Request(int64_t epoch) const;

  CoordinatorClient* const client_;
  const JobData* const data_;
  const std::string job_id_;
  const int64_t generation_;
  const int32_t rank_;
  const int64_t batch_size_;
  const uint64_t seed_;  // Draws the training images' augmentation.
  const int64_t resumed_checkpoint_id_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_BATCH_SOURCE_H_
