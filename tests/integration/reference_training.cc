#include "tests/integration/reference_training.h"

#include "common/distributed_sampler.h"
#include "gtest/gtest.h"
#include "worker/data/synthetic_dataset.h"
#include "worker/model/models.h"
#include "worker/model/optimizer.h"
#include "worker/train/checkpoint.h"

namespace ringleader::testing {

std::vector<torch::Tensor> TrainSingleProcess(const v1::JobSpec& spec,
                                              int world) {
  const int64_t train = spec.dataset().synthetic_train_size();
  const int64_t batch = spec.batch_size();
  auto data = SyntheticDataset::Create(train, spec.seed(), Split::kTrain);
  auto model = BuildModel(spec.model(), spec.seed());
  auto optimizer = BuildOptimizer(spec.optimizer(), (*model)->Parameters());
  for (int epoch = 0; epoch < spec.epochs(); ++epoch) {
    std::vector<std::vector<int64_t>> shards;
    for (int r = 0; r < world; ++r) {
      v1::ShardAssignment a;
      a.set_seed(spec.seed());
      a.set_epoch(epoch);
      a.set_world_size(world);
      a.set_rank(r);
      a.set_dataset_size(train);
      a.set_shuffle(true);
      shards.push_back(ShardIndices(a));
    }
    const size_t per_rank = shards[0].size();
    for (size_t off = 0; off < per_rank; off += batch) {
      std::vector<int64_t> global;
      for (const auto& shard : shards) {
        for (size_t i = off; i < std::min<size_t>(per_rank, off + batch); ++i) {
          global.push_back(shard[i]);
        }
      }
      torch::Tensor x = torch::empty({int64_t(global.size()), 1, 28, 28});
      torch::Tensor y = torch::empty({int64_t(global.size())}, torch::kInt64);
      EXPECT_TRUE((*data)
                      ->Gather(global.data(), global.size(),
                               x.data_ptr<float>(), y.data_ptr<int64_t>())
                      .ok());
      (*optimizer)->zero_grad();
      auto out = (*model)->Forward(x);
      torch::nn::functional::cross_entropy(*out, y).backward();
      (*optimizer)->step();
    }
  }
  std::vector<torch::Tensor> params;
  for (auto& p : (*model)->Parameters()) params.push_back(p.detach().clone());
  return params;
}

std::vector<torch::Tensor> CheckpointParameters(const v1::JobSpec& spec,
                                                const std::string& path) {
  auto model = BuildModel(spec.model(), spec.seed());
  auto pos = LoadCheckpoint(path, **model, nullptr);
  EXPECT_TRUE(pos.ok()) << pos.status();
  if (!pos.ok()) return {};
  std::vector<torch::Tensor> out;
  for (auto& p : (*model)->Parameters()) out.push_back(p.detach().clone());
  return out;
}

double MaxAbsDiff(const std::vector<torch::Tensor>& a,
                  const std::vector<torch::Tensor>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    m = std::max(m, (a[i] - b[i]).abs().max().item<double>());
  }
  return a.empty() || b.empty() ? 1e9 : m;
}

}  // namespace ringleader::testing
