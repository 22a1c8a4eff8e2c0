#include "worker/train/step/task.h"

#include <torch/torch.h>

#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

namespace F = torch::nn::functional;
using ::testing::HasSubstr;

v1::TaskSpec Spec(v1::TaskKind kind,
                  v1::LossKind loss = v1::LOSS_KIND_UNSPECIFIED) {
  v1::TaskSpec s;
  s.set_kind(kind);
  s.set_loss(loss);
  return s;
}

ModelOutput Out(at::Tensor output) { return ModelOutput{output, at::Tensor()}; }

TEST(TaskTest, ClassificationIsTorchsCrossEntropy) {
  torch::manual_seed(1);
  const at::Tensor logits = torch::randn({6, 4});
  const at::Tensor y = torch::tensor({0, 3, 1, 2, 2, 0}, torch::kLong);
  Task task(v1::TaskSpec{});  // Unspecified: classification.
  absl::StatusOr<at::Tensor> loss = task.Loss(Out(logits), y, {});
  ASSERT_TRUE(loss.ok()) << loss.status();
  EXPECT_TRUE(torch::allclose(*loss, F::cross_entropy(logits, y)));
}

TEST(TaskTest, LabelSmoothingAndIgnoreIndex) {
  torch::manual_seed(2);
  v1::TaskSpec spec = Spec(v1::TASK_KIND_CLASSIFICATION);
  spec.set_label_smoothing(0.1);
  spec.set_ignore_index(7);
  const at::Tensor logits = torch::randn({5, 3});
  const at::Tensor y = torch::tensor({0, 7, 2, 1, 7}, torch::kLong);
  absl::StatusOr<at::Tensor> loss = Task(spec).Loss(Out(logits), y, {});
  ASSERT_TRUE(loss.ok()) << loss.status();
  EXPECT_TRUE(torch::allclose(
      *loss,
      F::cross_entropy(
          logits, y,
          F::CrossEntropyFuncOptions().ignore_index(7).label_smoothing(0.1))));
}

TEST(TaskTest, PerTokenCrossEntropyOverSequences) {
  torch::manual_seed(3);
  const at::Tensor logits = torch::randn({2, 5, 11});
  const at::Tensor y = torch::randint(11, {2, 5}, torch::kLong);
  absl::StatusOr<at::Tensor> loss =
      Task(Spec(v1::TASK_KIND_LANGUAGE_MODEL)).Loss(Out(logits), y, {});
  ASSERT_TRUE(loss.ok()) << loss.status();
  EXPECT_TRUE(torch::allclose(
      *loss, F::cross_entropy(logits.view({-1, 11}), y.view({-1}))));
}

TEST(TaskTest, TargetOutOfRangeNamesTheSample) {
  const at::Tensor logits = torch::zeros({3, 10});
  const at::Tensor y = torch::tensor({1, 12, 3}, torch::kLong);
  absl::StatusOr<at::Tensor> loss =
      Task(v1::TaskSpec{}).Loss(Out(logits), y, {40, 41, 42});
  EXPECT_EQ(loss.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(loss.status().message()),
              HasSubstr("target 12 of sample 41 is outside [0, 10)"));
  // Negative ids too, and per-token positions.
  const at::Tensor tokens = torch::tensor({{1, 2}, {3, -5}}, torch::kLong);
  loss = Task(Spec(v1::TASK_KIND_LANGUAGE_MODEL))
             .Loss(Out(torch::zeros({2, 2, 4})), tokens, {8, 9});
  EXPECT_THAT(std::string(loss.status().message()),
              HasSubstr("target -5 of sample 9 (position 1)"));
}

TEST(TaskTest, OutputThatDoesNotFitTheTargets) {
  absl::StatusOr<at::Tensor> loss =
      Task(v1::TaskSpec{})
          .Loss(Out(torch::zeros({4, 10})), torch::zeros({3}, torch::kLong),
                {});
  EXPECT_THAT(
      std::string(loss.status().message()),
      HasSubstr("output Float [4, 10] does not fit the targets Long [3]"));
  loss = Task(Spec(v1::TASK_KIND_REGRESSION))
             .Loss(Out(torch::zeros({4, 2})), torch::zeros({4, 3}), {});
  EXPECT_THAT(std::string(loss.status().message()),
              HasSubstr("regression needs float outputs"));
}

