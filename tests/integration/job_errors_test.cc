// Errors that will not go away fail the job at once, with the reason where
// the user looks: a model that does not fit the data, a missing data file, a
// label outside the model's classes, a loss that diverged, gradients that
// are not finite. Each job below allows restarts, and must spend none of
// them: the job is FAILED with the rank and torch's (or the loader's) reason
// in its message.
#include <torch/script.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/cluster.h"
#include "worker/data/npy_header.h"

namespace ringleader::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

v1::JobSpec BaseSpec(const std::string& name) {
  v1::JobSpec s;
  s.set_name(name);
  s.mutable_dataset()->set_format(v1::DATASET_FORMAT_SYNTHETIC);
  s.mutable_dataset()->set_synthetic_train_size(64);
  s.mutable_dataset()->set_synthetic_test_size(16);
  s.mutable_optimizer()->set_kind(v1::OPTIMIZER_KIND_SGD);
  s.mutable_optimizer()->set_learning_rate(0.01);
  s.set_epochs(2);
  s.set_batch_size(8);
  s.set_min_workers(2);
  s.set_max_workers(2);
  s.set_max_restarts(3);
  s.set_seed(5);
  return s;
}

// Submits `spec` to a fresh cluster of two workers and returns the final job.
v1::Job RunToEnd(const v1::JobSpec& spec) {
  auto cluster = Cluster::Start(spec.name());
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  if (!cluster.ok()) return v1::Job();
  auto job = (*cluster)->Submit(spec);
  EXPECT_TRUE(job.ok()) << job.status();
  if (!job.ok()) return v1::Job();
  for (int i = 0; i < 2; ++i) EXPECT_TRUE((*cluster)->StartWorker().ok());
  auto done = (*cluster)->WaitForEnd(*job, absl::Minutes(3));
  EXPECT_TRUE(done.ok()) << done.status();
  return done.ok() ? *done : v1::Job();
}

// The job failed on its first generation, naming a rank, in one line.
void ExpectFailedAtOnce(const v1::Job& job) {
  EXPECT_EQ(job.state(), v1::JOB_STATE_FAILED) << job.message();
  EXPECT_EQ(job.restarts(), 0) << job.message();
  EXPECT_EQ(job.generation(), 1) << job.message();
  EXPECT_THAT(job.message(), MatchesRegex("rank [01]: .*")) << job.message();
  EXPECT_EQ(job.message().find('\n'), std::string::npos) << job.message();
}

// A TorchScript module with one weight and `body` as forward, compiled
// from source here (no Python needed) and saved under `dir`.
std::string ScriptModel(const std::string& dir, const std::string& name,
                        std::vector<int64_t> weight_shape,
                        const std::string& body) {
  torch::jit::Module m(name);
  m.register_attribute("training", c10::BoolType::get(), true);
  m.register_parameter(
      "weight", (torch::randn(weight_shape) * 0.01).requires_grad_(), false);
  m.define("def forward(self, x):\n" + body + "\n");
  const std::string path = dir + "/" + name + ".pt";
  m.save(path);
  return path;
}

template <typename T>
void WriteNpy(const std::string& path, NpyDtype dtype,
              const std::vector<int64_t>& shape, const std::vector<T>& data) {
  std::ofstream out(path, std::ios::binary);
  out << FormatNpyHeader(dtype, shape);
  out.write(reinterpret_cast<const char*>(data.data()),
            static_cast<std::streamsize>(data.size() * sizeof(T)));
}

// A job on `dir`/x.npy and `dir`/y.npy with the TorchScript model `model`
// (a built-in MLP when empty).
v1::JobSpec NpyJob(const std::string& name, const std::string& dir,
                   const std::string& model) {
  v1::JobSpec s = BaseSpec(name);
  if (model.empty()) {
    s.mutable_model()->set_arch(v1::MODEL_ARCH_MLP);
  } else {
    s.mutable_model()->set_arch(v1::MODEL_ARCH_TORCHSCRIPT);
    s.mutable_model()->set_torchscript_path(model);
  }
  v1::DatasetSpec& d = *s.mutable_dataset();
  d.Clear();
  d.set_format(v1::DATASET_FORMAT_NPY);
  d.mutable_train()->add_inputs(dir + "/x.npy");
  d.mutable_train()->set_targets(dir + "/y.npy");
  return s;
}

