#include "worker/model/autocast.h"

#include <ATen/autocast_mode.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "tests/testing/process.h"
#include "worker/model/model.h"
#include "worker/model/torchscript_model.h"

namespace ringleader {
namespace {

TEST(AutocastScopeTest, MatmulsRunInBf16AndTheScopeRestoresTheState) {
  torch::manual_seed(1);
  at::Tensor x = torch::randn({4, 8});
  at::Tensor w = torch::randn({8, 8});
  ASSERT_FALSE(at::autocast::is_cpu_enabled());
  {
    AutocastScope scope(c10::DeviceType::CPU, /*enabled=*/true);
    EXPECT_EQ(torch::matmul(x, w).scalar_type(), at::kBFloat16);
    // A reduction-heavy op stays float32 by autocast's rules.
    EXPECT_EQ(torch::log_softmax(x, 1).scalar_type(), at::kFloat);
  }
  EXPECT_FALSE(at::autocast::is_cpu_enabled());
  EXPECT_EQ(torch::matmul(x, w).scalar_type(), at::kFloat);
  AutocastScope off(c10::DeviceType::CPU, /*enabled=*/false);
  EXPECT_FALSE(at::autocast::is_cpu_enabled());
}

// LibTorch 1.13's CPU autocast lets a bf16 activation reach layer_norm with
// float32 weights, which its CPU kernel rejects; the rule registered by
// worker/model/autocast.cc runs it in float32, as CUDA autocast does.
TEST(AutocastScopeTest, LayerNormAndGroupNormAfterABf16MatmulRunInFloat32) {
  torch::manual_seed(2);
  at::Tensor x = torch::randn({4, 8});
  at::Tensor w = torch::randn({8, 8});
  at::Tensor gamma = torch::ones({8}), beta = torch::zeros({8});
  AutocastScope scope(c10::DeviceType::CPU, /*enabled=*/true);
  at::Tensor h = torch::matmul(x, w);
  ASSERT_EQ(h.scalar_type(), at::kBFloat16);
  at::Tensor ln = torch::layer_norm(h, {8}, gamma, beta);
  EXPECT_EQ(ln.scalar_type(), at::kFloat);
  at::Tensor expected = torch::layer_norm(h.to(at::kFloat), {8}, gamma, beta);
  EXPECT_TRUE(torch::equal(ln, expected));
  at::Tensor gn = torch::group_norm(h.view({4, 8, 1}), 2, gamma, beta);
  EXPECT_EQ(gn.scalar_type(), at::kFloat);
}

// A TorchScript block as a transformer has it: linear, GELU, layer norm.
std::string SaveBlock() {
  torch::jit::Module m("Block");
  m.register_attribute("training", c10::BoolType::get(), true);
  m.register_parameter("weight",
                       (torch::randn({16, 16}) * 0.2).requires_grad_(), false);
  m.register_parameter("ln_weight", torch::ones({16}).requires_grad_(), false);
  m.register_parameter("ln_bias", torch::zeros({16}).requires_grad_(), false);
  m.define(
      "def forward(self, x):\n"
      "    h = torch.gelu(torch.matmul(x, self.weight.t()))\n"
      "    return torch.layer_norm(h, [16], self.ln_weight, self.ln_bias)\n");
  const std::string path = testing::TestTempDir() + "/autocast_block.pt";
  m.save(path);
  return path;
}

TEST(ModelBf16AutocastTest, ForwardIsCloseToFloat32AndGradientsStayFloat32) {
  torch::manual_seed(3);
  const std::string path = SaveBlock();
  absl::StatusOr<std::unique_ptr<Model>> fp32 = LoadTorchScriptModel(path);
  absl::StatusOr<std::unique_ptr<Model>> bf16 = LoadTorchScriptModel(path);
  ASSERT_TRUE(fp32.ok() && bf16.ok()) << fp32.status() << bf16.status();
  (*bf16)->SetBf16Autocast(true);
  at::Tensor x = torch::randn({8, 16});
  absl::StatusOr<at::Tensor> a = (*fp32)->Forward(x);
  absl::StatusOr<at::Tensor> b = (*bf16)->Forward(x);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  // The task gets float32, computed through a bf16 matmul: close, not equal.
  EXPECT_EQ(b->scalar_type(), at::kFloat);
  EXPECT_FALSE(torch::equal(*a, *b));
  EXPECT_LT((*a - *b).abs().max().item<double>(), 0.1);
  b->sum().backward();
  for (const at::Tensor& p : (*bf16)->Parameters()) {
    ASSERT_TRUE(p.grad().defined());
    EXPECT_EQ(p.scalar_type(), at::kFloat);
    EXPECT_EQ(p.grad().scalar_type(), at::kFloat);
  }
  EXPECT_FALSE(at::autocast::is_cpu_enabled());
}

}  // namespace
}  // namespace ringleader
