#include "tests/integration/compressed_reference.h"

#include <memory>
#include <optional>

#include "common/distributed_sampler.h"
#include "gtest/gtest.h"
#include "tests/integration/reference_training.h"
#include "worker/data/batch_loader.h"
#include "worker/job_data.h"
#include "worker/model/optimizer.h"
#include "worker/train/task.h"

namespace ringleader::testing {
namespace {

// One rank's gradients for the samples `indices` (the model's .grad after a
// backward from zero), or empty on failure.
std::vector<torch::Tensor> RankGradients(Model& model, const Task& task,
                                         const Dataset& train,
                                         std::vector<int64_t> indices) {
  const int64_t n = static_cast<int64_t>(indices.size());
  auto loader = BatchLoader::Create(train, std::move(indices), n);
  EXPECT_TRUE(loader.ok()) << loader.status();
  if (!loader.ok()) return {};
  std::optional<Batch> b = (*loader)->Next();
  EXPECT_TRUE(b.has_value()) << (*loader)->status();
  if (!b.has_value()) return {};
  for (auto& p : model.Parameters()) p.mutable_grad() = at::Tensor();
  auto out = model.Forward(
      b->inputs, task.model_computes_loss() ? b->targets : at::Tensor());
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  auto loss = task.Loss(*out, b->targets, b->sample_ids);
  EXPECT_TRUE(loss.ok()) << loss.status();
  if (!loss.ok()) return {};
  loss->backward();
  std::vector<torch::Tensor> grads;
  for (auto& p : model.Parameters()) grads.push_back(p.grad().clone());
  return grads;
}

// fp16_compress_hook / bf16_compress_hook over the ranks' gradients.
std::vector<torch::Tensor> HookByHand(
    const std::vector<std::vector<torch::Tensor>>& per_rank,
    at::ScalarType dtype) {
  const int world = static_cast<int>(per_rank.size());
  std::vector<torch::Tensor> out;
  for (size_t i = 0; i < per_rank[0].size(); ++i) {
    torch::Tensor sum;
    for (int r = 0; r < world; ++r) {
      torch::Tensor sent = per_rank[r][i].to(dtype).div_(world);
      sum = r == 0 ? sent.to(at::kFloat) : sum + sent.to(at::kFloat);
    }
    out.push_back(sum.to(dtype).to(at::kFloat));
  }
  return out;
}

std::vector<std::vector<int64_t>> Shards(const v1::JobSpec& spec, int64_t size,
                                         int world, int epoch) {
  std::vector<std::vector<int64_t>> shards;
  for (int r = 0; r < world; ++r) {
    v1::ShardAssignment a;
    a.set_seed(spec.seed());
    a.set_epoch(epoch);
    a.set_world_size(world);
    a.set_rank(r);
    a.set_dataset_size(size);
    a.set_shuffle(spec.dataset().shuffle());
    a.set_drop_last(spec.dataset().drop_last());
    shards.push_back(ShardIndices(a));
  }
  return shards;
}

}  // namespace

std::vector<torch::Tensor> TrainSingleProcessCompressed(const v1::JobSpec& spec,
                                                        int world) {
  const v1::GradientCompression c = spec.ddp().gradient_compression();
  EXPECT_NE(c, v1::GRADIENT_COMPRESSION_NONE) << "use TrainSingleProcess";
  const at::ScalarType dtype =
      c == v1::GRADIENT_COMPRESSION_FP16 ? at::kHalf : at::kBFloat16;
  at::set_num_threads(1);
  auto data = LoadJobData(spec.dataset(), spec.seed());
  EXPECT_TRUE(data.ok()) << data.status();
  if (!data.ok()) return {};
  const Dataset& train = *data->train;
  std::shared_ptr<Model> model = BuildJobModel(spec, train);
  if (model == nullptr) return {};
  model->Train(true);
  const Task task(spec.task());
  auto optimizer = BuildOptimizer(spec.optimizer(), model->Parameters());
  EXPECT_TRUE(optimizer.ok()) << optimizer.status();
  if (!optimizer.ok()) return {};
  const size_t batch = static_cast<size_t>(spec.batch_size());
  for (int epoch = 0; epoch < spec.epochs(); ++epoch) {
    const auto shards = Shards(spec, train.size(), world, epoch);
    for (size_t off = 0; off < shards[0].size(); off += batch) {
      std::vector<std::vector<torch::Tensor>> per_rank;
      for (const auto& shard : shards) {
        const size_t end = std::min(shard.size(), off + batch);
        per_rank.push_back(RankGradients(
            *model, task, train, {shard.begin() + off, shard.begin() + end}));
        if (per_rank.back().empty()) return {};
      }
      std::vector<torch::Tensor> grads = HookByHand(per_rank, dtype);
      std::vector<torch::Tensor> params = model->Parameters();
      for (size_t i = 0; i < params.size(); ++i) {
        params[i].mutable_grad() = grads[i];
      }
      (*optimizer)->step();
    }
  }
  std::vector<torch::Tensor> params;
  for (auto& p : model->Parameters()) params.push_back(p.detach().clone());
  return params;
}

}  // namespace ringleader::testing