TEST(JobErrorsTest, ModelThatDoesNotFitTheDataFailsAtOnce) {
  // The first try of a new user: a CNN for 3 channels on grey images.
  const std::string dir = FreshDir("rgb-model");
  v1::JobSpec s = BaseSpec("rgb-on-grey");
  s.mutable_model()->set_arch(v1::MODEL_ARCH_TORCHSCRIPT);
  s.mutable_model()->set_torchscript_path(
      ScriptModel(dir, "rgb", {4, 3, 3, 3},
                  "    return torch.flatten(torch.conv2d(x, self.weight), 1)"));
  const v1::Job job = RunToEnd(s);
  ExpectFailedAtOnce(job);
  EXPECT_THAT(job.message(), HasSubstr("the model does not fit the train "
                                       "split of the synthetic dataset"));
  EXPECT_THAT(job.message(), HasSubstr("to have 3 channels"));
}

TEST(JobErrorsTest, MissingDataFileFailsWithItsName) {
  const std::string dir = FreshDir("missing-data");
  const v1::Job job = RunToEnd(NpyJob("missing-data", dir, ""));
  ExpectFailedAtOnce(job);
  EXPECT_THAT(job.message(), HasSubstr("loading the data"));
  EXPECT_THAT(job.message(), HasSubstr(dir + "/x.npy"));
}

TEST(JobErrorsTest, LabelOutsideTheModelsClassesNamesTheSample) {
  const std::string dir = FreshDir("bad-labels-data");
  // 32 samples of 4 floats; sample 21's label is 12, the model scores 10.
  std::vector<float> x(32 * 4, 0.5f);
  std::vector<int64_t> y(32);
  for (int i = 0; i < 32; ++i) y[i] = i % 10;
  y[21] = 12;
  WriteNpy(dir + "/x.npy", NpyDtype::kFloat32, {32, 4}, x);
  WriteNpy(dir + "/y.npy", NpyDtype::kInt64, {32}, y);
  const v1::Job job = RunToEnd(
      NpyJob("bad-labels", dir,
             ScriptModel(dir, "linear", {10, 4},
                         "    return torch.matmul(x, self.weight.t())")));
  ExpectFailedAtOnce(job);
  EXPECT_THAT(job.message(),
              HasSubstr("target 12 of sample 21 is outside [0, 10)"));
  EXPECT_THAT(job.message(), HasSubstr(dir + "/x.npy"));
}

TEST(JobErrorsTest, NonFiniteLossFailsTheJob) {
  // Inputs of 1e30 overflow float32 in the squared error: the loss is inf
  // at the first step, and every later step would be no better.
  const std::string dir = FreshDir("overflow-data");
  WriteNpy(dir + "/x.npy", NpyDtype::kFloat32, {32, 4},
           std::vector<float>(32 * 4, 1e30f));
  WriteNpy(dir + "/y.npy", NpyDtype::kFloat32, {32},
           std::vector<float>(32, 1.0f));
  v1::JobSpec s = NpyJob("overflow", dir,
                         ScriptModel(dir, "linear", {1, 4},
                                     "    return torch.matmul(x, "
                                     "self.weight.t())"));
  s.mutable_task()->set_kind(v1::TASK_KIND_REGRESSION);
  const v1::Job job = RunToEnd(s);
  ExpectFailedAtOnce(job);
  EXPECT_THAT(job.message(), HasSubstr("the training loss is inf at step 1"));
}

TEST(JobErrorsTest, NonFiniteGradientNormFailsTheJob) {
  // sqrt(weight * 0) adds 0 to the output, so the loss is finite, but its
  // gradient is inf * 0 = NaN: the clipped step would make every weight NaN.
  const std::string dir = FreshDir("nan-grad-data");
  WriteNpy(dir + "/x.npy", NpyDtype::kFloat32, {32, 4},
           std::vector<float>(32 * 4, 0.5f));
  WriteNpy(dir + "/y.npy", NpyDtype::kFloat32, {32},
           std::vector<float>(32, 1.0f));
  v1::JobSpec s =
      NpyJob("nan-grad", dir,
             ScriptModel(dir, "sqrt0", {1, 4},
                         "    return torch.matmul(x, self.weight.t()) + "
                         "torch.sqrt(self.weight * 0.0).sum()"));
  s.mutable_task()->set_kind(v1::TASK_KIND_REGRESSION);
  s.set_clip_grad_norm(1.0);
  const v1::Job job = RunToEnd(s);
  ExpectFailedAtOnce(job);
  EXPECT_THAT(job.message(), HasSubstr("the gradient norm is nan at step 1"));
}

