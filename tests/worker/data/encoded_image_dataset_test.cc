// The image dataset as the loader uses it: a sample's tensor depends only on
// (seed, epoch, index) (not on the batch or the thread that decodes it),
// epochs draw new crops, and a file corrupt inside (its ends look whole)
// fails the gather naming it, or is replaced and counted with skip_corrupt.
// Also the loader's threads: several give the batches one gives.
#include "worker/data/encoded_image_dataset.h"

#include <ATen/ATen.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/worker/data/image_test_files.h"
#include "tests/worker/data/test_files.h"
#include "worker/data/batch_loader.h"
#include "worker/data/image_folder.h"

namespace ringleader {
namespace {

using ::testing::HasSubstr;
using testing_files::ClassPicture;
using testing_files::EncodeJpeg;

constexpr int kSize = 24;

// Two classes of 6 JPEGs (one progressive, one grey); `corrupt` garbles
// the middle of a/3.jpg, keeping its first and last bytes.
std::string MakeRoot(const std::string& name, bool corrupt) {
  const std::string root = testing_files::TempDir(name);
  for (const char* c : {"a", "b"}) {
    ::mkdir(absl::StrCat(root, "/", c).c_str(), 0755);
    for (int i = 0; i < 6; ++i) {
      const int cls = c[0] - 'a';
      std::string jpg = EncodeJpeg(40 + 3 * i, 30 + 2 * i,
                                   ClassPicture(40 + 3 * i, 30 + 2 * i, cls, i),
                                   i == 1, i == 2);
      if (corrupt && cls == 0 && i == 3) {
        for (size_t k = 4; k < jpg.size() - 4; ++k) jpg[k] = '\x01';
      }
      testing_files::WriteFile(absl::StrCat(root, "/", c, "/", i, ".jpg"), jpg);
    }
  }
  return root;
}

std::unique_ptr<EncodedImageDataset> Open(const std::string& root,
                                          bool skip_corrupt,
                                          bool train = true) {
  auto samples = ImageFolderSamples::Open(root, skip_corrupt);
  EXPECT_TRUE(samples.ok()) << samples.status();
  EncodedImageDataset::Options o;
  o.transform.size = kSize;
  o.transform.resize_size = 28;
  o.transform.random_crop = train;
  o.transform.horizontal_flip = train;
  o.seed = 42;
  o.skip_corrupt = skip_corrupt;
  auto ds = EncodedImageDataset::Create(
      std::shared_ptr<const EncodedSamples>(*std::move(samples)), o);
  EXPECT_TRUE(ds.ok());
  return *std::move(ds);
}

std::vector<float> One(const Dataset& ds, int64_t epoch, int64_t index,
                       int64_t* label = nullptr) {
  std::vector<float> img(3 * kSize * kSize);
  int64_t l = -1;
  EXPECT_TRUE(ds.GatherForEpoch(epoch, &index, 1, {img.data()}, &l).ok());
  if (label != nullptr) *label = l;
  return img;
}

TEST(EncodedImageDatasetTest, ASampleDependsOnlyOnSeedEpochAndIndex) {
  auto ds = Open(MakeRoot("det", false), false);
  ASSERT_EQ(ds->size(), 12);
  EXPECT_EQ(ds->input_fields()[0].ToString(), "float32 [3, 24, 24]");
  EXPECT_EQ(ds->num_classes(), 2);
  const int64_t both[2] = {9, 4};
  std::vector<float> pair(2 * 3 * kSize * kSize);
  int64_t labels[2];
  ASSERT_TRUE(ds->GatherForEpoch(3, both, 2, {pair.data()}, labels).ok());
  EXPECT_EQ(labels[0], 1);
  EXPECT_EQ(labels[1], 0);
  const std::vector<float> alone = One(*ds, 3, 4);
  EXPECT_TRUE(
      std::equal(alone.begin(), alone.end(), pair.begin() + 3 * kSize * kSize));
  EXPECT_NE(One(*ds, 3, 4), One(*ds, 4, 4)) << "a new epoch, a new crop";
  auto eval = Open(MakeRoot("det_eval", false), false, /*train=*/false);
  EXPECT_EQ(One(*eval, 3, 4), One(*eval, 4, 4)) << "evaluation is fixed";
}

TEST(EncodedImageDatasetTest, CorruptInsideFailsNamingTheFile) {
  const std::string root = MakeRoot("corrupt", true);
  auto ds = Open(root, false);
  const int64_t index = 3;  // a/3.jpg.
  std::vector<float> img(3 * kSize * kSize);
  int64_t label = 0;
  absl::Status s = ds->GatherForEpoch(0, &index, 1, {img.data()}, &label);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr(root + "/a/3.jpg: not a readable JPEG"));
}

TEST(EncodedImageDatasetTest, SkipCorruptReplacesAndCounts) {
  auto ds = Open(MakeRoot("skip", true), true);
  int64_t label = -1;
  const std::vector<float> replaced = One(*ds, 0, 3, &label);
  EXPECT_EQ(label, 0);  // a/4.jpg stands in for it.
  One(*ds, 1, 3);
  EXPECT_EQ(ds->skipped_samples(), 1) << "distinct samples, not reads";
}

TEST(EncodedImageDatasetTest, LoaderThreadsGiveTheBatchesOneThreadGives) {
  auto ds = Open(MakeRoot("threads", false), false);
  std::vector<int64_t> order = {5, 0, 11, 7, 2, 9, 1, 10, 3, 8, 6};
  std::vector<std::vector<at::Tensor>> got(2);
  for (int threads : {1, 3}) {
    BatchLoaderOptions o;
    o.threads = threads;
    o.prefetch = 2;
    o.epoch = 5;
    auto loader = BatchLoader::Create(*ds, order, 4, o);
    ASSERT_TRUE(loader.ok());
    EXPECT_EQ((*loader)->threads(), threads);
    while (std::optional<Batch> b = (*loader)->Next()) {
      got[threads == 1 ? 0 : 1].push_back(b->inputs[0]);
    }
    EXPECT_TRUE((*loader)->status().ok());
  }
  ASSERT_EQ(got[0].size(), 3u);
  ASSERT_EQ(got[1].size(), 3u);
  for (size_t b = 0; b < 3; ++b) EXPECT_TRUE(at::equal(got[0][b], got[1][b]));
}

TEST(EncodedImageDatasetTest, LoaderStopsAtTheCorruptBatch) {
  auto ds = Open(MakeRoot("loader_bad", true), false);
  BatchLoaderOptions o;
  o.threads = 2;
  o.epoch = 0;
  auto loader = BatchLoader::Create(*ds, {0, 1, 2, 3, 4, 5}, 2, o);
  ASSERT_TRUE(loader.ok());
  int batches = 0;
  while ((*loader)->Next().has_value()) ++batches;
  EXPECT_LE(batches, 1);
  EXPECT_THAT((*loader)->status().message(), HasSubstr("batch 1: "));
  EXPECT_THAT((*loader)->status().message(), HasSubstr("/a/3.jpg"));
}

}  // namespace
}  // namespace ringleader
