// A checkpoint written from a snapshot holds the state of the moment it was
// taken, bit for bit, however far training went on before the write: the
// snapshot is a deep copy of parameters and optimizer state. Resuming from
// it trains exactly as resuming from a file the training thread wrote at
// that moment.
#include "worker/train/checkpoint/checkpoint_snapshot.h"

#include <torch/torch.h>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "worker/model/builtin_models.h"
#include "worker/model/optimizer.h"

namespace ringleader {
namespace {

v1::OptimizerSpec Spec(v1::OptimizerKind kind) {
  v1::OptimizerSpec s;
  s.set_kind(kind);
  s.set_learning_rate(0.01);
  // SGD's momentum buffers; Adam's and AdamW's moments.
  if (kind == v1::OPTIMIZER_KIND_SGD) s.set_momentum(0.9);
  s.set_weight_decay(0.1);
  s.set_no_decay_bias_and_norm(kind == v1::OPTIMIZER_KIND_ADAMW);
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
  Replica(const v1::OptimizerSpec& spec, uint64_t seed) {
    model = MakeMlp({8}, seed).value();
    opt = BuildOptimizer(spec, model->Parameters()).value();
  }
  void Step(int step) {
    SetGrads(*model, step);
    SetLearningRate(*opt, 0.01 * (step + 1));
    opt->step();
  }
  std::vector<at::Tensor> ParameterCopies() const {
    std::vector<at::Tensor> out;
    for (const at::Tensor& p : model->Parameters()) out.push_back(p.clone());
    return out;
  }
};

class CheckpointSnapshotTest
    : public ::testing::TestWithParam<v1::OptimizerKind> {};

TEST_P(CheckpointSnapshotTest, LaterStepsDoNotChangeWhatIsWritten) {
  const std::string dir = ::testing::TempDir();
  const std::string from_snapshot =
      absl::StrCat(dir, "/snapshot-", GetParam(), ".ckpt");
  const std::string from_live =
      absl::StrCat(dir, "/live-", GetParam(), ".ckpt");
  Replica trained(Spec(GetParam()), 1);
  for (int step = 0; step < 3; ++step) trained.Step(step);
  const std::vector<at::Tensor> before = trained.ParameterCopies();
  absl::StatusOr<CheckpointSnapshot> snap =
      CheckpointSnapshot::Take(*trained.model, *trained.opt, {0, 3});
  ASSERT_TRUE(snap.ok()) << snap.status();
  EXPECT_GT(snap->bytes(), 0);
  // What the training thread would have written at the same moment.
  ASSERT_TRUE(
      SaveCheckpoint(from_live, *trained.model, *trained.opt, {0, 3}).ok());
  // Training goes on, in place, before the snapshot is written.
  for (int step = 3; step < 5; ++step) trained.Step(step);
  ASSERT_FALSE(torch::equal(before[0], trained.model->Parameters()[0]));
  ASSERT_TRUE(SaveCheckpoint(from_snapshot, *snap).ok());

  Replica a(Spec(GetParam()), 2);
  Replica b(Spec(GetParam()), 3);
  absl::StatusOr<CheckpointPosition> pa =
      LoadCheckpoint(from_snapshot, *a.model, a.opt.get());
  ASSERT_TRUE(pa.ok()) << pa.status();
  ASSERT_TRUE(LoadCheckpoint(from_live, *b.model, b.opt.get()).ok());
  EXPECT_EQ(pa->epoch, 0);
  EXPECT_EQ(pa->step, 3);
  // The parameters of step 3, bit for bit.
  const std::vector<at::Tensor> loaded = a.model->Parameters();
  ASSERT_EQ(loaded.size(), before.size());
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_TRUE(torch::equal(loaded[i], before[i])) << i;
  }
  // And the optimizer state of step 3: both resumed replicas step alike to
  // the last bit, as the uninterrupted one did from step 3.
  Replica reference(Spec(GetParam()), 1);
  for (int step = 0; step < 5; ++step) reference.Step(step);
  for (int step = 3; step < 5; ++step) {
    a.Step(step);
    b.Step(step);
  }
  const std::vector<at::Tensor> ra = a.model->Parameters();
  const std::vector<at::Tensor> rb = b.model->Parameters();
  const std::vector<at::Tensor> rr = reference.model->Parameters();
  for (size_t i = 0; i < ra.size(); ++i) {
    EXPECT_TRUE(torch::equal(ra[i], rb[i])) << i;
    EXPECT_TRUE(torch::equal(ra[i], rr[i])) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Optimizers, CheckpointSnapshotTest,
                         ::testing::Values(v1::OPTIMIZER_KIND_SGD,
                                           v1::OPTIMIZER_KIND_ADAM,
                                           v1::OPTIMIZER_KIND_ADAMW));

}  // namespace
}  // namespace ringleader