TEST(JobErrorsTest, RanksThatSeeDifferentDatasetsFailTheJobNamingBothSizes) {
  // Each rank plans its shards from its own copy's size: with another copy
  // it would silently train on another permutation. The ranks compare the
  // sizes with one all-reduce when the generation sets up (the coordinator
  // is not asked).
  const std::string dir = FreshDir("two-datasets-data");
  auto write = [&dir](int samples) {
    // Written aside and renamed in: a worker that read the old files keeps
    // them.
    std::vector<int64_t> y(samples);
    for (int i = 0; i < samples; ++i) y[i] = i % 10;
    WriteNpy(dir + "/x.tmp", NpyDtype::kFloat32, {samples, 4},
             std::vector<float>(samples * 4, 0.5f));
    WriteNpy(dir + "/y.tmp", NpyDtype::kInt64, {samples}, y);
    std::filesystem::rename(dir + "/x.tmp", dir + "/x.npy");
    std::filesystem::rename(dir + "/y.tmp", dir + "/y.npy");
  };
  write(32);
  v1::JobSpec spec =
      NpyJob("two-datasets", dir,
             ScriptModel(dir, "linear", {10, 4},
                         "    return torch.matmul(x, self.weight.t())"));
  auto cluster = Cluster::Start(spec.name());
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  auto job = (*cluster)->Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  // The first worker has loaded its data once it joins; the second loads a
  // shorter copy.
  ASSERT_TRUE((*cluster)->StartWorker().ok());
  auto joined = (*cluster)->WaitUntil(
      *job,
      [](const v1::Job& j) { return j.state() == v1::JOB_STATE_RENDEZVOUS; },
      absl::Minutes(3));
  ASSERT_TRUE(joined.ok() && joined->state() == v1::JOB_STATE_RENDEZVOUS)
      << joined.status();
  write(31);
  ASSERT_TRUE((*cluster)->StartWorker().ok());
  auto done = (*cluster)->WaitForEnd(*job, absl::Minutes(3));
  ASSERT_TRUE(done.ok()) << done.status();
  ExpectFailedAtOnce(*done);
  // Both sizes, whichever worker got rank 0.
  EXPECT_THAT(done->message(),
              MatchesRegex("rank [01]: rank 0 sees (32 samples in its train "
                           "split of .*/x\\.npy.* but rank 1 sees 31|31 "
                           "samples in its train split of .*/x\\.npy.* but "
                           "rank 1 sees 32): every worker needs the same "
                           "dataset"));
}

// A failure that is neither the job's own nor a rejoin (here: a checkpoint
// directory that is a file, so no checkpoint can be written there): the
// rank tells the coordinator why it leaves, and the job's message says so,
// not "closed its connection (its process exited)" guessed from its
// closed watch while the process was alive.
TEST(JobErrorsTest, ARankThatFailsSaysWhyItLeaves) {
  const std::string dir = FreshDir("leave-why");
  const std::string not_a_dir = dir + "/ckpt";
  std::ofstream(not_a_dir) << "a file, not a directory\n";
  v1::JobSpec spec = BaseSpec("leave-why");
  spec.mutable_model()->set_arch(v1::MODEL_ARCH_MLP);
  spec.set_max_restarts(0);
  spec.set_checkpoint_dir(not_a_dir);
  spec.set_checkpoint_every_steps(2);
  const v1::Job job = RunToEnd(spec);
  EXPECT_EQ(job.state(), v1::JOB_STATE_FAILED) << job.message();
  EXPECT_THAT(job.message(), HasSubstr("failed: ")) << job.message();
  EXPECT_THAT(job.message(), HasSubstr(not_a_dir)) << job.message();
  EXPECT_THAT(job.message(), ::testing::Not(HasSubstr("process exited")))
      << job.message();
}

}  // namespace
}  // namespace ringleader::testing