TEST(TaskTest, RegressionLosses) {
  torch::manual_seed(4);
  const at::Tensor p = torch::randn({8, 1});
  const at::Tensor y = torch::randn({8});
  absl::StatusOr<at::Tensor> mse =
      Task(Spec(v1::TASK_KIND_REGRESSION)).Loss(Out(p), y, {});
  ASSERT_TRUE(mse.ok()) << mse.status();
  EXPECT_TRUE(torch::allclose(*mse, F::mse_loss(p.view({8}), y)));
  absl::StatusOr<at::Tensor> l1 =
      Task(Spec(v1::TASK_KIND_REGRESSION, v1::LOSS_KIND_L1))
          .Loss(Out(p), y, {});
  ASSERT_TRUE(l1.ok()) << l1.status();
  EXPECT_TRUE(torch::allclose(*l1, F::l1_loss(p.view({8}), y)));
}

TEST(TaskTest, ModelComputedLoss) {
  Task task(Spec(v1::TASK_KIND_LANGUAGE_MODEL, v1::LOSS_KIND_MODEL));
  EXPECT_TRUE(task.model_computes_loss());
  const at::Tensor y = torch::zeros({2, 3}, torch::kLong);
  absl::StatusOr<at::Tensor> loss =
      task.Loss(ModelOutput{at::Tensor(), torch::tensor({1.5})}, y, {});
  ASSERT_TRUE(loss.ok()) << loss.status();
  EXPECT_EQ(loss->dim(), 0);
  EXPECT_FLOAT_EQ(loss->item<float>(), 1.5f);
  EXPECT_FALSE(task.Loss(Out(torch::zeros({2, 3, 4})), y, {}).ok());
  // Evaluation weighs the model's mean loss by the tokens it covered.
  MetricSums sums;
  ASSERT_TRUE(task.Accumulate(ModelOutput{at::Tensor(), torch::tensor(2.0)}, y,
                              {}, sums)
                  .ok());
  EXPECT_EQ(sums.Get("loss").count(), 6);
  EXPECT_DOUBLE_EQ(sums.Get("loss").sum(), 12.0);
}

TEST(TaskTest, ClassificationMetricSums) {
  // Rows: argmax 2 (label 2: hit), argmax 0 (label 1: miss, but second best),
  // ignored row.
  const at::Tensor logits = torch::tensor({{0.f, 1.f, 5.f, 0.f, 0.f, 0.f},
                                           {4.f, 3.f, 0.f, 0.f, 0.f, 0.f},
                                           {9.f, 0.f, 0.f, 0.f, 0.f, 0.f}});
  const at::Tensor y = torch::tensor({2, 1, -100}, torch::kLong);
  v1::TaskSpec spec;
  spec.set_top_k(2);
  MetricSums sums;
  ASSERT_TRUE(Task(spec).Accumulate(Out(logits), y, {}, sums).ok());
  EXPECT_EQ(sums.Get("accuracy").count(), 2);
  EXPECT_DOUBLE_EQ(sums.Get("accuracy").sum(), 1.0);
  EXPECT_DOUBLE_EQ(sums.Get("top2_accuracy").sum(), 2.0);
  const double want =
      F::cross_entropy(logits.narrow(0, 0, 2), y.narrow(0, 0, 2),
                       F::CrossEntropyFuncOptions().reduction(torch::kSum))
          .item<double>();
  EXPECT_NEAR(sums.Get("loss").sum(), want, 1e-5);
  EXPECT_EQ(sums.Get("loss").count(), 2);
  // A second batch adds up.
  ASSERT_TRUE(Task(spec).Accumulate(Out(logits), y, {}, sums).ok());
  EXPECT_EQ(sums.Get("accuracy").count(), 4);
  EXPECT_DOUBLE_EQ(sums.Mean("accuracy"), 0.5);
}

TEST(TaskTest, LanguageModelAndRegressionMetricSums) {
  MetricSums lm;
  const at::Tensor logits = torch::zeros({2, 3, 4});  // Uniform: loss ln 4.
  ASSERT_TRUE(
      Task(Spec(v1::TASK_KIND_LANGUAGE_MODEL))
          .Accumulate(Out(logits), torch::ones({2, 3}, torch::kLong), {}, lm)
          .ok());
  EXPECT_EQ(lm.Get("loss").count(), 6);
  EXPECT_NEAR(lm.Mean("loss"), std::log(4.0), 1e-6);
  EXPECT_EQ(lm.Get("top5_accuracy").count(), 0);  // No top-k for tokens.

  MetricSums reg;
  ASSERT_TRUE(Task(Spec(v1::TASK_KIND_REGRESSION))
                  .Accumulate(Out(torch::tensor({1.f, 2.f})),
                              torch::tensor({0.f, 4.f}), {}, reg)
                  .ok());
  EXPECT_DOUBLE_EQ(reg.Get("mse").sum(), 5.0);
  EXPECT_DOUBLE_EQ(reg.Get("mae").sum(), 3.0);
  EXPECT_EQ(reg.Get("mse").count(), 2);
}

}  // namespace
}  // namespace ringleader
