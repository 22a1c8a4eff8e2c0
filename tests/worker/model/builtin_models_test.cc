#include "worker/model/builtin_models.h"

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/model/model.h"

namespace ringleader {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::unique_ptr<Model> Mlp(std::vector<int64_t> hidden, uint64_t seed = 1) {
  absl::StatusOr<std::unique_ptr<Model>> m = MakeMlp(hidden, seed);
  EXPECT_TRUE(m.ok()) << m.status();
  return *std::move(m);
}

std::unique_ptr<Model> Cnn(uint64_t seed = 1) {
  absl::StatusOr<std::unique_ptr<Model>> m = MakeCnn(seed);
  EXPECT_TRUE(m.ok()) << m.status();
  return *std::move(m);
}

std::vector<std::string> Names(const Model& m) {
  std::vector<std::string> out;
  for (const NamedTensor& nt : m.NamedParameters()) out.push_back(nt.name);
  return out;
}

std::vector<std::vector<int64_t>> Shapes(const Model& m) {
  std::vector<std::vector<int64_t>> out;
  for (const at::Tensor& t : m.Parameters()) out.push_back(t.sizes().vec());
  return out;
}

bool SameParameters(const Model& a, const Model& b) {
  const std::vector<at::Tensor> pa = a.Parameters();
  const std::vector<at::Tensor> pb = b.Parameters();
  if (pa.size() != pb.size()) return false;
  for (size_t i = 0; i < pa.size(); ++i) {
    if (!torch::equal(pa[i], pb[i])) return false;
  }
  return true;
}

at::Tensor Images(int64_t batch) {
  return torch::randn({batch, 1, 28, 28},
                      torch::TensorOptions().dtype(torch::kFloat));
}

TEST(BuiltinModelsTest, MlpShapesAndParameterOrder) {
  auto m = Mlp({256, 128});
  EXPECT_EQ(m->Describe(), "mlp 784-256-128-10");
  EXPECT_THAT(Names(*m), ElementsAre("fc0.weight", "fc0.bias", "fc1.weight",
                                     "fc1.bias", "fc2.weight", "fc2.bias"));
  EXPECT_EQ(Shapes(*m),
            (std::vector<std::vector<int64_t>>{
                {256, 784}, {256}, {128, 256}, {128}, {10, 128}, {10}}));
  EXPECT_EQ(m->NumParameters(), 784 * 256 + 256 + 256 * 128 + 128 + 1290);
  EXPECT_EQ(m->NumParameters(), 235146);
  EXPECT_TRUE(m->NamedBuffers().empty());
  for (const int64_t batch : {1, 64}) {
    absl::StatusOr<at::Tensor> out = m->Forward(Images(batch));
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->sizes().vec(), (std::vector<int64_t>{batch, 10}));
  }
}

TEST(BuiltinModelsTest, MlpWithoutHiddenLayersIsLinear) {
  auto m = Mlp({});
  EXPECT_EQ(m->Describe(), "mlp 784-10");
  EXPECT_THAT(Names(*m), ElementsAre("fc0.weight", "fc0.bias"));
  EXPECT_EQ(m->NumParameters(), 7850);
}

TEST(BuiltinModelsTest, CnnShapesAndParameterOrder) {
  auto m = Cnn();
  EXPECT_THAT(Names(*m), ElementsAre("conv1.weight", "conv1.bias",
                                     "conv2.weight", "conv2.bias", "fc1.weight",
                                     "fc1.bias", "fc2.weight", "fc2.bias"));
  EXPECT_EQ(Shapes(*m), (std::vector<std::vector<int64_t>>{{16, 1, 5, 5},
                                                           {16},
                                                           {32, 16, 5, 5},
                                                           {32},
                                                           {128, 512},
                                                           {128},
                                                           {10, 128},
                                                           {10}}));
  EXPECT_EQ(m->NumParameters(), 416 + 12832 + 65664 + 1290);
  EXPECT_EQ(m->Describe(), "cnn 1x28x28 conv16-pool-conv32-pool-fc128-fc10");
  absl::StatusOr<at::Tensor> out = m->Forward(Images(3));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->sizes().vec(), (std::vector<int64_t>{3, 10}));
}

