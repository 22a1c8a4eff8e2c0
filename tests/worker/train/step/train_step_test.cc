// The step is DDP: N ranks each stepping on their own batch end with the
// parameters one process gets from a step on the union of the batches, and
// micro-batches accumulated without sync equal one larger batch.
#include "worker/train/step/train_step.h"

#include <torch/script.h>
#include <torch/torch.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/worker/ddp/in_process_communicator.h"
#include "worker/data/synthetic_dataset.h"
#include "worker/ddp/buffer_sync.h"
#include "worker/model/builtin_models.h"
#include "worker/model/torchscript_model.h"
#include "worker/train/job_error.h"

namespace ringleader {
namespace {

using ::testing::HasSubstr;

Batch BatchOf(const SyntheticDataset& data, std::vector<int64_t> ids) {
  Batch b;
  const int64_t n = static_cast<int64_t>(ids.size());
  b.inputs = {torch::empty({n, 1, 28, 28})};
  b.targets = torch::empty({n}, torch::kLong);
  EXPECT_TRUE(data.Gather(ids.data(), ids.size(), b.inputs[0].data_ptr<float>(),
                          b.targets.data_ptr<int64_t>())
                  .ok());
  b.sample_ids = std::move(ids);
  return b;
}

// One rank: the model from seed 9, SGD, a reducer over `comm`.
struct Rank {
  std::unique_ptr<Model> model = MakeMlp({8}, 9).value();
  Task task{v1::TaskSpec()};
  std::unique_ptr<torch::optim::SGD> sgd;
  std::unique_ptr<Reducer> reducer;
  std::unique_ptr<TrainStep> step;

  Rank(Communicator* comm, int accumulate, double clip = 0) {
    sgd = std::make_unique<torch::optim::SGD>(model->Parameters(),
                                              torch::optim::SGDOptions(0.5));
    Reducer::Options o;
    o.first_bucket_bytes = 512;
    o.bucket_cap_bytes = 4096;
    reducer = Reducer::Create(comm, model->Parameters(), o).value();
    reducer->ZeroGrad();
    StepParts parts;
    parts.model = model.get();
    parts.task = &task;
    parts.reducer = reducer.get();
    parts.optimizer = sgd.get();
    parts.clip_grad_norm = clip;
    step = std::make_unique<TrainStep>(parts, accumulate);
  }
};

std::vector<torch::Tensor> Params(const Model& m) {
  std::vector<torch::Tensor> out;
  for (const auto& p : m.Parameters()) out.push_back(p.detach().clone());
  return out;
}

TEST(TrainStepTest, TwoRanksEqualOneProcessOnTheUnionOfTheirBatches) {
  auto data = SyntheticDataset::Create(16, 1).value();
  const std::vector<std::vector<int64_t>> ids = {{0, 1, 2, 3}, {4, 5, 6, 7}};
  InProcessGroup group(2);
  std::vector<std::vector<torch::Tensor>> after(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      InProcessCommunicator comm(&group, r);
      Rank rank(&comm, 1);
      absl::StatusOr<at::Tensor> loss =
          rank.step->Micro(BatchOf(*data, ids[r]), /*sync=*/true);
      ASSERT_TRUE(loss.ok()) << loss.status();
      rank.step->Apply(0.5);
      after[r] = Params(*rank.model);
    });
  }
  for (auto& t : threads) t.join();

  InProcessGroup solo_group(1);
  InProcessCommunicator solo_comm(&solo_group, 0);
  Rank solo(&solo_comm, 1);
  ASSERT_TRUE(
      solo.step->Micro(BatchOf(*data, {0, 1, 2, 3, 4, 5, 6, 7}), true).ok());
  solo.step->Apply(0.5);
  const std::vector<torch::Tensor> want = Params(*solo.model);
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(after[r].size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_TRUE(torch::allclose(after[r][i], want[i], 1e-5, 1e-6))
          << r << " " << i;
    }
  }
}

// Clipping after the all-reduce: both ranks measure the same norm, the one
// process's on the union, and end with its clipped step at the scheduled
// learning rate.
TEST(TrainStepTest, RanksClipTheAveragedGradientsAlike) {
  auto data = SyntheticDataset::Create(16, 1).value();
  const std::vector<std::vector<int64_t>> ids = {{0, 1, 2, 3}, {4, 5, 6, 7}};
  constexpr double kClip = 0.05;  // Below the first step's norm.
  constexpr double kLr = 0.25;
  InProcessGroup group(2);
  std::vector<std::vector<torch::Tensor>> after(2);
  std::vector<std::optional<double>> norms(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      InProcessCommunicator comm(&group, r);
      Rank rank(&comm, 1, kClip);
      ASSERT_TRUE(rank.step->Micro(BatchOf(*data, ids[r]), true).ok());
      norms[r] = rank.step->ClipGradients(/*measure=*/false);
      rank.step->Apply(kLr);
      after[r] = Params(*rank.model);
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(norms[0].has_value());
  ASSERT_TRUE(norms[1].has_value());
  EXPECT_EQ(*norms[0], *norms[1]);  // The same averaged gradients.

  InProcessGroup solo_group(1);
  InProcessCommunicator solo_comm(&solo_group, 0);
  Rank solo(&solo_comm, 1, kClip);
  ASSERT_TRUE(
      solo.step->Micro(BatchOf(*data, {0, 1, 2, 3, 4, 5, 6, 7}), true).ok());
  const std::optional<double> solo_norm = solo.step->ClipGradients(false);
  ASSERT_TRUE(solo_norm.has_value());
  EXPECT_NEAR(*norms[0], *solo_norm, 1e-6);
  EXPECT_GT(*solo_norm, kClip);  // It did clip.
  solo.step->Apply(kLr);
  EXPECT_DOUBLE_EQ(solo.sgd->param_groups()[0].options().get_lr(), kLr);
  const std::vector<torch::Tensor> want = Params(*solo.model);
  for (int r = 0; r < 2; ++r) {
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_TRUE(torch::allclose(after[r][i], want[i], 1e-5, 1e-7))
          << r << " " << i;
    }
  }
}

