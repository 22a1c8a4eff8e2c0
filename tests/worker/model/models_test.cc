#include "worker/model/models.h"

#include <torch/torch.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ringleader/v1/job.pb.h"
#include "worker/model/model.h"

namespace ringleader {
namespace {

using ::testing::HasSubstr;

v1::ModelSpec Spec(v1::ModelArch arch) {
  v1::ModelSpec spec;
  spec.set_arch(arch);
  return spec;
}

TEST(BuildModelTest, MlpDefaultsTo256And128) {
  absl::StatusOr<std::shared_ptr<Model>> m =
      BuildModel(Spec(v1::MODEL_ARCH_MLP), 1);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)->Describe(), "mlp 784-256-128-10");
}

TEST(BuildModelTest, MlpHiddenSizes) {
  v1::ModelSpec spec = Spec(v1::MODEL_ARCH_MLP);
  spec.add_hidden_sizes(32);
  absl::StatusOr<std::shared_ptr<Model>> m = BuildModel(spec, 1);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)->Describe(), "mlp 784-32-10");
  EXPECT_EQ((*m)->NumParameters(), 784 * 32 + 32 + 330);
}

TEST(BuildModelTest, CnnAndSeeds) {
  auto a = BuildModel(Spec(v1::MODEL_ARCH_CNN), 9);
  auto b = BuildModel(Spec(v1::MODEL_ARCH_CNN), 9);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ((*a)->NumParameters(), 80202);
  EXPECT_TRUE(torch::equal((*a)->Parameters()[0], (*b)->Parameters()[0]));
}

TEST(BuildModelTest, TorchScriptNeedsAnExistingPath) {
  v1::ModelSpec spec = Spec(v1::MODEL_ARCH_TORCHSCRIPT);
  EXPECT_THAT(std::string(BuildModel(spec, 1).status().message()),
              HasSubstr("torchscript_path is required"));
  spec.set_torchscript_path("/nonexistent/model.pt");
  absl::Status s = BuildModel(spec, 1).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()), HasSubstr("/nonexistent/model.pt"));
}

TEST(BuildModelTest, RejectsInconsistentSpecs) {
  EXPECT_EQ(BuildModel(Spec(v1::MODEL_ARCH_UNSPECIFIED), 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(BuildModel(Spec(static_cast<v1::ModelArch>(77)), 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  v1::ModelSpec cnn = Spec(v1::MODEL_ARCH_CNN);
  cnn.add_hidden_sizes(8);
  EXPECT_THAT(std::string(BuildModel(cnn, 1).status().message()),
              HasSubstr("hidden_sizes is only valid with MODEL_ARCH_MLP"));
  v1::ModelSpec mlp = Spec(v1::MODEL_ARCH_MLP);
  mlp.set_torchscript_path("x.pt");
  EXPECT_THAT(std::string(BuildModel(mlp, 1).status().message()),
              HasSubstr("only valid with MODEL_ARCH_TORCHSCRIPT"));
  v1::ModelSpec zero = Spec(v1::MODEL_ARCH_MLP);
  zero.add_hidden_sizes(0);
  EXPECT_EQ(BuildModel(zero, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ringleader
