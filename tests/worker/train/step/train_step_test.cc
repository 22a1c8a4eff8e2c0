// The step is DDP: N ranks each stepping on their own batch end with the
// parameters one process gets from a step on the union of the batches, and
// micro-batches accumulated without sync equal one larger batch. The step's
// own policy: which micro-batch completes a step, the dropout stream, the
// scheduled learning rate, a norm that is not finite.
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
#include "worker/model/builtin_models.h"
#include "worker/model/torchscript_model.h"
#include "worker/train/job_error.h"
#include "worker/train/step/lr_schedule.h"

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

// The recipe of the tests' steps: a constant learning rate `lr`, small
// buckets.
StepRecipe Recipe(int accumulate, double lr, double clip = 0) {
  StepRecipe r;
  r.accumulate = accumulate;
  r.clip_grad_norm = clip;
  r.seed = 1234;
  r.learning_rate = lr;
  r.reducer.first_bucket_bytes = 512;
  r.reducer.bucket_cap_bytes = 4096;
  return r;
}

std::unique_ptr<TrainStep> StepOver(Model* model, const Task* task,
                                    torch::optim::Optimizer* optimizer,
                                    Communicator* comm, StepRecipe recipe,
                                    int64_t steps_done = 0) {
  StepParts parts;
  parts.model = model;
  parts.task = task;
  parts.optimizer = optimizer;
  parts.comm = comm;
  return TrainStep::Create(parts, std::move(recipe), steps_done).value();
}

// One rank: the model from seed 9, SGD, a step over `comm`.
struct Rank {
  std::unique_ptr<Model> model = MakeMlp({8}, 9).value();
  Task task{v1::TaskSpec()};
  std::unique_ptr<torch::optim::SGD> sgd;
  std::unique_ptr<TrainStep> step;

  Rank(Communicator* comm, StepRecipe recipe, int64_t steps_done = 0) {
    sgd = std::make_unique<torch::optim::SGD>(model->Parameters(),
                                              torch::optim::SGDOptions(0.5));
    step = StepOver(model.get(), &task, sgd.get(), comm, std::move(recipe),
                    steps_done);
  }
  // One micro-batch at `position` of epoch 0.
  absl::StatusOr<TrainStep::MicroResult> Micro(const Batch& batch,
                                               int64_t position = 0,
                                               bool last_of_epoch = false) {
    MicroBatchPlace place;
    place.position = position;
    place.last_of_epoch = last_of_epoch;
    return step->Micro(batch, place);
  }
};

// Two ranks of `group`, built one after the other on this thread: a
// built-in model seeds torch's global generator, so ranks built on threads
// of their own could start from different weights when one thread's step
// reseeds it (each step seeds its dropout stream) while the other builds.
std::vector<std::unique_ptr<Rank>> TwoRanks(
    InProcessGroup& group,
    std::vector<std::unique_ptr<InProcessCommunicator>>& comms,
    const StepRecipe& recipe) {
  std::vector<std::unique_ptr<Rank>> ranks;
  for (int r = 0; r < 2; ++r) {
    comms.push_back(std::make_unique<InProcessCommunicator>(&group, r));
    ranks.push_back(std::make_unique<Rank>(comms.back().get(), recipe));
  }
  return ranks;
}

std::vector<torch::Tensor> Params(const Model& m) {
  std::vector<torch::Tensor> out;
  for (const auto& p : m.Parameters()) out.push_back(p.detach().clone());
  return out;
}

// One process's step (SGD at 0.5) on samples 0..7, the union of the two
// ranks' batches: each rank's parameters after its step, `ranks`, must be
// these.
void ExpectOneProcessOnTheUnion(
    const SyntheticDataset& data,
    const std::vector<std::vector<torch::Tensor>>& ranks) {
  InProcessGroup solo_group(1);
  InProcessCommunicator solo_comm(&solo_group, 0);
  Rank solo(&solo_comm, Recipe(1, 0.5));
  ASSERT_TRUE(solo.Micro(BatchOf(data, {0, 1, 2, 3, 4, 5, 6, 7})).ok());
  ASSERT_TRUE(solo.step->Apply(false).ok());
  EXPECT_EQ(solo.step->done(), 1);
  const std::vector<torch::Tensor> want = Params(*solo.model);
  for (size_t r = 0; r < ranks.size(); ++r) {
    ASSERT_EQ(ranks[r].size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_TRUE(torch::allclose(ranks[r][i], want[i], 1e-5, 1e-6))
          << "rank " << r << " parameter " << i << ": max difference "
          << (ranks[r][i] - want[i]).abs().max().item<float>();
    }
  }
}

