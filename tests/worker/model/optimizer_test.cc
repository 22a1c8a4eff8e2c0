#include "worker/model/optimizer.h"

#include <torch/torch.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "ringleader/v1/job.pb.h"
#include "tests/testing/torch_reference.h"

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

TEST(BuildOptimizerTest, AdamWTakesTheSpecsBetasEpsAndDecay) {
  Param p;
  v1::OptimizerSpec spec = Spec(v1::OPTIMIZER_KIND_ADAMW, 0.01);
  auto opt = BuildOptimizer(spec, {p.value});
  ASSERT_TRUE(opt.ok()) << opt.status();
  auto* adamw = dynamic_cast<torch::optim::AdamW*>(opt->get());
  ASSERT_NE(adamw, nullptr);
  auto& options = static_cast<torch::optim::AdamWOptions&>(
      (*opt)->param_groups()[0].options());
  // The spec's 0, not AdamW's own default of 0.01.
  EXPECT_DOUBLE_EQ(options.weight_decay(), 0);
  EXPECT_DOUBLE_EQ(std::get<0>(options.betas()), 0.9);
  EXPECT_DOUBLE_EQ(std::get<1>(options.betas()), 0.999);
  EXPECT_DOUBLE_EQ(options.eps(), 1e-8);

  spec.set_beta1(0.8);
  spec.set_beta2(0.95);
  spec.set_eps(1e-6);
  spec.set_weight_decay(0.1);
  opt = BuildOptimizer(spec, {p.value});
  ASSERT_TRUE(opt.ok()) << opt.status();
  auto& set = static_cast<torch::optim::AdamWOptions&>(
      (*opt)->param_groups()[0].options());
  EXPECT_DOUBLE_EQ(std::get<0>(set.betas()), 0.8);
  EXPECT_DOUBLE_EQ(std::get<1>(set.betas()), 0.95);
  EXPECT_DOUBLE_EQ(set.eps(), 1e-6);
  EXPECT_DOUBLE_EQ(set.weight_decay(), 0.1);
  // Decoupled decay: with a zero gradient, p *= 1 - lr * wd and Adam's own
  // update is 0 (m = 0).
  p.Step(**opt, {0.0f, 0.0f});
  EXPECT_FLOAT_EQ(p.Values()[0], 1.0f * (1 - 0.01f * 0.1f));
  EXPECT_FLOAT_EQ(p.Values()[1], 2.0f * (1 - 0.01f * 0.1f));
}

TEST(BuildOptimizerTest, SgdNesterov) {
  Param p;
  v1::OptimizerSpec spec = Spec(v1::OPTIMIZER_KIND_SGD, 0.1, 0.9);
  spec.set_nesterov(true);
  auto opt = BuildOptimizer(spec, {p.value});
  ASSERT_TRUE(opt.ok()) << opt.status();
  EXPECT_TRUE(static_cast<torch::optim::SGDOptions&>(
                  (*opt)->param_groups()[0].options())
                  .nesterov());
  // buf = g; step g + 0.9 buf.
  p.Step(**opt, {1.0f, 0.0f});
  EXPECT_FLOAT_EQ(p.Values()[0], 1.0f - 0.1f * 1.9f);
  // buf = 0.9 + 1 = 1.9; step 1 + 0.9 * 1.9.
  p.Step(**opt, {1.0f, 0.0f});
  EXPECT_NEAR(p.Values()[0], 1.0f - 0.1f * 1.9f - 0.1f * (1 + 0.9f * 1.9f),
              1e-6);
}

