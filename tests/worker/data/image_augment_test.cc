#include "worker/data/image_augment.h"

#include <torch/torch.h>

#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace ringleader {
namespace {

FieldShape Float(std::vector<int64_t> dims) {
  return FieldShape{ElementType::kFloat32, std::move(dims)};
}

// torchvision's semantics written independently: pad every side by p with
// the channel's fill, take the H x W window at (top, left), then mirror.
at::Tensor Reference(const at::Tensor& img, const AugmentDraw& d, int64_t p,
                     const std::vector<float>& fill, bool flip_enabled) {
  const int64_t c = img.size(0), h = img.size(1), w = img.size(2);
  at::Tensor padded = torch::empty({c, h + 2 * p, w + 2 * p});
  for (int64_t k = 0; k < c; ++k) padded[k].fill_(fill[k]);
  padded.slice(1, p, p + h).slice(2, p, p + w).copy_(img);
  at::Tensor out =
      padded.slice(1, d.top, d.top + h).slice(2, d.left, d.left + w).clone();
  return flip_enabled && d.flip ? out.flip({-1}) : out;
}

TEST(ImageAugmentTest, DrawsArePureFunctionsCoveringTheRange) {
  const int64_t p = 4;
  std::set<int64_t> tops, lefts;
  int flips = 0;
  for (int64_t id = 0; id < 10000; ++id) {
    const AugmentDraw d = DrawAugment(7, 3, id, p);
    const AugmentDraw again = DrawAugment(7, 3, id, p);
    ASSERT_EQ(d.top, again.top);
    ASSERT_EQ(d.left, again.left);
    ASSERT_EQ(d.flip, again.flip);
    ASSERT_GE(d.top, 0);
    ASSERT_LE(d.top, 2 * p);
    tops.insert(d.top);
    lefts.insert(d.left);
    flips += d.flip;
  }
  EXPECT_EQ(tops.size(), 2 * p + 1);
  EXPECT_EQ(lefts.size(), 2 * p + 1);
  EXPECT_GT(flips, 4700);
  EXPECT_LT(flips, 5300);
  // Another epoch or seed draws differently for most samples.
  int same_epoch = 0, same_seed = 0;
  for (int64_t id = 0; id < 1000; ++id) {
    const AugmentDraw a = DrawAugment(7, 3, id, p);
    const AugmentDraw b = DrawAugment(7, 4, id, p);
    const AugmentDraw c = DrawAugment(8, 3, id, p);
    same_epoch += a.top == b.top && a.left == b.left && a.flip == b.flip;
    same_seed += a.top == c.top && a.left == c.left && a.flip == c.flip;
  }
  EXPECT_LT(same_epoch, 50);
  EXPECT_LT(same_seed, 50);
}

TEST(ImageAugmentTest, CropAndFlipMatchTorchvisionsDefinition) {
  torch::manual_seed(1);
  const ImageAugmentSpec spec{4, true, {-1.5f, 0.25f, 2.0f}};
  absl::StatusOr<ImageAugment> aug =
      ImageAugment::Create(spec, {Float({3, 8, 8})});
  ASSERT_TRUE(aug.ok()) << aug.status();
  const std::vector<int64_t> ids = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  const at::Tensor original = torch::randn({12, 3, 8, 8});
  std::vector<at::Tensor> inputs = {original.clone()};
  aug->Apply(inputs, ids, /*seed=*/42, /*epoch=*/2);
  int changed = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    const AugmentDraw d = DrawAugment(42, 2, ids[i], 4);
    const at::Tensor want =
        Reference(original[i], d, 4, spec.fill, /*flip_enabled=*/true);
    EXPECT_TRUE(torch::equal(inputs[0][i], want)) << "sample " << i;
    changed += !torch::equal(inputs[0][i], original[i]);
  }
  EXPECT_GT(changed, 8);
}

TEST(ImageAugmentTest, ASampleIsAugmentedTheSameWhereverItIsInABatch) {
  const ImageAugmentSpec spec{2, true, {}};
  absl::StatusOr<ImageAugment> aug =
      ImageAugment::Create(spec, {Float({5, 5})});
  ASSERT_TRUE(aug.ok());
  torch::manual_seed(2);
  const at::Tensor a = torch::randn({5, 5}), b = torch::randn({5, 5});
  std::vector<at::Tensor> one = {torch::stack({a, b})};
  std::vector<at::Tensor> other = {torch::stack({b, a})};
  aug->Apply(one, {10, 20}, 1, 0);
  aug->Apply(other, {20, 10}, 1, 0);
  EXPECT_TRUE(torch::equal(one[0][0], other[0][1]));
  EXPECT_TRUE(torch::equal(one[0][1], other[0][0]));
}

TEST(ImageAugmentTest, OnlyImageInputsChange) {
  absl::StatusOr<ImageAugment> aug =
      ImageAugment::Create({3, true, {}}, {Float({1, 6, 6}), Float({4})});
  ASSERT_TRUE(aug.ok());
  const at::Tensor side = torch::arange(8, torch::kFloat).view({2, 4});
  std::vector<at::Tensor> inputs = {torch::ones({2, 1, 6, 6}), side.clone()};
  aug->Apply(inputs, {3, 4}, 9, 1);
  EXPECT_TRUE(torch::equal(inputs[1], side));
}

TEST(ImageAugmentTest, RejectsDataWithoutImagesAndFillsThatDoNotFit) {
  EXPECT_FALSE(ImageAugment::Create({4, false, {}}, {Float({10})}).ok());
  EXPECT_FALSE(ImageAugment::Create({4, false, {}},
                                    {FieldShape{ElementType::kInt64, {64}}})
                   .ok());
  absl::StatusOr<ImageAugment> bad =
      ImageAugment::Create({4, false, {0.f, 1.f}}, {Float({3, 8, 8})});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("dataset.augmentation"),
            std::string::npos);
}

}  // namespace
}  // namespace ringleader