TEST(TrainStepTest, TwoRanksEqualOneProcessOnTheUnionOfTheirBatches) {
  auto data = SyntheticDataset::Create(16, 1).value();
  const std::vector<std::vector<int64_t>> ids = {{0, 1, 2, 3}, {4, 5, 6, 7}};
  InProcessGroup group(2);
  std::vector<std::vector<torch::Tensor>> after(2);
  std::vector<std::unique_ptr<InProcessCommunicator>> comms;
  std::vector<std::unique_ptr<Rank>> ranks =
      TwoRanks(group, comms, Recipe(1, 0.5));
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      Rank& rank = *ranks[r];
      absl::StatusOr<TrainStep::MicroResult> micro =
          rank.Micro(BatchOf(*data, ids[r]));
      ASSERT_TRUE(micro.ok()) << micro.status();
      EXPECT_TRUE(micro->completes_step);
      ASSERT_TRUE(rank.step->Apply(false).ok());
      after[r] = Params(*rank.model);
    });
  }
  for (auto& t : threads) t.join();

  ExpectOneProcessOnTheUnion(*data, after);
}

// Balanced batches (DdpSpec.balance_batches): ranks that share the global
// batch 6 to 2 and weigh their losses by their share (1.5 and 0.5 of the
// even 4) step as one process on the union.
TEST(TrainStepTest, UnequalSharesWeightedEqualOneProcessOnTheUnion) {
  auto data = SyntheticDataset::Create(16, 1).value();
  const std::vector<std::vector<int64_t>> ids = {{0, 1, 2, 3, 4, 5}, {6, 7}};
  InProcessGroup group(2);
  std::vector<std::unique_ptr<InProcessCommunicator>> comms;
  std::vector<std::unique_ptr<Rank>> ranks =
      TwoRanks(group, comms, Recipe(1, 0.5));
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      MicroBatchPlace place;
      place.loss_weight = ids[r].size() / 4.0;
      ASSERT_TRUE(ranks[r]->step->Micro(BatchOf(*data, ids[r]), place).ok());
      ASSERT_TRUE(ranks[r]->step->Apply(false).ok());
    });
  }
  for (auto& t : threads) t.join();

  ExpectOneProcessOnTheUnion(
      *data, {Params(*ranks[0]->model), Params(*ranks[1]->model)});
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
  std::vector<std::unique_ptr<InProcessCommunicator>> comms;
  std::vector<std::unique_ptr<Rank>> ranks =
      TwoRanks(group, comms, Recipe(1, kLr, kClip));
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      Rank& rank = *ranks[r];
      ASSERT_TRUE(rank.Micro(BatchOf(*data, ids[r])).ok());
      absl::StatusOr<std::optional<double>> norm =
          rank.step->Apply(/*measure_norm=*/false);
      ASSERT_TRUE(norm.ok()) << norm.status();
      norms[r] = *norm;
      after[r] = Params(*rank.model);
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(norms[0].has_value());
  ASSERT_TRUE(norms[1].has_value());
  EXPECT_EQ(*norms[0], *norms[1]);  // The same averaged gradients.

  InProcessGroup solo_group(1);
  InProcessCommunicator solo_comm(&solo_group, 0);
  Rank solo(&solo_comm, Recipe(1, kLr, kClip));
  ASSERT_TRUE(solo.Micro(BatchOf(*data, {0, 1, 2, 3, 4, 5, 6, 7})).ok());
  const std::optional<double> solo_norm = solo.step->Apply(false).value();
  ASSERT_TRUE(solo_norm.has_value());
  EXPECT_NEAR(*norms[0], *solo_norm, 1e-6);
  EXPECT_GT(*solo_norm, kClip);  // It did clip.
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
  Rank rank(&comm, Recipe(1, 0.5));
  ASSERT_TRUE(rank.Micro(BatchOf(*data, {0, 1, 2})).ok());
  EXPECT_FALSE(rank.step->Apply(false).value().has_value());
  ASSERT_TRUE(rank.Micro(BatchOf(*data, {0, 1, 2})).ok());
  const std::optional<double> norm = rank.step->Apply(true).value();
  ASSERT_TRUE(norm.has_value());
  EXPECT_GT(*norm, 0);
}

