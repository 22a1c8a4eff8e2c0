#include "worker/train/evaluator.h"

#include <torch/torch.h>

#include <numeric>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/data/synthetic_dataset.h"
#include "worker/model/builtin_models.h"
#include "worker/train/job_error.h"

namespace ringleader {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<BatchLoader> AllOf(const Dataset& data, int64_t batch) {
  std::vector<int64_t> ids(static_cast<size_t>(data.size()));
  std::iota(ids.begin(), ids.end(), 0);
  return BatchLoader::Create(data, ids, batch).value();
}

TEST(EvaluatorTest, SumsEqualOneForwardOverTheWholeSplit) {
  auto data = SyntheticDataset::Create(50, 3, Split::kTest).value();
  auto model = MakeMlp({16}, 4).value();
  const Task task{v1::TaskSpec()};
  // Batches of 16 leave a remainder of 2: every sample counts once.
  auto loader = AllOf(*data, 16);
  absl::StatusOr<MetricSums> sums =
      Evaluate(*model, task, loader.get(), *data, torch::kCPU);
  ASSERT_TRUE(sums.ok()) << sums.status();
  EXPECT_TRUE(model->is_training());

  torch::Tensor x = torch::empty({50, 1, 28, 28});
  torch::Tensor y = torch::empty({50}, torch::kLong);
  std::vector<int64_t> ids(50);
  std::iota(ids.begin(), ids.end(), 0);
  ASSERT_TRUE(
      data->Gather(ids.data(), 50, x.data_ptr<float>(), y.data_ptr<int64_t>())
          .ok());
  model->Train(false);
  torch::NoGradGuard no_grad;
  const torch::Tensor logits = model->Forward(x).value();
  EXPECT_EQ(sums->Get("accuracy").count(), 50);
  EXPECT_DOUBLE_EQ(sums->Get("accuracy").sum(),
                   logits.argmax(1).eq(y).sum().item<double>());
  EXPECT_NEAR(sums->Mean("loss"),
              torch::nn::functional::cross_entropy(logits, y).item<double>(),
              1e-5);
  EXPECT_EQ(sums->Get("top5_accuracy").count(), 50);
}

TEST(EvaluatorTest, NothingToEvaluate) {
  auto data = SyntheticDataset::Create(0, 3, Split::kTest).value();
  auto model = MakeMlp({4}, 4).value();
  absl::StatusOr<MetricSums> sums =
      Evaluate(*model, Task(v1::TaskSpec()), nullptr, *data, torch::kCPU);
  ASSERT_TRUE(sums.ok());
  EXPECT_TRUE(sums->sums().empty());
}

TEST(EvaluatorTest, AModelWithTooFewClassesIsAJobError) {
  auto data = SyntheticDataset::Create(40, 3, Split::kTest).value();
  ModelShape three;
  three.num_classes = 3;  // The data's labels go up to 9.
  auto model = MakeMlp({4}, 4, three).value();
  auto loader = AllOf(*data, 40);
  absl::StatusOr<MetricSums> sums =
      Evaluate(*model, Task(v1::TaskSpec()), loader.get(), *data, torch::kCPU);
  ASSERT_FALSE(sums.ok());
  EXPECT_TRUE(IsJobError(sums.status()));
  EXPECT_THAT(std::string(sums.status().message()),
              HasSubstr("evaluating on the test split of the synthetic "
                        "dataset: target "));
  EXPECT_THAT(std::string(sums.status().message()),
              HasSubstr("outside [0, 3)"));
  EXPECT_TRUE(model->is_training());
}

}  // namespace
}  // namespace ringleader
