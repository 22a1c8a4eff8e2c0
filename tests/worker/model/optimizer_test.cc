#include "worker/model/optimizer.h"

#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader {
namespace {

using ::testing::HasSubstr;

v1::OptimizerSpec Spec(v1::OptimizerKind kind, double lr, double momentum = 0,
                       double weight_decay = 0) {
  v1::OptimizerSpec spec;
  spec.set_kind(kind);
  spec.set_learning_rate(lr);
  spec.set_momentum(momentum);
  spec.set_weight_decay(weight_decay);
  return spec;
}

// A parameter [1, 2] whose gradient is set to `grad` before each step.
struct Param {
  at::Tensor value = torch::tensor({1.0f, 2.0f}).requires_grad_();
  void Step(torch::optim::Optimizer& opt, std::vector<float> grad) {
    value.mutable_grad() = torch::tensor(grad);
    opt.step();
  }
  std::vector<float> Values() const {
    return {value[0].item<float>(), value[1].item<float>()};
  }
};

TEST(BuildOptimizerTest, SgdStep) {
  Param p;
  auto opt = BuildOptimizer(Spec(v1::OPTIMIZER_KIND_SGD, 0.1), {p.value});
  ASSERT_TRUE(opt.ok()) << opt.status();
  p.Step(**opt, {0.5f, -1.0f});
  EXPECT_FLOAT_EQ(p.Values()[0], 1.0f - 0.05f);
  EXPECT_FLOAT_EQ(p.Values()[1], 2.0f + 0.1f);
}

TEST(BuildOptimizerTest, SgdMomentumAndWeightDecay) {
  Param p;
  auto opt =
      BuildOptimizer(Spec(v1::OPTIMIZER_KIND_SGD, 0.1, 0.9, 0.01), {p.value});
  ASSERT_TRUE(opt.ok()) << opt.status();
  auto& options = static_cast<torch::optim::SGDOptions&>(
      (*opt)->param_groups()[0].options());
  EXPECT_DOUBLE_EQ(options.lr(), 0.1);
  EXPECT_DOUBLE_EQ(options.momentum(), 0.9);
  EXPECT_DOUBLE_EQ(options.weight_decay(), 0.01);
  EXPECT_DOUBLE_EQ(options.dampening(), 0);
  EXPECT_FALSE(options.nesterov());
  // g' = g + wd * p; buf = g' (first step), then buf = 0.9 buf + g'.
  p.Step(**opt, {1.0f, 0.0f});
  const float p1 = 1.0f - 0.1f * (1.0f + 0.01f * 1.0f);
  EXPECT_FLOAT_EQ(p.Values()[0], p1);
  p.Step(**opt, {1.0f, 0.0f});
  const float buf = 0.9f * (1.0f + 0.01f) + (1.0f + 0.01f * p1);
  EXPECT_NEAR(p.Values()[0], p1 - 0.1f * buf, 1e-6);
}

TEST(BuildOptimizerTest, AdamStep) {
  Param p;
  auto opt =
      BuildOptimizer(Spec(v1::OPTIMIZER_KIND_ADAM, 0.01, 0, 0.001), {p.value});
  ASSERT_TRUE(opt.ok()) << opt.status();
  auto& options = static_cast<torch::optim::AdamOptions&>(
      (*opt)->param_groups()[0].options());
  EXPECT_DOUBLE_EQ(options.lr(), 0.01);
  EXPECT_DOUBLE_EQ(options.weight_decay(), 0.001);
  EXPECT_DOUBLE_EQ(std::get<0>(options.betas()), 0.9);
  EXPECT_DOUBLE_EQ(std::get<1>(options.betas()), 0.999);
  EXPECT_DOUBLE_EQ(options.eps(), 1e-8);
  EXPECT_FALSE(options.amsgrad());
  // Adam's first step moves each coordinate by about lr against the
  // gradient's sign, whatever its size.
  p.Step(**opt, {3.0f, -0.2f});
  EXPECT_NEAR(p.Values()[0], 1.0f - 0.01f, 1e-5);
  EXPECT_NEAR(p.Values()[1], 2.0f + 0.01f, 1e-5);
}

TEST(BuildOptimizerTest, RejectsBadSpecs) {
  const at::Tensor w = torch::ones({2}).requires_grad_();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    v1::OptimizerSpec spec;
    std::string message;
  };
  const std::vector<Case> cases = {
      {Spec(v1::OPTIMIZER_KIND_UNSPECIFIED, 0.1), "not a supported optimizer"},
      {Spec(static_cast<v1::OptimizerKind>(9), 0.1), "not a supported"},
      {Spec(v1::OPTIMIZER_KIND_SGD, 0), "learning_rate must be > 0"},
      {Spec(v1::OPTIMIZER_KIND_SGD, -1), "learning_rate must be > 0"},
      {Spec(v1::OPTIMIZER_KIND_SGD, nan), "learning_rate"},
      {Spec(v1::OPTIMIZER_KIND_ADAM, inf), "learning_rate"},
      {Spec(v1::OPTIMIZER_KIND_SGD, 0.1, 1.0), "momentum must be in [0, 1)"},
      {Spec(v1::OPTIMIZER_KIND_SGD, 0.1, -0.1), "momentum"},
      {Spec(v1::OPTIMIZER_KIND_SGD, 0.1, nan), "momentum"},
      {Spec(v1::OPTIMIZER_KIND_ADAM, 0.1, 0.5), "only valid with SGD"},
      {Spec(v1::OPTIMIZER_KIND_SGD, 0.1, 0, -1), "weight_decay must be >= 0"},
      {Spec(v1::OPTIMIZER_KIND_ADAM, 0.1, 0, nan), "weight_decay"},
  };
  for (const Case& c : cases) {
    absl::Status s = BuildOptimizer(c.spec, {w}).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument)
        << c.spec.ShortDebugString();
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.message))
        << c.spec.ShortDebugString();
  }
  EXPECT_THAT(std::string(BuildOptimizer(Spec(v1::OPTIMIZER_KIND_SGD, 0.1), {})
                              .status()
                              .message()),
              HasSubstr("no parameters"));
  EXPECT_THAT(std::string(BuildOptimizer(Spec(v1::OPTIMIZER_KIND_SGD, 0.1),
                                         {w, at::Tensor()})
                              .status()
                              .message()),
              HasSubstr("parameter 1 is undefined"));
}

}  // namespace
}  // namespace ringleader
