#include "worker/train/step/token_vocabulary.h"

#include <torch/script.h>
#include <torch/torch.h>

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/data/empty_dataset.h"
#include "worker/data/token_dataset.h"
#include "worker/model/torchscript_model.h"
#include "worker/train/step/model_probe.h"

namespace ringleader {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kVocab = 16;
constexpr int64_t kBlock = 4;

// A language model compiled from TorchScript source: an embedding table of
// kVocab x 8 whose transpose is also the output head, so forward(x) is
// logits [B, T, kVocab]; `body` replaces forward's.
std::unique_ptr<Model> LanguageModel(const std::string& name,
                                     const std::string& forward) {
  torch::jit::Module m(name);
  m.register_attribute("training", c10::BoolType::get(), true);
  m.register_parameter("weight", torch::randn({kVocab, 8}).requires_grad_(),
                       false);
  m.define(forward);
  const std::string path = absl::StrCat(::testing::TempDir(), "/", name, ".pt");
  m.save(path);
  absl::StatusOr<std::unique_ptr<Model>> model = LoadTorchScriptModel(path);
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *std::move(model) : nullptr;
}

constexpr char kLogits[] =
    "def forward(self, x):\n"
    "    return torch.matmul(torch.embedding(self.weight, x), "
    "self.weight.t())\n";

// Raw little-endian uint16 tokens, 0, 1, 2, ... (mod kVocab), with `bad`
// at position `at`.
std::string TokenFile(const std::string& name, int n, int at, uint16_t bad) {
  std::vector<uint16_t> ids(n);
  for (int i = 0; i < n; ++i) ids[i] = static_cast<uint16_t>(i % kVocab);
  if (at >= 0) ids[at] = bad;
  const std::string path = absl::StrCat(::testing::TempDir(), "/", name);
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(ids.data()),
             static_cast<std::streamsize>(ids.size() * sizeof(uint16_t)));
  return path;
}

v1::JobSpec TokensSpec() {
  v1::JobSpec spec;
  spec.mutable_dataset()->set_format(v1::DATASET_FORMAT_TOKENS);
  spec.mutable_dataset()->set_block_size(kBlock);
  spec.mutable_task()->set_kind(v1::TASK_KIND_LANGUAGE_MODEL);
  return spec;
}

Task LanguageTask() {
  v1::TaskSpec t;
  t.set_kind(v1::TASK_KIND_LANGUAGE_MODEL);
  return Task(t);
}

TEST(TokenVocabularyTest, TheLogitsLastDimension) {
  auto model = LanguageModel("lm", kLogits);
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(ModelVocabulary(*model, LanguageTask(), kBlock, torch::kCPU),
            kVocab);
  EXPECT_TRUE(model->is_training());
  EXPECT_EQ(ModelVocabulary(*model, LanguageTask(), 0, torch::kCPU), 0);
}

TEST(TokenVocabularyTest, AModelReturningOnlyItsLossShowsNone) {
  v1::TaskSpec t;
  t.set_kind(v1::TASK_KIND_LANGUAGE_MODEL);
  t.set_loss(v1::LOSS_KIND_MODEL);
  auto model = LanguageModel(
      "loss_only",
      "def forward(self, x, targets):\n"
      "    return torch.sum(torch.embedding(self.weight, x)) * 0.0\n");
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(ModelVocabulary(*model, Task(t), kBlock, torch::kCPU), 0);
}

TEST(TokenVocabularyTest, SetsTheLimitOfTokenSplitsOnly) {
  auto model = LanguageModel("limits", kLogits);
  ASSERT_NE(model, nullptr);
  auto train = TokenDataset::Create(Split::kTrain,
                                    TokenFile("limits.bin", 64, -1, 0), kBlock)
                   .value();
  EmptyDataset test(train->input_fields(), train->target_field(), "none");
  v1::JobSpec spec = TokensSpec();
  EXPECT_EQ(LimitTokenVocabulary(spec, *model, LanguageTask(), *train, test,
                                 torch::kCPU),
            kVocab);
  EXPECT_EQ(train->vocabulary_limit(), kVocab);
  spec.mutable_task()->set_num_classes(20);  // The spec's word wins.
  EXPECT_EQ(LimitTokenVocabulary(spec, *model, LanguageTask(), *train, test,
                                 torch::kCPU),
            20);
  EXPECT_EQ(train->vocabulary_limit(), 20);
  spec.mutable_dataset()->set_format(v1::DATASET_FORMAT_NPY);
  EXPECT_EQ(LimitTokenVocabulary(spec, *model, LanguageTask(), *train, test,
                                 torch::kCPU),
            0);
}

TEST(TokenVocabularyTest, AnIdPastTheVocabularyFailsNamingItNotATraceback) {
  // Token 6 is 40: an input of window 1, which the model probe reads.
  const std::string path = TokenFile("bad.bin", 64, 6, 40);
  auto model = LanguageModel("probe", kLogits);
  ASSERT_NE(model, nullptr);
  auto train = TokenDataset::Create(Split::kTrain, path, kBlock).value();
  EmptyDataset test(train->input_fields(), train->target_field(), "none");
  // Without the limit the embedding fails, deep in TorchScript.
  const absl::Status before =
      ProbeModel(*model, LanguageTask(), *train, torch::kCPU);
  ASSERT_FALSE(before.ok());
  EXPECT_THAT(std::string(before.message()), Not(HasSubstr("token id 40")));
  LimitTokenVocabulary(TokensSpec(), *model, LanguageTask(), *train, test,
                       torch::kCPU);
  const absl::Status after =
      ProbeModel(*model, LanguageTask(), *train, torch::kCPU);
  EXPECT_EQ(after.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(after.message()),
              HasSubstr("train split of " + path +
                        ": token id 40 at position 6 is >= the model's "
                        "vocabulary size 16"));
}

}  // namespace
}  // namespace ringleader
