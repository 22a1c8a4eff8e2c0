#include "worker/data/image_job_data.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "worker/data/empty_dataset.h"
#include "worker/data/encoded_image_dataset.h"
#include "worker/data/image_folder.h"
#include "worker/data/tar_shards.h"

namespace ringleader {
namespace {

// The split's sample list; null when the spec names no such split.
absl::StatusOr<std::shared_ptr<const EncodedSamples>> OpenSamples(
    const v1::DatasetSpec& spec, bool train) {
  if (spec.format() == v1::DATASET_FORMAT_IMAGE_FOLDER) {
    const std::string& root = train ? spec.train_root() : spec.test_root();
    if (root.empty()) return std::shared_ptr<const EncodedSamples>();
    auto s = ImageFolderSamples::Open(root, spec.skip_corrupt());
    if (!s.ok()) return s.status();
    return std::shared_ptr<const EncodedSamples>(*std::move(s));
  }
  const auto& shards = train ? spec.train_shards() : spec.test_shards();
  if (shards.empty()) return std::shared_ptr<const EncodedSamples>();
  auto s = TarShardSamples::Open(
      std::vector<std::string>(shards.begin(), shards.end()),
      spec.skip_corrupt());
  if (!s.ok()) return s.status();
  return std::shared_ptr<const EncodedSamples>(*std::move(s));
}

absl::Status CheckSameClasses(const EncodedSamples& train,
                              const EncodedSamples& test) {
  if (train.class_names() == test.class_names()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "the test ", test.Describe(), " has other classes than the training ",
      train.Describe(), " (", absl::StrJoin(test.class_names(), ", "), " vs ",
      absl::StrJoin(train.class_names(), ", "),
      "): ImageFolder numbers classes by the sorted folder names of each "
      "root"));
}

absl::StatusOr<std::unique_ptr<Dataset>> MakeSplit(
    const v1::DatasetSpec& spec, uint64_t seed, bool train,
    std::shared_ptr<const EncodedSamples> samples) {
  EncodedImageDataset::Options o;
  o.transform = ImageTransformOf(spec, train);
  o.seed = seed;
  o.skip_corrupt = spec.skip_corrupt();
  o.split = train ? "train" : "test";
  auto ds = EncodedImageDataset::Create(std::move(samples), o);
  if (!ds.ok()) return ds.status();
  return std::unique_ptr<Dataset>(*std::move(ds));
}

}  // namespace

ImageTransformSpec ImageTransformOf(const v1::DatasetSpec& spec, bool train) {
  const v1::ImageSpec& i = spec.image();
  ImageTransformSpec t;
  t.size = i.size() == 0 ? 224 : i.size();
  t.resize_size = i.resize_size() == 0 ? t.size * 256 / 224 : i.resize_size();
  t.random_crop = train && !i.no_random_crop();
  t.horizontal_flip = train && spec.augmentation().horizontal_flip();
  if (i.has_min_scale()) t.range.min_scale = i.min_scale();
  if (i.has_max_scale()) t.range.max_scale = i.max_scale();
  if (i.has_min_ratio()) t.range.min_ratio = i.min_ratio();
  if (i.has_max_ratio()) t.range.max_ratio = i.max_ratio();
  const v1::InputTransform& n = spec.transform();
  t.scale = n.scale() == 0 ? 1.0 / 255.0 : n.scale();
  t.mean.assign(n.mean().begin(), n.mean().end());
  t.std.assign(n.std().begin(), n.std().end());
  t.reduced_decode = !i.full_decode();
  return t;
}

absl::StatusOr<ImageSplits> LoadImageSplits(const v1::DatasetSpec& spec,
                                            uint64_t seed) {
  auto train = OpenSamples(spec, true);
  if (!train.ok()) return train.status();
  if (*train == nullptr) {
    return absl::InvalidArgumentError(
        "train split: no images (dataset.train_root or dataset.train_shards)");
  }
  auto test = OpenSamples(spec, false);
  if (!test.ok()) return test.status();
  if (*test != nullptr) {
    if (absl::Status s = CheckSameClasses(**train, **test); !s.ok()) return s;
  }
  ImageSplits out;
  out.class_names = (*train)->class_names();
  auto train_ds = MakeSplit(spec, seed, true, *train);
  if (!train_ds.ok()) return train_ds.status();
  out.train = *std::move(train_ds);
  if (*test == nullptr) {
    out.test = std::make_unique<EmptyDataset>(out.train->input_fields(),
                                              out.train->target_field(),
                                              "test split (none given)");
    return out;
  }
  auto test_ds = MakeSplit(spec, seed, false, *test);
  if (!test_ds.ok()) return test_ds.status();
  out.test = *std::move(test_ds);
  return out;
}

}  // namespace ringleader
