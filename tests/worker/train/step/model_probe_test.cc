#include "worker/train/step/model_probe.h"

#include <torch/script.h>
#include <torch/torch.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/data/empty_dataset.h"
#include "worker/data/synthetic_dataset.h"
#include "worker/model/torchscript_model.h"
#include "worker/train/step/batch_forward.h"

namespace ringleader {
namespace {

using ::testing::HasSubstr;

// A TorchScript module (compiled from source in C++, no Python) with one
// weight of `weight_shape`, saved and loaded as a job's model.
std::unique_ptr<Model> Script(const std::string& name,
                              std::vector<int64_t> weight_shape,
                              const std::string& body) {
  torch::jit::Module m(name);
  m.register_attribute("training", c10::BoolType::get(), true);
  m.register_parameter("weight", torch::randn(weight_shape).requires_grad_(),
                       false);
  m.register_buffer("seen", torch::zeros({1}));
  m.define("def forward(self, x):\n" + body + "\n");
  const std::string path = absl::StrCat(::testing::TempDir(), "/", name, ".pt");
  m.save(path);
  absl::StatusOr<std::unique_ptr<Model>> model = LoadTorchScriptModel(path);
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *std::move(model) : nullptr;
}

std::unique_ptr<SyntheticDataset> Data() {
  return SyntheticDataset::Create(8, 1, Split::kTrain).value();
}

TEST(ModelProbeTest, AModelThatFitsPasses) {
  auto model = Script("fits", {10, 784},
                      "    return torch.matmul(torch.flatten(x, 1), "
                      "self.weight.t())");
  ASSERT_NE(model, nullptr);
  EXPECT_TRUE(
      ProbeModel(*model, Task(v1::TaskSpec{}), *Data(), torch::kCPU).ok());
  EXPECT_TRUE(model->is_training());
}

TEST(ModelProbeTest, ThreeChannelModelOnGreyImages) {
  // The new user's first try: a CNN for 3x32x32 on one-channel data.
  auto model =
      Script("rgb", {4, 3, 3, 3},
             "    return torch.flatten(torch.conv2d(x, self.weight), 1)");
  ASSERT_NE(model, nullptr);
  const absl::Status s =
      ProbeModel(*model, Task(v1::TaskSpec{}), *Data(), torch::kCPU);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  const std::string message(s.message());
  EXPECT_THAT(message,
              HasSubstr("the model does not fit the train split of the "
                        "synthetic dataset (inputs float32 [1, 28, 28] -> "
                        "targets int64 [])"));
  EXPECT_THAT(message, HasSubstr("to have 3 channels"));
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(ModelProbeTest, OutputThatDoesNotFitTheTask) {
  auto model = Script("flat", {1},
                      "    return torch.sum(torch.flatten(x, 1), 1) * "
                      "self.weight");
  ASSERT_NE(model, nullptr);
  const absl::Status s =
      ProbeModel(*model, Task(v1::TaskSpec{}), *Data(), torch::kCPU);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("class scores must be float [B, C]"));
}

TEST(ModelProbeTest, ChangesNoState) {
  // Eval mode without gradients: a BatchNorm's running statistics stay.
  auto model = Script("counts", {10, 784},
                      "    if self.training:\n"
                      "        self.seen.add_(1.0)\n"
                      "    return torch.matmul(torch.flatten(x, 1), "
                      "self.weight.t())");
  ASSERT_NE(model, nullptr);
  ASSERT_TRUE(
      ProbeModel(*model, Task(v1::TaskSpec{}), *Data(), torch::kCPU).ok());
  EXPECT_EQ(model->NamedBuffers()[0].tensor.item<float>(), 0.f);
  EXPECT_EQ(model->Parameters()[0].grad().defined(), false);
}

v1::JobSpec Spec(v1::ModelArch arch) {
  v1::JobSpec spec;
  spec.mutable_model()->set_arch(arch);
  return spec;
}

TEST(ModelShapeForTest, BuiltinTakesTheDataShapeAndClasses) {
  absl::StatusOr<ModelShape> shape =
      ModelShapeFor(Spec(v1::MODEL_ARCH_CNN), *Data());
  ASSERT_TRUE(shape.ok()) << shape.status();
  EXPECT_EQ(shape->input_dims, (std::vector<int64_t>{1, 28, 28}));
  EXPECT_EQ(shape->num_classes, 10);

  const EmptyDataset rgb({{ElementType::kFloat32, {3, 32, 32}}},
                         {ElementType::kInt64, {}}, "rgb");
  v1::JobSpec spec = Spec(v1::MODEL_ARCH_MLP);
  spec.mutable_task()->set_num_classes(7);  // The spec's count wins.
  shape = ModelShapeFor(spec, rgb);
  ASSERT_TRUE(shape.ok()) << shape.status();
  EXPECT_EQ(shape->input_dims, (std::vector<int64_t>{3, 32, 32}));
  EXPECT_EQ(shape->num_classes, 7);
}

TEST(ModelShapeForTest, BuiltinRejectsDataItCannotTake) {
  const EmptyDataset tokens({{ElementType::kInt64, {64}}},
                            {ElementType::kInt64, {64}},
                            "train split of t.bin");
  absl::StatusOr<ModelShape> shape =
      ModelShapeFor(Spec(v1::MODEL_ARCH_MLP), tokens);
  EXPECT_EQ(shape.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(shape.status().message()),
              HasSubstr("take one float input per sample; the train split "
                        "of t.bin has 1 of int64 [64]"));

  const EmptyDataset unlabelled({{ElementType::kFloat32, {4}}},
                                {ElementType::kInt64, {}}, "x");
  shape = ModelShapeFor(Spec(v1::MODEL_ARCH_MLP), unlabelled);
  EXPECT_THAT(std::string(shape.status().message()),
              HasSubstr("set task.num_classes"));
}

TEST(ModelShapeForTest, TorchScriptBringsItsOwn) {
  const EmptyDataset tokens({{ElementType::kInt64, {64}}},
                            {ElementType::kInt64, {64}}, "tokens");
  absl::StatusOr<ModelShape> shape =
      ModelShapeFor(Spec(v1::MODEL_ARCH_TORCHSCRIPT), tokens);
  ASSERT_TRUE(shape.ok()) << shape.status();
  EXPECT_EQ(shape->input_dims, ModelShape().input_dims);
}

// A batch of four 3-channel 8x8 images of 10 classes: what the layout
// choice looks at (a channels-last copy of 3 channels differs in memory).
Batch RgbBatch() {
  Batch b;
  torch::manual_seed(3);
  b.inputs = {torch::randn({4, 3, 8, 8})};
  b.targets = torch::tensor({1, 2, 3, 4}, torch::kLong);
  b.sample_ids = {0, 1, 2, 3};
  return b;
}

TEST(ModelProbeTest, AConvolutionGetsItsImagesChannelsLast) {
  auto model = Script("conv", {10, 3, 3, 3},
                      "    return torch.mean(torch.conv2d(x, self.weight), "
                      "[2, 3])");
  ASSERT_NE(model, nullptr);
  const Batch batch = RgbBatch();
  const Task task(v1::TaskSpec{});
  absl::StatusOr<at::Tensor> nchw = BatchLoss(*model, task, batch, torch::kCPU);
  ASSERT_TRUE(nchw.ok()) << nchw.status();
  EXPECT_TRUE(ChooseChannelsLastInputs(*model, task, batch, torch::kCPU));
  EXPECT_TRUE(model->channels_last_inputs());
  EXPECT_TRUE(model->is_training());
  absl::StatusOr<at::Tensor> nhwc = BatchLoss(*model, task, batch, torch::kCPU);
  ASSERT_TRUE(nhwc.ok()) << nhwc.status();
  EXPECT_NEAR(nhwc->item<double>(), nchw->item<double>(), 1e-5);
  // The probe makes the same choice on a job's data (one channel).
  model->SetChannelsLastInputs(false);
  auto grey = Script("grey", {10, 1, 3, 3},
                     "    return torch.mean(torch.conv2d(x, self.weight), "
                     "[2, 3])");
  ASSERT_NE(grey, nullptr);
  ASSERT_TRUE(ProbeModel(*grey, task, *Data(), torch::kCPU).ok());
  EXPECT_TRUE(grey->channels_last_inputs());
}

// Models that read their input's memory as laid out keep NCHW: one fails
// (view), one computes something else (as_strided); and a model without a
// convolution kernel gains nothing from NHWC.
TEST(ModelProbeTest, ModelsThatDependOnTheLayoutKeepNchw) {
  const Batch batch = RgbBatch();
  const Task task(v1::TaskSpec{});
  struct Case {
    const char* name;
    std::vector<int64_t> weight;
    const char* body;
  };
  const Case cases[] = {
      {"view",
       {10, 3, 8, 8},
       "    return torch.matmul(x.view(x.size(0), -1), "
       "self.weight.view(10, -1).t())"},
      {"strided",
       {10, 3, 8, 8},
       "    y = x.as_strided([x.size(0), 192], [192, 1])\n"
       "    return torch.matmul(y, self.weight.view(10, -1).t())"},
      {"flat",
       {10, 192},
       "    return torch.matmul(torch.flatten(x, 1), self.weight.t())"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto model = Script(c.name, c.weight, c.body);
    ASSERT_NE(model, nullptr);
    ASSERT_TRUE(BatchLoss(*model, task, batch, torch::kCPU).ok());
    EXPECT_FALSE(ChooseChannelsLastInputs(*model, task, batch, torch::kCPU));
    EXPECT_FALSE(model->channels_last_inputs());
    EXPECT_TRUE(model->is_training());
    // And still trains as it did.
    EXPECT_TRUE(BatchLoss(*model, task, batch, torch::kCPU).ok());
  }
}

}  // namespace
}  // namespace ringleader
