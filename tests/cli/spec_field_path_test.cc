#include "cli/spec_field_path.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader::cli {
namespace {

FieldPath Path(const std::string& path) {
  absl::StatusOr<FieldPath> p =
      ResolveFieldPath(v1::JobSpec::descriptor(), path);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.value_or(FieldPath{});
}

TEST(SpecFieldPathTest, ResolvesNestedFields) {
  const FieldPath p = Path("dataset.transform.mean");
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p.back()->full_name(), "ringleader.v1.InputTransform.mean");
  EXPECT_EQ(FieldPathName(p), "dataset.transform.mean");
}

TEST(SpecFieldPathTest, RejectsUnknownFieldsAndPathsThroughScalars) {
  absl::StatusOr<FieldPath> p =
      ResolveFieldPath(v1::JobSpec::descriptor(), "optimizer.speed");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "optimizer.speed: ringleader.v1.OptimizerSpec has no field speed");
  p = ResolveFieldPath(v1::JobSpec::descriptor(), "epochs.x");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "epochs.x: epochs is not a singular message field");
  EXPECT_FALSE(ResolveFieldPath(v1::JobSpec::descriptor(), "").ok());
}

TEST(SpecFieldPathTest, SetsScalarsEnumsAndLists) {
  v1::JobSpec spec;
  SetField(&spec, Path("optimizer.learning_rate"), 0.5);
  SetField(&spec, Path("seed"), uint64_t{7});
  SetField(&spec, Path("name"), std::string("n"));
  SetField(&spec, Path("dataset.shuffle"), true);
  SetField(&spec, Path("device"), int32_t{v1::DEVICE_KIND_CUDA});
  SetList(&spec, Path("model.hidden_sizes"), std::vector<int32_t>{4, 2});
  SetList(&spec, Path("model.hidden_sizes"), std::vector<int32_t>{8});
  EXPECT_DOUBLE_EQ(spec.optimizer().learning_rate(), 0.5);
  EXPECT_EQ(spec.seed(), 7u);
  EXPECT_EQ(spec.name(), "n");
  EXPECT_TRUE(spec.dataset().shuffle());
  EXPECT_EQ(spec.device(), v1::DEVICE_KIND_CUDA);
  ASSERT_EQ(spec.model().hidden_sizes_size(), 1);  // Replaced.
  EXPECT_EQ(spec.model().hidden_sizes(0), 8);
}

TEST(SpecFieldPathTest, CopyFieldCopiesOneFieldWithItsPresence) {
  v1::JobSpec from;
  from.mutable_optimizer()->set_beta1(0);
  from.mutable_optimizer()->set_learning_rate(3);
  from.mutable_dataset()->mutable_train()->add_inputs("/a");
  v1::JobSpec to;
  to.mutable_optimizer()->set_momentum(0.9);
  to.mutable_dataset()->mutable_train()->add_inputs("/old1");
  to.mutable_dataset()->mutable_train()->add_inputs("/old2");
  CopyField(from, &to, Path("optimizer.beta1"));
  CopyField(from, &to, Path("dataset.train.inputs"));
  EXPECT_TRUE(to.optimizer().has_beta1());              // Set to 0 is set.
  EXPECT_DOUBLE_EQ(to.optimizer().learning_rate(), 0);  // Not copied.
  EXPECT_DOUBLE_EQ(to.optimizer().momentum(), 0.9);     // Left alone.
  ASSERT_EQ(to.dataset().train().inputs_size(), 1);
  EXPECT_EQ(to.dataset().train().inputs(0), "/a");
  // The sub-messages on the way are created in `to` only.
  v1::JobSpec empty;
  CopyField(empty, &to, Path("task.top_k"));
  EXPECT_TRUE(to.has_task());
  EXPECT_FALSE(empty.has_task());
  // A proto3 scalar copied as 0 overrides.
  to.set_epochs(5);
  CopyField(empty, &to, Path("epochs"));
  EXPECT_EQ(to.epochs(), 0);
}

}  // namespace
}  // namespace ringleader::cli