TEST(BuildOptimizerTest, NoDecayGroupsHoldTheTensorsBelowTwoDimensions) {
  const at::Tensor w = torch::ones({3, 2}).requires_grad_();
  const at::Tensor b = torch::ones({3}).requires_grad_();
  const at::Tensor w2 = torch::ones({2, 2, 2}).requires_grad_();
  const at::Tensor scale = torch::ones({}).requires_grad_();
  v1::OptimizerSpec spec = Spec(v1::OPTIMIZER_KIND_ADAMW, 0.01, 0, 0.1);
  spec.set_no_decay_bias_and_norm(true);
  auto opt = BuildOptimizer(spec, {w, b, w2, scale});
  ASSERT_TRUE(opt.ok()) << opt.status();
  const auto& groups = (*opt)->param_groups();
  ASSERT_EQ(groups.size(), 2u);
  ASSERT_EQ(groups[0].params().size(), 2u);
  EXPECT_TRUE(groups[0].params()[0].is_same(w));
  EXPECT_TRUE(groups[0].params()[1].is_same(w2));
  ASSERT_EQ(groups[1].params().size(), 2u);
  EXPECT_TRUE(groups[1].params()[0].is_same(b));
  EXPECT_TRUE(groups[1].params()[1].is_same(scale));
  EXPECT_DOUBLE_EQ(
      static_cast<const torch::optim::AdamWOptions&>(groups[0].options())
          .weight_decay(),
      0.1);
  EXPECT_DOUBLE_EQ(
      static_cast<const torch::optim::AdamWOptions&>(groups[1].options())
          .weight_decay(),
      0);
  // A model with nothing to leave out gets one group.
  opt = BuildOptimizer(spec, {w, w2});
  ASSERT_TRUE(opt.ok()) << opt.status();
  EXPECT_EQ((*opt)->param_groups().size(), 1u);
  // Without the setting, one group of everything.
  spec.set_no_decay_bias_and_norm(false);
  opt = BuildOptimizer(spec, {w, b, w2, scale});
  ASSERT_TRUE(opt.ok()) << opt.status();
  ASSERT_EQ((*opt)->param_groups().size(), 1u);
  EXPECT_EQ((*opt)->param_groups()[0].params().size(), 4u);
}

TEST(BuildOptimizerTest, SetLearningRateSetsEveryGroup) {
  const at::Tensor w = torch::ones({3, 2}).requires_grad_();
  const at::Tensor b = torch::ones({3}).requires_grad_();
  v1::OptimizerSpec spec = Spec(v1::OPTIMIZER_KIND_SGD, 0.1, 0.9, 0.01);
  spec.set_no_decay_bias_and_norm(true);
  auto opt = BuildOptimizer(spec, {w, b});
  ASSERT_TRUE(opt.ok()) << opt.status();
  SetLearningRate(**opt, 0.025);
  ASSERT_EQ((*opt)->param_groups().size(), 2u);
  for (const auto& g : (*opt)->param_groups()) {
    EXPECT_DOUBLE_EQ(g.options().get_lr(), 0.025);
  }
}

// Steps our optimizer and Python's torch.optim alike: a [2, 3] weight and a
// [3] bias, five steps with their own gradients and learning rates.
void ExpectMatchesPythonTorch(const v1::OptimizerSpec& spec,
                              const std::string& kind,
                              const nlohmann::json& options) {
  if (!testing::PythonTorchAvailable()) {
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch (install the "
                    "Debian package python3-torch to run this test)";
  }
  const std::vector<std::vector<float>> w0 = {{0.5f, -1.0f, 2.0f},
                                              {1.5f, 0.25f, -0.75f}};
  const std::vector<float> b0 = {0.1f, -0.2f, 0.3f};
  const std::vector<double> lrs = {0.01, 0.02, 0.05, 0.03, 0.001};
  nlohmann::json grads = nlohmann::json::array();
  at::Tensor w = torch::tensor({0.5f, -1.0f, 2.0f, 1.5f, 0.25f, -0.75f})
                     .reshape({2, 3})
                     .requires_grad_();
  at::Tensor b = torch::tensor(b0).requires_grad_();
  auto opt = BuildOptimizer(spec, {w, b});
  ASSERT_TRUE(opt.ok()) << opt.status();
  for (size_t k = 0; k < lrs.size(); ++k) {
    // Gradients of both signs and scales, different each step.
    const float f = static_cast<float>(k) + 1;
    const std::vector<std::vector<float>> gw = {{f, -0.5f * f, 0.01f},
                                                {-2.0f, 3.0f / f, 0.0f}};
    const std::vector<float> gb = {0.3f * f, -0.7f, 1e-3f * f};
    grads.push_back({gw, gb});
    w.mutable_grad() = torch::tensor({gw[0][0], gw[0][1], gw[0][2], gw[1][0],
                                      gw[1][1], gw[1][2]})
                           .reshape({2, 3});
    b.mutable_grad() = torch::tensor(gb);
    SetLearningRate(**opt, lrs[k]);
    (*opt)->step();
  }
  absl::StatusOr<nlohmann::json> want =
      testing::RunTorchReference({{"op", "optimizer"},
                                  {"kind", kind},
                                  {"options", options},
                                  {"no_decay", spec.no_decay_bias_and_norm()},
                                  {"params", {w0, b0}},
                                  {"lrs", lrs},
                                  {"grads", grads}});
  ASSERT_TRUE(want.ok()) << want.status();
  const auto pw = (*want)["params"][0].get<std::vector<std::vector<float>>>();
  const auto pb = (*want)["params"][1].get<std::vector<float>>();
  double diff = 0;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      diff =
          std::max<double>(diff, std::fabs(w[i][j].item<float>() - pw[i][j]));
    }
  }
  for (int j = 0; j < 3; ++j) {
    diff = std::max<double>(diff, std::fabs(b[j].item<float>() - pb[j]));
  }
  std::cout << kind << " vs Python torch.optim: max |diff| = " << diff << "\n";
  EXPECT_LE(diff, 1e-6);
}