// The CNN runs channels-last with ReLU after pooling (for speed); its
// outputs and gradients are those of the textbook NCHW conv-relu-pool.
TEST(BuiltinModelsTest, CnnComputesTheTextbookConvReluPool) {
  auto m = Cnn(5);
  const std::vector<at::Tensor> p = m->Parameters();
  auto reference = [&](const at::Tensor& images) {
    at::Tensor x = at::max_pool2d(at::conv2d(images, p[0], p[1]).relu(), 2);
    x = at::max_pool2d(at::conv2d(x, p[2], p[3]).relu(), 2).flatten(1);
    x = at::linear(x, p[4], p[5]).relu();
    return at::linear(x, p[6], p[7]);
  };
  for (int64_t batch : {1, 7, 64}) {
    SCOPED_TRACE(batch);
    const at::Tensor images = Images(batch);
    const at::Tensor labels = torch::randint(0, 10, {batch}, torch::kLong);
    auto grads = [&](const at::Tensor& logits) {
      for (const at::Tensor& t : p) t.mutable_grad() = at::Tensor();
      torch::nn::functional::cross_entropy(logits, labels).backward();
      std::vector<at::Tensor> g;
      for (const at::Tensor& t : p) g.push_back(t.grad().clone());
      return g;
    };
    absl::StatusOr<at::Tensor> out = m->Forward(images);
    ASSERT_TRUE(out.ok()) << out.status();
    const at::Tensor want = reference(images);
    EXPECT_TRUE(torch::allclose(*out, want, 1e-4, 1e-5));
    const std::vector<at::Tensor> got_grads = grads(*out);
    const std::vector<at::Tensor> want_grads = grads(want);
    for (size_t i = 0; i < p.size(); ++i) {
      EXPECT_TRUE(torch::allclose(got_grads[i], want_grads[i], 1e-4, 1e-5))
          << "gradient of parameter " << i;
    }
  }
}

TEST(BuiltinModelsTest, SameSeedSameParametersOtherSeedOthers) {
  EXPECT_TRUE(SameParameters(*Mlp({64}, 7), *Mlp({64}, 7)));
  EXPECT_FALSE(SameParameters(*Mlp({64}, 7), *Mlp({64}, 8)));
  EXPECT_TRUE(SameParameters(*Cnn(3), *Cnn(3)));
  EXPECT_FALSE(SameParameters(*Cnn(3), *Cnn(4)));
  // Drawing random numbers in between does not matter: builds reseed.
  auto a = Mlp({32}, 5);
  torch::randn({100});
  EXPECT_TRUE(SameParameters(*a, *Mlp({32}, 5)));
}

TEST(BuiltinModelsTest, ForwardRejectsWrongInputs) {
  auto m = Mlp({16});
  for (const at::Tensor& bad :
       {torch::randn({4, 784}), torch::randn({4, 3, 28, 28}),
        torch::randn({4, 1, 32, 32}), torch::zeros({0, 1, 28, 28}),
        torch::zeros({2, 1, 28, 28}, torch::kLong), at::Tensor()}) {
    absl::StatusOr<at::Tensor> out = m->Forward(bad);
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(out.status().message()),
                HasSubstr("model input must be Float [B, 1, 28, 28], got"));
  }
  EXPECT_THAT(
      std::string(m->Forward(torch::randn({4, 784})).status().message()),
      HasSubstr("got Float [4, 784]"));
}

TEST(BuiltinModelsTest, ForwardOnAnotherDeviceIsAnErrorNotACrash) {
  // The parameters are on the CPU; a meta tensor makes torch throw.
  auto m = Mlp({16});
  absl::StatusOr<at::Tensor> out =
      m->Forward(torch::empty({2, 1, 28, 28}, torch::Device(torch::kMeta)));
  EXPECT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("mlp 784-16-10"));
}

TEST(BuiltinModelsTest, TrainModeToggles) {
  auto m = Cnn();
  EXPECT_TRUE(m->is_training());
  m->Train(false);
  EXPECT_FALSE(m->is_training());
  m->Train(true);
  EXPECT_TRUE(m->is_training());
}

