#include "worker/train/batch_source.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "common/distributed_sampler.h"
#include "worker/data/loader_settings.h"

namespace ringleader {

BatchSource::BatchSource(const JobData* data,
                         const v1::JoinRendezvousResponse& generation,
                         ShardResume resume, bool pin_memory)
    : data_(data),
      spec_(generation.spec()),
      world_size_(generation.world_size()),
      rank_(generation.rank()),
      resume_(resume),
      pin_memory_(pin_memory),
      loader_(LoaderSettingsFor(spec_.dataset(), generation.host_ranks(),
                                UsableCpus())) {}

BatchLoaderOptions BatchSource::LoaderOptions() const {
  BatchLoaderOptions o;
  o.threads = loader_.threads;
  o.prefetch = loader_.prefetch;
  o.pin_memory = pin_memory_;
  return o;
}

v1::ShardAssignment BatchSource::TrainShard(int64_t epoch) const {
  ShardPlanInput in;
  in.epoch = epoch;
  in.world_size = world_size_;
  in.rank = rank_;
  in.dataset_size = data_->train->size();
  in.resume = resume_;
  return PlanShard(spec_, in);
}

v1::ShardAssignment BatchSource::TestShard() const {
  ShardPlanInput in;
  in.world_size = world_size_;
  in.rank = rank_;
  in.dataset_size = data_->test->size();
  in.test_split = true;
  return PlanShard(spec_, in);
}

namespace {

// Batch b of a rank whose ranks share each global batch by `split`: its
// positions in the batch's run of the epoch's sequence.
std::function<std::vector<int64_t>(int64_t)> BalancedBatchIds(
    const v1::ShardAssignment& shard, int64_t batch_size,
    const BatchSplitSchedule* split) {
  auto sequence =
      std::make_shared<const std::vector<int64_t>>(EpochSequence(shard));
  const int world = shard.world_size();
  const int rank = shard.rank();
  return [sequence, batch_size, split, world, rank](int64_t b) {
    const int64_t global = batch_size * world;
    const int64_t begin = b * global;
    const int64_t size = std::min<int64_t>(
        global, static_cast<int64_t>(sequence->size()) - begin);
    // A short last batch holds a multiple of W positions: even.
    const std::vector<int64_t> counts =
        size == global ? split->CountsFor(b)
                       : std::vector<int64_t>(world, size / world);
    std::vector<int64_t> ids;
    for (int64_t p : RankPositions(counts, rank)) {
      ids.push_back((*sequence)[begin + p]);
    }
    return ids;
  };
}

}  // namespace

absl::StatusOr<BatchSource::Epoch> BatchSource::Train(
    int64_t epoch, const BatchSplitSchedule* split) const {
  v1::ShardAssignment shard = TrainShard(epoch);
  absl::StatusOr<std::vector<int64_t>> indices = CheckedShardIndices(shard);
  if (!indices.ok()) return indices.status();
  BatchLoaderOptions options = LoaderOptions();
  options.epoch = epoch;
  if (split != nullptr) {
    options.batch_ids = BalancedBatchIds(shard, spec_.batch_size(), split);
  }
  if (data_->augment.has_value()) {
    options.augment = [aug = &*data_->augment, seed = spec_.seed(),
                       epoch](Batch& b) {
      aug->Apply(b.inputs, b.sample_ids, seed, epoch);
    };
  }
  absl::StatusOr<std::unique_ptr<BatchLoader>> loader =
      BatchLoader::Create(*data_->train, *std::move(indices),
                          spec_.batch_size(), std::move(options));
  if (!loader.ok()) return loader.status();
  return Epoch{std::move(shard), *std::move(loader)};
}

absl::StatusOr<std::unique_ptr<BatchLoader>> BatchSource::Test(
    int64_t batch_size) const {
  if (data_->test->size() == 0) return std::unique_ptr<BatchLoader>();
  const v1::ShardAssignment shard = TestShard();
  absl::StatusOr<std::vector<int64_t>> indices = CheckedShardIndices(shard);
  if (!indices.ok()) return indices.status();
  indices->resize(UnpaddedShardSize(shard));
  return BatchLoader::Create(*data_->test, *std::move(indices), batch_size,
                             LoaderOptions());
}

int64_t BatchSource::SamplePosition(const Epoch& epoch, int64_t b) const {
  return epoch.shard.start_offset() + b * spec_.batch_size() * world_size_ +
         rank_;
}

int64_t BatchSource::ConsumedAfter(const Epoch& epoch, int64_t b) const {
  return std::min<int64_t>(
      epoch.shard.start_offset() + (b + 1) * spec_.batch_size() * world_size_,
      data_->train->size());
}

double BatchSource::LossWeight(const Epoch& epoch, int64_t b,
                               int64_t samples) const {
  const int64_t even = std::min<int64_t>(
      spec_.batch_size(), epoch.loader->num_samples() - b * spec_.batch_size());
  return even == samples
             ? 1.0
             : static_cast<double>(samples) / static_cast<double>(even);
}

}  // namespace ringleader
