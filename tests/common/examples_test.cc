#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/job_spec_io.h"
#include "common/job_spec_validator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader {
namespace {

using ::testing::ElementsAre;

// bazel test runs in the runfiles tree, where data files keep their
// workspace-relative paths.
constexpr char kFashionMnist[] = "examples/fashion_mnist.textproto";

TEST(ExamplesTest, FashionMnistLoadsAndValidates) {
  absl::StatusOr<v1::JobSpec> spec = LoadJobSpecFile(kFashionMnist);
  ASSERT_TRUE(spec.ok()) << spec.status();
  const absl::Status valid = ValidateJobSpec(WithDefaults(*spec));
  EXPECT_TRUE(valid.ok()) << valid;

  EXPECT_EQ(spec->name(), "fashion-mnist-mlp");
  EXPECT_EQ(spec->model().arch(), v1::MODEL_ARCH_MLP);
  EXPECT_EQ(spec->dataset().format(), v1::DATASET_FORMAT_IDX);
  EXPECT_EQ(spec->dataset().path(), "/usr/share/datasets/fashion-mnist");
  EXPECT_TRUE(spec->dataset().shuffle());
  EXPECT_EQ(spec->optimizer().kind(), v1::OPTIMIZER_KIND_SGD);
  EXPECT_DOUBLE_EQ(spec->optimizer().learning_rate(), 0.05);
  EXPECT_DOUBLE_EQ(spec->optimizer().momentum(), 0.9);
  EXPECT_EQ(spec->epochs(), 2);
  EXPECT_EQ(spec->batch_size(), 64);
  EXPECT_EQ(spec->min_workers(), 2);
  EXPECT_EQ(spec->max_workers(), 2);
  EXPECT_EQ(spec->seed(), 42u);
  EXPECT_EQ(spec->progress_every_steps(), 20);
  EXPECT_THAT(WithDefaults(*spec).model().hidden_sizes(),
              ElementsAre(256, 128));
}

}  // namespace
}  // namespace ringleader