TEST(TrainStepTest, AccumulatedMicroBatchesEqualOneBatch) {
  auto data = SyntheticDataset::Create(16, 1).value();
  InProcessGroup group(1);
  InProcessCommunicator comm(&group, 0);
  Rank accumulating(&comm, Recipe(2, 0.5));
  EXPECT_FALSE(accumulating.Micro(BatchOf(*data, {0, 1, 2}))->completes_step);
  // Nothing to apply half way through a step.
  EXPECT_TRUE(
      absl::IsFailedPrecondition(accumulating.step->Apply(false).status()));
  EXPECT_TRUE(accumulating.Micro(BatchOf(*data, {3, 4, 5}))->completes_step);
  ASSERT_TRUE(accumulating.step->Apply(false).ok());
  Rank whole(&comm, Recipe(1, 0.5));
  ASSERT_TRUE(whole.Micro(BatchOf(*data, {0, 1, 2, 3, 4, 5})).ok());
  ASSERT_TRUE(whole.step->Apply(false).ok());
  const auto a = Params(*accumulating.model), b = Params(*whole.model);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(torch::allclose(a[i], b[i], 1e-5, 1e-6)) << i;
  }
}

// Three micro-batches a step, but an epoch's last micro-batch completes its
// step whatever the count, and the next epoch's steps count afresh.
TEST(TrainStepTest, TheEpochsLastMicroBatchCompletesItsStep) {
  auto data = SyntheticDataset::Create(16, 1).value();
  InProcessGroup group(1);
  InProcessCommunicator comm(&group, 0);
  Rank rank(&comm, Recipe(3, 0.5));
  const Batch batch = BatchOf(*data, {0, 1});
  std::vector<bool> completes;
  for (bool last : {false, false, false, false, true, false, false, false}) {
    absl::StatusOr<TrainStep::MicroResult> micro =
        rank.Micro(batch, 0, /*last_of_epoch=*/last);
    ASSERT_TRUE(micro.ok()) << micro.status();
    completes.push_back(micro->completes_step);
    if (micro->completes_step) {
      ASSERT_TRUE(rank.step->Apply(false).ok());
    }
  }
  EXPECT_EQ(completes, (std::vector<bool>{false, false, true, false, true,
                                          false, false, true}));
  EXPECT_EQ(rank.step->done(), 3);
}

// The learning rate is the schedule's at the steps the job has made, a
// resumed job's included: a step created after 5 steps of a 10-step linear
// warmup applies 6/10 of the peak.
TEST(TrainStepTest, TheLearningRateFollowsTheScheduleFromTheStepsDone) {
  auto data = SyntheticDataset::Create(16, 1).value();
  InProcessGroup group(1);
  InProcessCommunicator comm(&group, 0);
  StepRecipe recipe = Recipe(1, 0.5);
  recipe.lr_schedule.set_kind(v1::LR_SCHEDULE_KIND_COSINE);
  recipe.lr_schedule.set_warmup_steps(10);
  recipe.planned_steps = 100;
  Rank rank(&comm, recipe, /*steps_done=*/5);
  EXPECT_EQ(rank.step->learning_rate(), 0);  // No step yet.
  for (int64_t done = 5; done < 12; ++done) {
    ASSERT_TRUE(rank.Micro(BatchOf(*data, {0, 1})).ok());
    ASSERT_TRUE(rank.step->Apply(false).ok());
    EXPECT_DOUBLE_EQ(rank.sgd->param_groups()[0].options().get_lr(),
                     LearningRateAt(recipe.lr_schedule, 0.5, done, 100))
        << done;
    // What the progress reports carry.
    EXPECT_DOUBLE_EQ(rank.step->learning_rate(),
                     rank.sgd->param_groups()[0].options().get_lr());
    EXPECT_EQ(rank.step->done(), done + 1);
  }
  EXPECT_DOUBLE_EQ(LearningRateAt(recipe.lr_schedule, 0.5, 5, 100), 0.3);
}

