#include "worker/train/batch_source.h"

#include <utility>
#include <vector>

#include "common/distributed_sampler.h"

namespace ringleader {

BatchSource::BatchSource(CoordinatorClient* client, const JobData* data,
                         std::string job_id,
                         const v1::JoinRendezvousResponse& generation,
                         int64_t resumed_checkpoint_id)
    : client_(client),
      data_(data),
      job_id_(std::move(job_id)),
      generation_(generation.generation()),
      rank_(generation.rank()),
      batch_size_(generation.spec().batch_size()),
      seed_(generation.spec().seed()),
      resumed_checkpoint_id_(resumed_checkpoint_id) {}

v1::GetShardRequest BatchSource::Request(int64_t epoch) const {
  v1::GetShardRequest r;
  r.set_job_id(job_id_);
  r.set_generation(generation_);
  r.set_rank(rank_);
  r.set_epoch(epoch);
  return r;
}

absl::StatusOr<BatchSource::Epoch> BatchSource::Train(int64_t epoch) const {
  v1::GetShardRequest r = Request(epoch);
  r.set_dataset_size(data_->train->size());
  r.set_resume_checkpoint_id(resumed_checkpoint_id_);
  absl::StatusOr<v1::ShardAssignment> shard = client_->GetShard(r);
  if (!shard.ok()) return shard.status();
  absl::StatusOr<std::vector<int64_t>> indices = CheckedShardIndices(*shard);
  if (!indices.ok()) return indices.status();
  BatchLoader::Augment augment;
  if (data_->augment.has_value()) {
    augment = [aug = &*data_->augment, seed = seed_, epoch](Batch& b) {
      aug->Apply(b.inputs, b.sample_ids, seed, epoch);
    };
  }
  absl::StatusOr<std::unique_ptr<BatchLoader>> loader =
      BatchLoader::Create(*data_->train, *std::move(indices), batch_size_,
                          /*prefetch=*/2, RealClock::Get(), std::move(augment));
  if (!loader.ok()) return loader.status();
  return Epoch{*std::move(shard), *std::move(loader)};
}

absl::StatusOr<std::unique_ptr<BatchLoader>> BatchSource::Test(
    int64_t batch_size) const {
  if (data_->test->size() == 0) return std::unique_ptr<BatchLoader>();
  v1::GetShardRequest r = Request(0);
  r.set_test_split(true);
  r.set_dataset_size(data_->test->size());
  absl::StatusOr<v1::ShardAssignment> shard = client_->GetShard(r);
  if (!shard.ok()) return shard.status();
  std::vector<int64_t> indices = ShardIndices(*shard);
  indices.resize(UnpaddedShardSize(*shard));
  return BatchLoader::Create(*data_->test, std::move(indices), batch_size);
}

}  // namespace ringleader
