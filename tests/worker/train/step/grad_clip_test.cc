// Clipping by global norm as torch.nn.utils.clip_grad_norm_ does it.
#include "worker/train/step/grad_clip.h"

#include <torch/torch.h>

#include <cmath>
#include <iostream>
#include <limits>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/torch_reference.h"

namespace ringleader {
namespace {

// A [2, 2] weight with gradient [[3, 0], [0, 4]] and a [1] bias with
// gradient [12]: global norm sqrt(9 + 16 + 144) = 13.
std::vector<at::Tensor> Params() {
  at::Tensor w = torch::zeros({2, 2}).requires_grad_();
  at::Tensor b = torch::zeros({1}).requires_grad_();
  w.mutable_grad() = torch::tensor({3.0f, 0.0f, 0.0f, 4.0f}).reshape({2, 2});
  b.mutable_grad() = torch::tensor({12.0f});
  return {w, b};
}

TEST(GradClipTest, MeasuresWithoutClippingAtZero) {
  std::vector<at::Tensor> p = Params();
  EXPECT_FLOAT_EQ(ClipGradNorm(p, 0), 13.0f);
  EXPECT_FLOAT_EQ(p[1].grad()[0].item<float>(), 12.0f);
}

TEST(GradClipTest, ScalesEveryGradientToTheMaxNorm) {
  std::vector<at::Tensor> p = Params();
  EXPECT_FLOAT_EQ(ClipGradNorm(p, 6.5), 13.0f);  // The norm before.
  EXPECT_NEAR(p[0].grad()[1][1].item<float>(), 2.0f, 1e-6);
  EXPECT_NEAR(p[1].grad()[0].item<float>(), 6.0f, 1e-6);
  EXPECT_NEAR(ClipGradNorm(p, 0), 6.5, 1e-5);
}

TEST(GradClipTest, LeavesGradientsBelowTheMaxNormAlone) {
  std::vector<at::Tensor> p = Params();
  EXPECT_FLOAT_EQ(ClipGradNorm(p, 100), 13.0f);
  EXPECT_EQ(p[1].grad()[0].item<float>(), 12.0f);  // Exactly.
}

TEST(GradClipTest, ANonFiniteNormLeavesTheGradientsAlone) {
  std::vector<at::Tensor> p = Params();
  p[0].mutable_grad()[0][1] = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(std::isinf(ClipGradNorm(p, 1)));
  EXPECT_EQ(p[1].grad()[0].item<float>(), 12.0f);
  p[0].mutable_grad()[0][1] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(ClipGradNorm(p, 1)));
}

TEST(GradClipTest, NoGradientsHaveNormZero) {
  EXPECT_EQ(ClipGradNorm({torch::zeros({2}).requires_grad_()}, 1), 0);
  EXPECT_EQ(ClipGradNorm({}, 1), 0);
}

TEST(GradClipTest, MatchesPythonsClipGradNorm) {
  if (!testing::PythonTorchAvailable()) {
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch (install the "
                    "Debian package python3-torch to run this test)";
  }
  // Values whose norm and coefficient round in float32.
  const std::vector<std::vector<float>> gw = {{0.3f, -1.7f, 2.9f},
                                              {1e-3f, 5.5f, -0.77f}};
  const std::vector<float> gb = {0.123f, -4.56f};
  for (double max_norm : {0.7, 3.3, 1e3}) {
    SCOPED_TRACE(max_norm);
    at::Tensor w = torch::zeros({2, 3}).requires_grad_();
    at::Tensor b = torch::zeros({2}).requires_grad_();
    w.mutable_grad() = torch::tensor({gw[0][0], gw[0][1], gw[0][2], gw[1][0],
                                      gw[1][1], gw[1][2]})
                           .reshape({2, 3});
    b.mutable_grad() = torch::tensor(gb);
    const double norm = ClipGradNorm({w, b}, max_norm);
    absl::StatusOr<nlohmann::json> want = testing::RunTorchReference(
        {{"op", "clip"},
         {"params",
          {std::vector<std::vector<float>>(2, {0, 0, 0}),
           std::vector<float>{0, 0}}},
         {"grads", {gw, gb}},
         {"max_norm", max_norm}});
    ASSERT_TRUE(want.ok()) << want.status();
    EXPECT_EQ(norm, (*want)["norm"].get<double>());
    const auto ww = (*want)["grads"][0].get<std::vector<std::vector<float>>>();
    const auto wb = (*want)["grads"][1].get<std::vector<float>>();
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 3; ++j) {
        EXPECT_EQ(w.grad()[i][j].item<float>(), ww[i][j]) << i << "," << j;
      }
      EXPECT_EQ(b.grad()[i].item<float>(), wb[i]) << i;
    }
  }
}

// The device path (run here on CPU tensors: what it skips is the host
// read) scales exactly as the host path, and returns the same norm.
TEST(GradClipTest, TheDevicePathScalesAsTheHostPath) {
  for (double max_norm : {0.0, 6.5, 100.0}) {
    auto make = [] {
      torch::Tensor w = torch::zeros({2}).requires_grad_();
      w.mutable_grad() = torch::tensor({5.0f, 12.0f});
      return w;
    };
    torch::Tensor host = make(), device = make();
    const double norm = ClipGradNorm({host}, max_norm);
    const at::Tensor total = ClipGradNormOnDevice({device}, max_norm);
    ASSERT_TRUE(total.defined());
    EXPECT_EQ(total.item<double>(), norm) << max_norm;
    EXPECT_TRUE(torch::equal(host.grad(), device.grad())) << max_norm;
  }
  EXPECT_FALSE(ClipGradNormOnDevice({}, 1).defined());
}

}  // namespace
}  // namespace ringleader