TEST(TrainStepTest, TheNormIsMeasuredOnlyWhenClippingOrAsked) {
  auto data = SyntheticDataset::Create(16, 1).value();
  InProcessGroup group(1);
  InProcessCommunicator comm(&group, 0);
  Rank rank(&comm, 1);
  ASSERT_TRUE(rank.step->Micro(BatchOf(*data, {0, 1, 2}), true).ok());
  EXPECT_FALSE(rank.step->ClipGradients(false).has_value());
  const std::optional<double> norm = rank.step->ClipGradients(true);
  ASSERT_TRUE(norm.has_value());
  EXPECT_GT(*norm, 0);
}

TEST(TrainStepTest, AccumulatedMicroBatchesEqualOneBatch) {
  auto data = SyntheticDataset::Create(16, 1).value();
  InProcessGroup group(1);
  InProcessCommunicator comm(&group, 0);
  Rank accumulating(&comm, 2);
  ASSERT_TRUE(accumulating.step->Micro(BatchOf(*data, {0, 1, 2}), false).ok());
  ASSERT_TRUE(accumulating.step->Micro(BatchOf(*data, {3, 4, 5}), true).ok());
  accumulating.step->Apply(0.5);
  Rank whole(&comm, 1);
  ASSERT_TRUE(whole.step->Micro(BatchOf(*data, {0, 1, 2, 3, 4, 5}), true).ok());
  whole.step->Apply(0.5);
  const auto a = Params(*accumulating.model), b = Params(*whole.model);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(torch::allclose(a[i], b[i], 1e-5, 1e-6)) << i;
  }
}

TEST(TrainStepTest, ABatchTheModelDoesNotFitIsAJobError) {
  auto data = SyntheticDataset::Create(16, 1).value();
  InProcessGroup group(1);
  InProcessCommunicator comm(&group, 0);
  Rank rank(&comm, 1);
  Batch bad = BatchOf(*data, {0, 1});
  bad.targets[1] = 42;  // The model has 10 classes.
  absl::StatusOr<at::Tensor> loss = rank.step->Micro(bad, true);
  ASSERT_FALSE(loss.ok());
  EXPECT_TRUE(IsJobError(loss.status()));
  EXPECT_THAT(std::string(loss.status().message()), HasSubstr("training: "));
  EXPECT_THAT(std::string(loss.status().message()),
              HasSubstr("target 42 of sample 1 is outside [0, 10)"));
}

