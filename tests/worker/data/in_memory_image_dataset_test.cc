#include "worker/data/in_memory_image_dataset.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/data/dataset.h"
#include "worker/data/idx_reader.h"

namespace ringleader {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Three 2x2 images: image i has pixels {i, 100 + i, 200 + i, 255}.
IdxDataset Tiny() {
  IdxDataset d;
  d.images.count = 3;
  d.images.rows = 2;
  d.images.cols = 2;
  for (uint8_t i = 0; i < 3; ++i) {
    d.images.pixels.insert(d.images.pixels.end(),
                           {i, uint8_t(100 + i), uint8_t(200 + i), 255});
  }
  d.labels = {7, 0, 9};
  return d;
}

float Normalized(int x, Normalization n) {
  return (static_cast<float>(x) / 255.0f - n.mean) / n.stddev;
}

TEST(InMemoryImageDatasetTest, GathersInIndexOrderAndNormalizes) {
  absl::StatusOr<std::unique_ptr<InMemoryImageDataset>> ds =
      InMemoryImageDataset::Create(Tiny());
  ASSERT_TRUE(ds.ok()) << ds.status();
  EXPECT_EQ((*ds)->size(), 3);
  EXPECT_EQ((*ds)->image_rows(), 2);
  EXPECT_EQ((*ds)->image_cols(), 2);
  EXPECT_EQ((*ds)->num_classes(), 10);
  const int64_t indices[] = {2, 0, 2};
  std::vector<float> images(3 * 4);
  std::vector<int64_t> labels(3);
  ASSERT_TRUE((*ds)->Gather(indices, 3, images.data(), labels.data()).ok());
  EXPECT_THAT(labels, ElementsAre(9, 7, 9));
  const Normalization n = kFashionMnistNormalization;
  EXPECT_THAT(std::vector<float>(images.begin(), images.begin() + 4),
              ElementsAre(Normalized(2, n), Normalized(102, n),
                          Normalized(202, n), Normalized(255, n)));
  EXPECT_EQ(images[4], Normalized(0, n));
  EXPECT_EQ(images[8], Normalized(2, n));
}

TEST(InMemoryImageDatasetTest, UsesTheGivenNormalization) {
  auto ds = InMemoryImageDataset::Create(Tiny(), kMnistNormalization);
  ASSERT_TRUE(ds.ok());
  const int64_t index = 1;
  float image[4];
  int64_t label;
  ASSERT_TRUE((*ds)->Gather(&index, 1, image, &label).ok());
  EXPECT_FLOAT_EQ(image[0], (1 / 255.0f - 0.1307f) / 0.3081f);
  EXPECT_EQ(label, 0);
}

TEST(InMemoryImageDatasetTest, OutOfRangeIndexWritesNothing) {
  auto ds = InMemoryImageDataset::Create(Tiny());
  ASSERT_TRUE(ds.ok());
  for (const int64_t bad :
       {int64_t{3}, int64_t{-1}, std::numeric_limits<int64_t>::max()}) {
    const int64_t indices[] = {0, bad};
    std::vector<float> images(8, 42.0f);
    std::vector<int64_t> labels(2, 42);
    absl::Status s = (*ds)->Gather(indices, 2, images.data(), labels.data());
    EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
    EXPECT_THAT(std::string(s.message()),
                HasSubstr("outside the dataset of 3 samples"));
    EXPECT_EQ(images[0], 42.0f);
    EXPECT_EQ(labels[0], 42);
  }
}

TEST(InMemoryImageDatasetTest, RejectsLabelsOutsideClasses) {
  absl::Status s =
      InMemoryImageDataset::Create(Tiny(), kFashionMnistNormalization,
                                   /*num_classes=*/9)
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("sample 2 has label 9, outside [0, 9)"));
}

TEST(InMemoryImageDatasetTest, RejectsBadArguments) {
  EXPECT_FALSE(
      InMemoryImageDataset::Create(Tiny(), kFashionMnistNormalization, 0).ok());
  EXPECT_FALSE(InMemoryImageDataset::Create(Tiny(), {0.5f, 0.0f}).ok());
  EXPECT_FALSE(InMemoryImageDataset::Create(
                   Tiny(), {0.5f, std::numeric_limits<float>::quiet_NaN()})
                   .ok());
  IdxDataset inconsistent = Tiny();
  inconsistent.labels.pop_back();
  EXPECT_THAT(
      std::string(
          InMemoryImageDataset::Create(inconsistent).status().message()),
      HasSubstr("inconsistent"));
}

}  // namespace
}  // namespace ringleader
