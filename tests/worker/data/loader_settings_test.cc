#include "worker/data/loader_settings.h"

#include "gtest/gtest.h"

namespace ringleader {
namespace {

TEST(LoaderSettingsTest, DefaultsShareTheHostsCpusAmongItsRanks) {
  v1::DatasetSpec d;
  d.set_format(v1::DATASET_FORMAT_IMAGE_FOLDER);
  EXPECT_EQ(LoaderSettingsFor(d, 4, 16).threads, 4);
  EXPECT_EQ(LoaderSettingsFor(d, 3, 2).threads, 1);  // At least one.
  EXPECT_EQ(LoaderSettingsFor(d, 0, 8).threads, 8);  // Unknown: alone.
  EXPECT_EQ(LoaderSettingsFor(d, 1, 8).prefetch, 4);
  d.set_format(v1::DATASET_FORMAT_NPY);
  EXPECT_EQ(LoaderSettingsFor(d, 1, 8).prefetch, 2);
  d.set_loader_threads(3);
  d.set_prefetch_batches(9);
  EXPECT_EQ(LoaderSettingsFor(d, 4, 16).threads, 3);
  EXPECT_EQ(LoaderSettingsFor(d, 4, 16).prefetch, 9);
  EXPECT_GE(UsableCpus(), 1);
}

}  // namespace
}  // namespace ringleader
