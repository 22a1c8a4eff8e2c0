// End to end on one process: synthetic data through the loader into the
// default MLP with SGD. Guards the pieces fitting together (normalization,
// label dtype, parameter order, optimizer wiring), not a benchmark.

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <numeric>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "common/distributed_sampler.h"
#include "gtest/gtest.h"
#include "ringleader/v1/job.pb.h"
#include "ringleader/v1/worker_service.pb.h"
#include "worker/data/batch_loader.h"
#include "worker/data/synthetic_dataset.h"
#include "worker/model/models.h"
#include "worker/model/optimizer.h"

namespace ringleader {
namespace {

constexpr int64_t kSamples = 2000;
constexpr int kMaxEpochs = 5;

double Accuracy(Model& model, const Dataset& data) {
  torch::NoGradGuard no_grad;
  model.Train(false);
  std::vector<int64_t> all(data.size());
  std::iota(all.begin(), all.end(), 0);
  auto loader = BatchLoader::Create(data, all, 500).value();
  int64_t correct = 0;
  while (std::optional<Batch> b = loader->Next()) {
    at::Tensor logits = model.Forward(b->inputs[0]).value();
    correct += logits.argmax(1).eq(b->targets).sum().item<int64_t>();
  }
  model.Train(true);
  return static_cast<double>(correct) / data.size();
}

TEST(TrainingSanityTest, MlpLearnsSyntheticDataWithSgd) {
  torch::set_num_threads(1);
  auto data = SyntheticDataset::Create(kSamples, 1).value();
  v1::ModelSpec model_spec;
  model_spec.set_arch(v1::MODEL_ARCH_MLP);
  std::shared_ptr<Model> model = BuildModel(model_spec, 1).value();
  v1::OptimizerSpec opt_spec;
  opt_spec.set_kind(v1::OPTIMIZER_KIND_SGD);
  opt_spec.set_learning_rate(0.05);
  opt_spec.set_momentum(0.9);
  auto opt = BuildOptimizer(opt_spec, model->Parameters()).value();

  const double initial = Accuracy(*model, *data);
  double accuracy = initial;
  int epoch = 0;
  for (; epoch < kMaxEpochs && accuracy <= 0.8; ++epoch) {
    v1::ShardAssignment shard;
    shard.set_seed(1);
    shard.set_epoch(epoch);
    shard.set_world_size(1);
    shard.set_dataset_size(kSamples);
    shard.set_shuffle(true);
    auto loader = BatchLoader::Create(*data, ShardIndices(shard), 64).value();
    while (std::optional<Batch> b = loader->Next()) {
      opt->zero_grad();
      at::Tensor loss = torch::nn::functional::cross_entropy(
          model->Forward(b->inputs[0]).value(), b->targets);
      loss.backward();
      opt->step();
    }
    accuracy = Accuracy(*model, *data);
  }
  EXPECT_LT(initial, 0.3);
  EXPECT_GT(accuracy, 0.8) << "after " << epoch << " epochs";
  RecordProperty("epochs", epoch);
  RecordProperty("train_accuracy", std::to_string(accuracy));
}

}  // namespace
}  // namespace ringleader
