// A resumed optimizer steps exactly as the uninterrupted one: the
// checkpoint restores AdamW's moments and step counts per parameter, and the
// param groups (the no-decay group's weight_decay 0, betas, eps) are built
// again from the job's spec, which every generation of a job shares.
// LibTorch 1.13's Optimizer::load restores state only, not the groups'
// options (Python's load_state_dict restores both), so a job resumed with
// another spec trains with the new settings; the learning rate is set from
// the schedule before every step anyway. The schedule needs no state: its
// position is the checkpoint's step.
#include "worker/train/checkpoint/checkpoint.h"

#include <torch/torch.h>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/model/builtin_models.h"
#include "worker/model/optimizer.h"

namespace ringleader {
namespace {

using ::testing::HasSubstr;

v1::OptimizerSpec AdamW() {
  v1::OptimizerSpec s;
  s.set_kind(v1::OPTIMIZER_KIND_ADAMW);
  s.set_learning_rate(0.01);
  s.set_beta1(0.8);
  s.set_beta2(0.95);
  s.set_eps(1e-6);
  s.set_weight_decay(0.1);
  s.set_no_decay_bias_and_norm(true);
  return s;
}

// Gradients that depend on the step, the same for every replica.
void SetGrads(const Model& model, int step) {
  int i = 0;
  for (const at::Tensor& p : model.Parameters()) {
    at::Tensor g = torch::arange(p.numel(), torch::kFloat).reshape(p.sizes());
    p.mutable_grad() = torch::sin(g * 0.37 + step + i++);
  }
}

struct Replica {
  std::unique_ptr<Model> model;
  std::unique_ptr<torch::optim::Optimizer> opt;
  explicit Replica(const v1::OptimizerSpec& spec, uint64_t seed) {
    model = MakeMlp({8}, seed).value();
    opt = BuildOptimizer(spec, model->Parameters()).value();
  }
  void Step(int step, double lr) {
    SetGrads(*model, step);
    SetLearningRate(*opt, lr);
    opt->step();
  }
};

TEST(CheckpointTest, RestoresParamGroupSettingsAndAdamWState) {
  const std::string path = absl::StrCat(::testing::TempDir(), "/adamw.ckpt");
  Replica trained(AdamW(), 1);
  for (int step = 0; step < 3; ++step) trained.Step(step, 0.01 * (step + 1));
  ASSERT_TRUE(SaveCheckpoint(path, *trained.model, *trained.opt, {0, 3}).ok());

  // Another initialization, the same spec: what a new generation builds.
  Replica resumed(AdamW(), 2);
  absl::StatusOr<CheckpointPosition> pos =
      LoadCheckpoint(path, *resumed.model, resumed.opt.get());
  ASSERT_TRUE(pos.ok()) << pos.status();
  EXPECT_EQ(pos->step, 3);

  const auto& groups = resumed.opt->param_groups();
  ASSERT_EQ(groups.size(), 2u);
  for (size_t g = 0; g < groups.size(); ++g) {
    SCOPED_TRACE(g);
    const auto& o =
        static_cast<const torch::optim::AdamWOptions&>(groups[g].options());
    EXPECT_DOUBLE_EQ(std::get<0>(o.betas()), 0.8);
    EXPECT_DOUBLE_EQ(std::get<1>(o.betas()), 0.95);
    EXPECT_DOUBLE_EQ(o.eps(), 1e-6);
    EXPECT_DOUBLE_EQ(o.weight_decay(), g == 0 ? 0.1 : 0.0);
    ASSERT_EQ(groups[g].params().size(),
              trained.opt->param_groups()[g].params().size());
    for (size_t i = 0; i < groups[g].params().size(); ++i) {
      const auto* a =
          trained.opt->state()
              .at(c10::guts::to_string(trained.opt->param_groups()[g]
                                           .params()[i]
                                           .unsafeGetTensorImpl()))
              .get();
      const auto* b = resumed.opt->state()
                          .at(c10::guts::to_string(
                              groups[g].params()[i].unsafeGetTensorImpl()))
                          .get();
      const auto& sa = static_cast<const torch::optim::AdamWParamState&>(*a);
      const auto& sb = static_cast<const torch::optim::AdamWParamState&>(*b);
      EXPECT_EQ(sb.step(), 3);
      EXPECT_TRUE(torch::equal(sa.exp_avg(), sb.exp_avg()));
      EXPECT_TRUE(torch::equal(sa.exp_avg_sq(), sb.exp_avg_sq()));
    }
  }
  // From here both step alike, to the last bit.
  for (int step = 3; step < 5; ++step) {
    trained.Step(step, 0.02);
    resumed.Step(step, 0.02);
  }
  const std::vector<at::Tensor> a = trained.model->Parameters();
  const std::vector<at::Tensor> b = resumed.model->Parameters();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(torch::equal(a[i], b[i])) << i;
  }
}

TEST(CheckpointTest, TheSpecsSettingsApplyAfterLoading) {
  const std::string path = absl::StrCat(::testing::TempDir(), "/spec.ckpt");
  Replica trained(AdamW(), 1);
  trained.Step(0, 0.01);
  ASSERT_TRUE(SaveCheckpoint(path, *trained.model, *trained.opt, {0, 1}).ok());
  v1::OptimizerSpec other = AdamW();
  other.set_beta1(0.5);
  other.set_eps(1e-3);
  other.set_weight_decay(0.2);
  Replica resumed(other, 2);
  ASSERT_TRUE(LoadCheckpoint(path, *resumed.model, resumed.opt.get()).ok());
  const auto& o = static_cast<const torch::optim::AdamWOptions&>(
      resumed.opt->param_groups()[0].options());
  EXPECT_DOUBLE_EQ(std::get<0>(o.betas()), 0.5);
  EXPECT_DOUBLE_EQ(o.eps(), 1e-3);
  EXPECT_DOUBLE_EQ(o.weight_decay(), 0.2);
}

TEST(CheckpointTest, OtherParamGroupsDoNotFit) {
  // Turning the no-decay group on or off between runs changes the groups:
  // the checkpoint does not fit, as torch's load_state_dict refuses it.
  const std::string path = absl::StrCat(::testing::TempDir(), "/groups.ckpt");
  Replica two(AdamW(), 1);
  two.Step(0, 0.01);
  ASSERT_TRUE(SaveCheckpoint(path, *two.model, *two.opt, {0, 1}).ok());
  v1::OptimizerSpec one_group = AdamW();
  one_group.set_no_decay_bias_and_norm(false);
  Replica one(one_group, 1);
  absl::StatusOr<CheckpointPosition> pos =
      LoadCheckpoint(path, *one.model, one.opt.get());
  EXPECT_EQ(pos.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(pos.status().message()),
              HasSubstr("different number of parameter groups"));
}

}  // namespace
}  // namespace ringleader