TEST(BuildOptimizerTest, AdamWMatchesPythonTorch) {
  v1::OptimizerSpec spec = Spec(v1::OPTIMIZER_KIND_ADAMW, 0.01, 0, 0.1);
  spec.set_beta1(0.8);
  spec.set_beta2(0.95);
  spec.set_eps(1e-6);
  spec.set_no_decay_bias_and_norm(true);
  ExpectMatchesPythonTorch(spec, "adamw",
                           {{"lr", 0.01},
                            {"betas", {0.8, 0.95}},
                            {"eps", 1e-6},
                            {"weight_decay", 0.1}});
}

TEST(BuildOptimizerTest, AdamWithL2DecayMatchesPythonTorch) {
  v1::OptimizerSpec spec = Spec(v1::OPTIMIZER_KIND_ADAM, 0.01, 0, 0.05);
  spec.set_beta2(0.99);
  ExpectMatchesPythonTorch(
      spec, "adam",
      {{"lr", 0.01}, {"betas", {0.9, 0.99}}, {"weight_decay", 0.05}});
}

TEST(BuildOptimizerTest, SgdNesterovMatchesPythonTorch) {
  v1::OptimizerSpec spec = Spec(v1::OPTIMIZER_KIND_SGD, 0.1, 0.9, 0.01);
  spec.set_nesterov(true);
  spec.set_no_decay_bias_and_norm(true);
  ExpectMatchesPythonTorch(spec, "sgd",
                           {{"lr", 0.1},
                            {"momentum", 0.9},
                            {"nesterov", true},
                            {"weight_decay", 0.01}});
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
      {Spec(v1::OPTIMIZER_KIND_ADAMW, 0.1, 0.5), "only valid with SGD"},
  };
  auto with = [](v1::OptimizerKind kind, auto set) {
    v1::OptimizerSpec spec = Spec(kind, 0.1);
    set(spec);
    return spec;
  };
  using S = v1::OptimizerSpec;
  const std::vector<Case> more = {
      {with(v1::OPTIMIZER_KIND_SGD, [](S& s) { s.set_nesterov(true); }),
       "nesterov needs SGD with momentum > 0"},
      {with(v1::OPTIMIZER_KIND_ADAM, [](S& s) { s.set_nesterov(true); }),
       "nesterov needs SGD"},
      {with(v1::OPTIMIZER_KIND_SGD, [](S& s) { s.set_beta1(0.9); }),
       "beta1 must be in [0, 1) with Adam"},
      {with(v1::OPTIMIZER_KIND_ADAMW, [](S& s) { s.set_beta2(1.0); }),
       "beta2 must be in [0, 1)"},
      {with(v1::OPTIMIZER_KIND_ADAM, [nan](S& s) { s.set_beta1(nan); }),
       "beta1"},
      {with(v1::OPTIMIZER_KIND_ADAMW, [](S& s) { s.set_eps(0); }),
       "eps must be > 0"},
      {with(v1::OPTIMIZER_KIND_SGD, [](S& s) { s.set_eps(1e-8); }),
       "eps must be > 0 and finite with Adam"},
  };
  for (const Case& c : more) {
    absl::Status s = BuildOptimizer(c.spec, {w}).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument)
        << c.spec.ShortDebugString();
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.message))
        << c.spec.ShortDebugString();
  }
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
