// Issue 16 (5): jobs with ddp.gradient_compression FP16 and BF16 on real
// worker processes. Over shared memory and over Gloo, 2 ranks end with
// exactly the parameters of one process applying PyTorch's compression hook
// to each rank's gradients (and within a bound of uncompressed training);
// and an epoch of Fashion-MNIST over Gloo ends at the uncompressed job's
// test loss and accuracy within a small margin.
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/integration/cluster.h"
#include "tests/integration/reference_training.h"
#include "tests/testing/job_specs.h"
#include "tests/testing/numeric_bounds.h"

namespace ringleader::testing {
namespace {

constexpr char kFashion[] = "/usr/share/datasets/fashion-mnist";

const char* Name(v1::GradientCompression c) {
  return c == v1::GRADIENT_COMPRESSION_FP16   ? "fp16"
         : c == v1::GRADIENT_COMPRESSION_BF16 ? "bf16"
                                              : "none";
}

v1::JobSpec Spec(const std::string& name, int train_size, int epochs,
                 v1::GradientCompression c, v1::CpuTransport transport) {
  v1::JobSpec s = CheckpointedMlpJobSpec(name, FreshDir(name + "-ckpt"),
                                         train_size, 16, /*every_steps=*/0);
  s.mutable_dataset()->set_synthetic_test_size(1024);
  s.mutable_optimizer()->set_kind(v1::OPTIMIZER_KIND_SGD);
  s.mutable_optimizer()->set_learning_rate(0.05);
  s.mutable_optimizer()->set_momentum(0.9);
  s.set_epochs(epochs);
  s.set_min_workers(2);
  s.set_max_workers(2);
  s.set_seed(TrainingSeed(1234));
  // Small buckets: several compressed all-reduces per step, launched
  // during backward.
  s.mutable_ddp()->set_first_bucket_bytes(1024);
  s.mutable_ddp()->set_bucket_cap_bytes(8192);
  s.mutable_ddp()->set_cpu_transport(transport);
  s.mutable_ddp()->set_gradient_compression(c);
  return s;
}

// Runs the jobs one after the other on 2 worker processes of one cluster;
// the finished jobs, in order (fewer if one failed).
std::vector<v1::Job> RunJobs(const std::vector<v1::JobSpec>& specs) {
  std::vector<v1::Job> done;
  auto cluster = Cluster::Start(specs[0].name());
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  if (!cluster.ok()) return done;
  for (const v1::JobSpec& spec : specs) {
    auto job = (*cluster)->Submit(spec);
    EXPECT_TRUE(job.ok()) << job.status();
    if (!job.ok()) return done;
    for (size_t w = (*cluster)->workers().size(); w < 2; ++w) {
      auto started = (*cluster)->StartWorker();
      EXPECT_TRUE(started.ok()) << started.status();
      if (!started.ok()) return done;
    }
    auto end = (*cluster)->WaitForEnd(*job, absl::Minutes(5));
    EXPECT_TRUE(end.ok()) << end.status();
    if (!end.ok()) return done;
    EXPECT_EQ(end->state(), v1::JOB_STATE_SUCCEEDED)
        << spec.name() << ": " << end->message();
    done.push_back(*end);
  }
  return done;
}

double Metric(const v1::Job& job, const std::string& name) {
  for (const v1::Metric& m : job.progress().test_metrics()) {
    if (m.name() == name) return m.value();
  }
  ADD_FAILURE() << job.spec().name() << " has no test metric " << name;
  return -1;
}

TEST(CompressionTest, TwoWorkersEqualTheHookAppliedToEachRank) {
  std::vector<v1::JobSpec> specs;
  for (v1::CpuTransport t : {v1::CPU_TRANSPORT_SHM, v1::CPU_TRANSPORT_GLOO}) {
    for (v1::GradientCompression c :
         {v1::GRADIENT_COMPRESSION_FP16, v1::GRADIENT_COMPRESSION_BF16}) {
      const std::string name = std::string("exact-") + Name(c) +
                               (t == v1::CPU_TRANSPORT_SHM ? "-shm" : "-gloo");
      specs.push_back(Spec(name, 480, 2, c, t));
    }
  }
  const std::vector<v1::Job> jobs = RunJobs(specs);
  ASSERT_EQ(jobs.size(), specs.size());
  v1::JobSpec uncompressed = specs[0];
  uncompressed.mutable_ddp()->clear_gradient_compression();
  const std::vector<torch::Tensor> exact = TrainSingleProcess(uncompressed, 2);
  for (size_t i = 0; i < specs.size(); ++i) {
    SCOPED_TRACE(specs[i].name());
    const auto params =
        CheckpointParameters(specs[i], jobs[i].last_checkpoint().path());
    const double diff = MaxAbsDiff(params, TrainSingleProcess(specs[i], 2));
    const double drift = MaxAbsDiff(params, exact);
    std::cout << specs[i].name() << ": max |param diff| vs the hook by hand "
              << diff << ", vs uncompressed " << drift << "\n";
    EXPECT_EQ(diff, 0);
    ReportNumeric(specs[i].name() + ".max_param_diff_vs_float32", drift);
    // Rounded, but not far off: 30 steps with gradients within a few
    // 16-bit ulps of the float32 ones.
    EXPECT_GT(drift, 0);
    EXPECT_LT(drift, 0.02);
  }
}

// Fashion-MNIST, one epoch over Gloo: fp16 and bf16 end within a small
// margin of float32's test loss and accuracy (the figures of longer runs are
// in bench/README.md, "Gradient compression").
TEST(CompressionTest, CompressedJobsTrainToAComparableLoss) {
  if (!std::filesystem::exists(std::string(kFashion) +
                               "/train-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "skipped: " << kFashion
                 << " missing (apt-get install dataset-fashion-mnist)";
  }
  std::vector<v1::JobSpec> specs;
  for (v1::GradientCompression c :
       {v1::GRADIENT_COMPRESSION_NONE, v1::GRADIENT_COMPRESSION_FP16,
        v1::GRADIENT_COMPRESSION_BF16}) {
    v1::JobSpec s =
        Spec(std::string("loss-") + Name(c), 0, 1, c, v1::CPU_TRANSPORT_GLOO);
    s.mutable_model()->clear_hidden_sizes();  // The default MLP.
    s.mutable_dataset()->set_format(v1::DATASET_FORMAT_IDX);
    s.mutable_dataset()->set_path(kFashion);
    s.mutable_dataset()->clear_synthetic_train_size();
    s.mutable_dataset()->clear_synthetic_test_size();
    s.set_batch_size(64);
    s.mutable_ddp()->clear_first_bucket_bytes();
    s.mutable_ddp()->clear_bucket_cap_bytes();
    specs.push_back(s);
  }
  const std::vector<v1::Job> jobs = RunJobs(specs);
  ASSERT_EQ(jobs.size(), specs.size());
  const double base_loss = Metric(jobs[0], "loss");
  const double base_accuracy = jobs[0].progress().test_accuracy();
  std::cout << "none: test loss " << base_loss << ", accuracy " << base_accuracy
            << "\n";
  ReportNumeric("compression.float32_test_accuracy", base_accuracy);
  EXPECT_GT(base_accuracy, 0.75);  // Learned (chance 0.1).
  for (size_t i = 1; i < jobs.size(); ++i) {
    SCOPED_TRACE(specs[i].name());
    const double loss = Metric(jobs[i], "loss");
    const double accuracy = jobs[i].progress().test_accuracy();
    std::cout << specs[i].name() << ": test loss " << loss << ", accuracy "
              << accuracy << "\n";
    ReportNumeric(specs[i].name() + ".test_loss_relative_to_float32",
                  (loss - base_loss) / base_loss);
    ReportNumeric(specs[i].name() + ".test_accuracy_minus_float32",
                  accuracy - base_accuracy);
    // One epoch at a constant learning rate: each run is its own
    // trajectory, and float32's own seeds and OpenBLAS's kernel families
    // move it as much. Measured: loss -6.6% .. +6.8%, accuracy -0.83 ..
    // +1.23 points (tests/README.md, "Bounds on trained results"); the
    // bounds are about 1.8 and 2 times those. A broken compression (a lost
    // scale, an overflow) is far outside them, and the exact test above
    // holds the arithmetic itself.
    EXPECT_LE(std::abs(loss - base_loss), 0.12 * base_loss);
    EXPECT_LE(std::abs(accuracy - base_accuracy), 0.025);
  }
}

}  // namespace
}  // namespace ringleader::testing
