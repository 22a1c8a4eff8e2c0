// The state digest the tests compare ranks with: equal states in different
// memory (another process's, another replica's) give equal digests, and a
// change anywhere in the parameters or the optimizer's state shows.
#include "worker/train/checkpoint/state_digest.h"

#include <torch/torch.h>

#include <memory>

#include "gtest/gtest.h"
#include "worker/model/builtin_models.h"
#include "worker/model/optimizer.h"

namespace ringleader {
namespace {

struct Replica {
  std::unique_ptr<Model> model;
  std::unique_ptr<torch::optim::Optimizer> opt;
  Replica(uint64_t seed, v1::OptimizerKind kind) {
    model = MakeMlp({8}, seed).value();
    v1::OptimizerSpec s;
    s.set_kind(kind);
    s.set_learning_rate(0.01);
    if (kind == v1::OPTIMIZER_KIND_SGD) s.set_momentum(0.9);
    opt = BuildOptimizer(s, model->Parameters()).value();
  }
  void Train(int steps) {
    for (int step = 0; step < steps; ++step) {
      int i = 0;
      for (const at::Tensor& p : model->Parameters()) {
        at::Tensor g =
            torch::arange(p.numel(), torch::kFloat).reshape(p.sizes());
        p.mutable_grad() = torch::cos(g * 0.21 + step + i++);
      }
      opt->step();
    }
  }
  std::string Digest() const { return StateDigest(*model, *opt); }
};

class StateDigestTest : public ::testing::TestWithParam<v1::OptimizerKind> {};

TEST_P(StateDigestTest, EqualStatesEqualDigestsAndAnyChangeShows) {
  Replica a(3, GetParam()), b(3, GetParam());
  EXPECT_EQ(a.Digest(), b.Digest());
  EXPECT_EQ(a.Digest().size(), 16u);
  a.Train(2);
  b.Train(2);
  EXPECT_EQ(a.Digest(), b.Digest());
  Replica c(3, GetParam());
  c.Train(3);
  EXPECT_NE(a.Digest(), c.Digest());
  // One bit of the optimizer's state, parameters untouched.
  const std::string before = b.Digest();
  const at::Tensor first = b.model->Parameters().front();
  auto& state = b.opt->state();
  auto it = state.find(c10::guts::to_string(first.unsafeGetTensorImpl()));
  ASSERT_NE(it, state.end());
  torch::NoGradGuard no_grad;
  if (auto* sgd =
          dynamic_cast<torch::optim::SGDParamState*>(it->second.get())) {
    sgd->momentum_buffer().view(-1)[0].add_(1e-3);
  } else if (auto* w = dynamic_cast<torch::optim::AdamWParamState*>(
                 it->second.get())) {
    w->exp_avg().view(-1)[0].add_(1e-3);
  } else {
    auto& adam = dynamic_cast<torch::optim::AdamParamState&>(*it->second);
    adam.exp_avg().view(-1)[0].add_(1e-3);
  }
  EXPECT_NE(b.Digest(), before);
  // And one parameter element.
  const std::string trained = a.Digest();
  a.model->Parameters().back().view(-1)[0].add_(1e-3);
  EXPECT_NE(a.Digest(), trained);
}

INSTANTIATE_TEST_SUITE_P(Optimizers, StateDigestTest,
                         ::testing::Values(v1::OPTIMIZER_KIND_SGD,
                                           v1::OPTIMIZER_KIND_ADAM,
                                           v1::OPTIMIZER_KIND_ADAMW));

}  // namespace
}  // namespace ringleader