// A TorchScript MLP with dropout(p=0.5): its loss depends on the mask drawn.
std::unique_ptr<Model> DropoutModel() {
  torch::manual_seed(5);
  torch::jit::Module m("Dropout");
  m.register_attribute("training", c10::BoolType::get(), true);
  m.register_parameter(
      "weight", (torch::randn({10, 784}) * 0.05).requires_grad_(), false);
  m.define(
      "def forward(self, x):\n"
      "    h = torch.dropout(torch.flatten(x, 1), 0.5, self.training)\n"
      "    return torch.matmul(h, self.weight.t())\n");
  const std::string path =
      std::string(getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp") +
      "/dropout_model.pt";
  m.save(path);
  return LoadTorchScriptModel(path).value();
}

// The loss of one micro-batch of a fresh dropout model, with `seed` (or
// none) for its stream.
double DropoutLoss(const Batch& batch, std::optional<uint64_t> seed) {
  std::unique_ptr<Model> model = DropoutModel();
  Task task{v1::TaskSpec()};
  torch::optim::SGD sgd(model->Parameters(), torch::optim::SGDOptions(0.1));
  InProcessGroup group(1);
  InProcessCommunicator comm(&group, 0);
  std::unique_ptr<Reducer> reducer =
      Reducer::Create(&comm, model->Parameters(), Reducer::Options()).value();
  reducer->ZeroGrad();
  StepParts parts;
  parts.model = model.get();
  parts.task = &task;
  parts.reducer = reducer.get();
  parts.optimizer = &sgd;
  TrainStep step(parts, 1);
  // Whatever ran before leaves the global generator elsewhere.
  torch::rand({static_cast<int64_t>(seed.value_or(3) % 97 + 1)});
  return step.Micro(batch, /*sync=*/true, seed).value().item<double>();
}

TEST(TrainStepTest, DropoutDrawsFromTheBatchsOwnStream) {
  auto data = SyntheticDataset::Create(16, 1).value();
  const Batch batch = BatchOf(*data, {0, 1, 2, 3, 4, 5, 6, 7});
  const double a = DropoutLoss(batch, 1234);
  // The same stream after other random draws: the same mask, the same loss.
  EXPECT_EQ(DropoutLoss(batch, 1234), a);
  EXPECT_NE(DropoutLoss(batch, 1235), a);
}

// A TorchScript linear layer followed by BatchNorm over its 10 outputs:
// running statistics that each rank's forward updates with its own batch.
// Saved under a name of the caller's: ranks on threads of one process.
std::unique_ptr<Model> BatchNormModel(const std::string& name) {
  torch::manual_seed(6);
  torch::jit::Module m("BatchNorm");
  m.register_attribute("training", c10::BoolType::get(), true);
  m.register_parameter(
      "weight", (torch::randn({10, 784}) * 0.05).requires_grad_(), false);
  m.register_parameter("gamma", torch::ones({10}).requires_grad_(), false);
  m.register_parameter("beta", torch::zeros({10}).requires_grad_(), false);
  m.register_buffer("running_mean", torch::zeros({10}));
  m.register_buffer("running_var", torch::ones({10}));
  m.define(
      "def forward(self, x):\n"
      "    h = torch.matmul(torch.flatten(x, 1), self.weight.t())\n"
      "    return torch.batch_norm(h, self.gamma, self.beta, "
      "self.running_mean, self.running_var, self.training, 0.1, 1e-5, "
      "False)\n");
  const std::string path =
      std::string(getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp") +
      "/" + name + ".pt";
  m.save(path);
  return LoadTorchScriptModel(path).value();
}

// What the trainer keeps at a step boundary for a peer to recover from
// (Trainer::MarkStepBoundary) is each rank's own buffers; the job's next
// step would normalize with rank 0's. So at the end of every step, with or
// without accumulation, every rank holds rank 0's running statistics, bit
// for bit, whichever rank a recovery then takes them from.
TEST(TrainStepTest, AtTheStepBoundaryEveryRankHoldsRankZerosBuffers) {
  auto data = SyntheticDataset::Create(16, 1).value();
  for (int accumulate : {1, 2}) {
    InProcessGroup group(2);
    std::vector<std::vector<torch::Tensor>> after(2);
    std::vector<std::thread> threads;
    for (int r = 0; r < 2; ++r) {
      threads.emplace_back([&, r] {
        InProcessCommunicator comm(&group, r);
        std::unique_ptr<Model> model =
            BatchNormModel(absl::StrCat("batchnorm_", accumulate, "_", r));
        Task task{v1::TaskSpec()};
        torch::optim::SGD sgd(model->Parameters(),
                              torch::optim::SGDOptions(0.1));
        std::unique_ptr<Reducer> reducer =
            Reducer::Create(&comm, model->Parameters(), Reducer::Options())
                .value();
        reducer->ZeroGrad();
        std::vector<at::Tensor> buffers;
        for (const NamedTensor& b : model->NamedBuffers())
          buffers.push_back(b.tensor);
        ASSERT_EQ(buffers.size(), 2u);
        std::unique_ptr<BufferSync> sync =
            BufferSync::Create(&comm, buffers).value();
        StepParts parts;
        parts.model = model.get();
        parts.task = &task;
        parts.reducer = reducer.get();
        parts.buffers = sync.get();
        parts.optimizer = &sgd;
        TrainStep step(parts, accumulate);
        // Two steps; each rank's micro-batches are its own samples.
        int64_t next = 4 * r;
        for (int s = 0; s < 2; ++s) {
          for (int m = 0; m < accumulate; ++m) {
            std::vector<int64_t> ids;
            for (int i = 0; i < 4; ++i) ids.push_back((next++) % 16);
            next += 4;
            absl::StatusOr<at::Tensor> loss =
                step.Micro(BatchOf(*data, ids), m + 1 == accumulate);
            ASSERT_TRUE(loss.ok()) << loss.status();
          }
          step.Apply(0.1);
        }
        for (const at::Tensor& b : buffers) after[r].push_back(b.clone());
      });
    }
    for (auto& t : threads) t.join();
    ASSERT_EQ(after[0].size(), 2u);
    ASSERT_EQ(after[1].size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_FALSE(torch::equal(
          after[0][i], i == 0 ? torch::zeros({10}) : torch::ones({10})))
          << "accumulate " << accumulate << ": buffer " << i << " unchanged";
      EXPECT_TRUE(torch::equal(after[1][i], after[0][i]))
          << "accumulate " << accumulate << ": buffer " << i << "\n"
          << after[1][i] << "\nrank 0:\n"
          << after[0][i];
    }
  }
}

}  // namespace
}  // namespace ringleader