// Round trip through torch's serialized archive bytes.
std::string SaveBytes(const Model& m) {
  torch::serialize::OutputArchive archive;
  EXPECT_TRUE(m.Save(archive).ok());
  std::ostringstream out;
  archive.save_to(out);
  return out.str();
}

absl::Status LoadBytes(Model& m, const std::string& bytes) {
  torch::serialize::InputArchive archive;
  std::istringstream in(bytes);
  archive.load_from(in);
  return m.Load(archive);
}

TEST(BuiltinModelsTest, SaveLoadRoundTrip) {
  auto saved = Mlp({64, 32}, 1);
  auto loaded = Mlp({64, 32}, 2);
  ASSERT_FALSE(SameParameters(*saved, *loaded));
  const std::vector<at::Tensor> handles = loaded->Parameters();
  ASSERT_TRUE(LoadBytes(*loaded, SaveBytes(*saved)).ok());
  EXPECT_TRUE(SameParameters(*saved, *loaded));
  // Loaded in place: tensors handed out earlier (to an optimizer) see it.
  EXPECT_TRUE(torch::equal(handles[0], saved->Parameters()[0]));

  auto cnn_a = Cnn(1);
  auto cnn_b = Cnn(2);
  ASSERT_TRUE(LoadBytes(*cnn_b, SaveBytes(*cnn_a)).ok());
  EXPECT_TRUE(SameParameters(*cnn_a, *cnn_b));
}

TEST(BuiltinModelsTest, ArchiveLayoutMatchesTorchModuleSave) {
  // A built-in model's archive is what torch::nn::Module::save writes, so a
  // plain torch::nn::Linear with the same shape reads fc0's entries.
  auto m = Mlp({});
  torch::serialize::OutputArchive archive;
  ASSERT_TRUE(m->Save(archive).ok());
  std::ostringstream out;
  archive.save_to(out);
  torch::serialize::InputArchive in_archive;
  std::istringstream in(out.str());
  in_archive.load_from(in);
  torch::serialize::InputArchive fc0;
  ASSERT_TRUE(in_archive.try_read("fc0", fc0));
  torch::nn::Linear linear(784, 10);
  linear->load(fc0);
  EXPECT_TRUE(torch::equal(linear->weight, m->Parameters()[0]));
}

TEST(BuiltinModelsTest, LoadRejectsOtherArchitecturesAndChangesNothing) {
  auto target = Mlp({64, 32}, 2);
  auto before = Mlp({64, 32}, 2);
  absl::Status shape = LoadBytes(*target, SaveBytes(*Mlp({64, 16})));
  EXPECT_EQ(shape.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(shape.message()),
              HasSubstr("checkpoint entry fc1.bias is Float [16], the "
                        "model's is Float [32]"));
  absl::Status missing = LoadBytes(*target, SaveBytes(*Mlp({64})));
  EXPECT_THAT(std::string(missing.message()),
              HasSubstr("fc1.bias is Float [10]"));
  absl::Status extra = LoadBytes(*Mlp({10}), SaveBytes(*Mlp({10, 10})));
  EXPECT_THAT(std::string(extra.message()),
              HasSubstr("checkpoint has entry fc2, which the model lacks"));
  absl::Status other = LoadBytes(*target, SaveBytes(*Cnn()));
  EXPECT_THAT(std::string(other.message()),
              HasSubstr("checkpoint has no entries for module fc0"));
  EXPECT_TRUE(SameParameters(*target, *before));
}

TEST(BuiltinModelsTest, RejectsBadMlpSizes) {
  EXPECT_THAT(std::string(MakeMlp({0}, 1).status().message()),
              HasSubstr("hidden layer 0 width must be in [1, "));
  EXPECT_THAT(std::string(MakeMlp({16, -3}, 1).status().message()),
              HasSubstr("hidden layer 1 width"));
  EXPECT_THAT(
      std::string(MakeMlp(std::vector<int64_t>(17, 8), 1).status().message()),
      HasSubstr("at most 16 hidden layers"));
  EXPECT_THAT(std::string(MakeMlp({65536, 65536, 65536}, 1).status().message()),
              HasSubstr("parameters with hidden sizes [65536, 65536, 65536]"));
}

}  // namespace
}  // namespace ringleader