// Gradients that are not finite (a NaN input) are refused before the
// optimizer makes every parameter NaN: the job's error, nothing applied.
TEST(TrainStepTest, ANormThatIsNotFiniteIsAJobErrorAndNotApplied) {
  auto data = SyntheticDataset::Create(16, 1).value();
  InProcessGroup group(1);
  InProcessCommunicator comm(&group, 0);
  Rank rank(&comm, Recipe(1, 0.5));
  Batch bad = BatchOf(*data, {0, 1});
  bad.inputs[0][0][0][0][0] = std::nan("");
  const std::vector<torch::Tensor> before = Params(*rank.model);
  ASSERT_TRUE(rank.Micro(bad).ok());
  const absl::Status s = rank.step->Apply(/*measure_norm=*/true).status();
  EXPECT_TRUE(IsJobError(s)) << s;
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("the gradient norm is nan at step 1 (epoch 0;"));
  EXPECT_EQ(rank.step->done(), 0);
  const std::vector<torch::Tensor> after = Params(*rank.model);
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_TRUE(torch::equal(before[i], after[i])) << i;
  }
}

TEST(TrainStepTest, ABatchTheModelDoesNotFitIsAJobError) {
  auto data = SyntheticDataset::Create(16, 1).value();
  InProcessGroup group(1);
  InProcessCommunicator comm(&group, 0);
  Rank rank(&comm, Recipe(1, 0.5));
  Batch bad = BatchOf(*data, {0, 1});
  bad.targets[1] = 42;  // The model has 10 classes.
  absl::StatusOr<TrainStep::MicroResult> micro = rank.Micro(bad);
  ASSERT_FALSE(micro.ok());
  EXPECT_TRUE(IsJobError(micro.status()));
  EXPECT_THAT(std::string(micro.status().message()), HasSubstr("training: "));
  EXPECT_THAT(std::string(micro.status().message()),
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

// The loss of one micro-batch of a fresh dropout model at `place`.
double DropoutLoss(const Batch& batch, const MicroBatchPlace& place) {
  std::unique_ptr<Model> model = DropoutModel();
  Task task{v1::TaskSpec()};
  torch::optim::SGD sgd(model->Parameters(), torch::optim::SGDOptions(0.1));
  InProcessGroup group(1);
  InProcessCommunicator comm(&group, 0);
  std::unique_ptr<TrainStep> step =
      StepOver(model.get(), &task, &sgd, &comm, Recipe(1, 0.1));
  // Whatever ran before leaves the global generator elsewhere.
  torch::rand({place.position % 97 + 1});
  return step->Micro(batch, place).value().loss.item<double>();
}

// The step seeds each micro-batch's dropout from the job's seed, the epoch
// and where the batch sits in it (worker/data/sample_stream.h).
TEST(TrainStepTest, DropoutDrawsFromTheBatchsOwnStream) {
  auto data = SyntheticDataset::Create(16, 1).value();
  const Batch batch = BatchOf(*data, {0, 1, 2, 3, 4, 5, 6, 7});
  MicroBatchPlace place;
  place.epoch = 2;
  place.position = 40;
  const double a = DropoutLoss(batch, place);
  // The same stream after other random draws: the same mask, the same loss.
  EXPECT_EQ(DropoutLoss(batch, place), a);
  MicroBatchPlace next = place;
  next.position = 41;
  EXPECT_NE(DropoutLoss(batch, next), a);
  MicroBatchPlace later = place;
  later.epoch = 3;
  EXPECT_NE(DropoutLoss(batch, later), a);
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
// (Trainer::MarkBoundary) is each rank's own buffers; the job's next
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
        std::unique_ptr<TrainStep> step =
            StepOver(model.get(), &task, &sgd, &comm, Recipe(accumulate, 0.1));
        ASSERT_EQ(model->NamedBuffers().size(), 2u);
        // Two steps; each rank's micro-batches are its own samples.
        int64_t next = 4 * r;
        for (int s = 0; s < 2; ++s) {
          for (int m = 0; m < accumulate; ++m) {
            std::vector<int64_t> ids;
            for (int i = 0; i < 4; ++i) ids.push_back((next++) % 16);
            next += 4;
            absl::StatusOr<TrainStep::MicroResult> micro =
                step->Micro(BatchOf(*data, ids), MicroBatchPlace());
            ASSERT_TRUE(micro.ok()) << micro.status();
            EXPECT_EQ(micro->completes_step, m + 1 == accumulate);
          }
          ASSERT_TRUE(step->Apply(false).ok());
        }
        for (const NamedTensor& b : model->NamedBuffers()) {
          after[r].push_back(b.tensor.clone());
        }
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
