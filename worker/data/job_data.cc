#include "worker/data/job_data.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "worker/data/empty_dataset.h"
#include "worker/data/idx_reader.h"
#include "worker/data/image_job_data.h"
#include "worker/data/in_memory_image_dataset.h"
#include "worker/data/input_transform.h"
#include "worker/data/npy_dataset.h"
#include "worker/data/npy_header.h"
#include "worker/data/synthetic_dataset.h"
#include "worker/data/token_dataset.h"

namespace ringleader {
namespace {

absl::StatusOr<JobData> LoadIdx(const v1::DatasetSpec& spec) {
  JobData out;
  for (Split split : {Split::kTrain, Split::kTest}) {
    absl::StatusOr<IdxDataset> idx = LoadIdxSplit(spec.path(), split);
    if (!idx.ok()) return idx.status();
    auto ds = InMemoryImageDataset::Create(
        *std::move(idx), kFashionMnistNormalization, 10,
        absl::StrCat(split == Split::kTrain ? "train" : "test",
                     " split of the IDX files in ", spec.path()));
    if (!ds.ok()) return ds.status();
    (split == Split::kTrain ? out.train : out.test) = *std::move(ds);
  }
  return out;
}

absl::StatusOr<JobData> LoadSynthetic(const v1::DatasetSpec& spec,
                                      uint64_t seed) {
  auto train = SyntheticDataset::Create(spec.synthetic_train_size(), seed,
                                        Split::kTrain);
  if (!train.ok()) return train.status();
  auto test =
      SyntheticDataset::Create(spec.synthetic_test_size(), seed, Split::kTest);
  if (!test.ok()) return test.status();
  JobData out;
  out.train = *std::move(train);
  out.test = *std::move(test);
  return out;
}

// The test split when the job gives none: no samples, the train fields,
// so nothing downstream needs a special case beyond size() == 0.
std::unique_ptr<Dataset> NoTestSplit(const Dataset& train) {
  return std::make_unique<EmptyDataset>(
      train.input_fields(), train.target_field(), "test split (none given)");
}

// A model sees the test split through the train split's fields, so they
// must be the same.
absl::Status CheckSameFields(const Dataset& train, const Dataset& test) {
  const std::vector<FieldShape> a = train.input_fields();
  const std::vector<FieldShape> b = test.input_fields();
  if (a.size() != b.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(test.Describe(), " has ", b.size(), " inputs but the ",
                     train.Describe(), " has ", a.size()));
  }
  for (size_t k = 0; k < a.size(); ++k) {
    if (!(a[k] == b[k])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", k, " is ", b[k].ToString(), " in the ", test.Describe(),
          " but ", a[k].ToString(), " in the ", train.Describe()));
    }
  }
  if (!(train.target_field() == test.target_field())) {
    return absl::InvalidArgumentError(
        absl::StrCat("targets are ", test.target_field().ToString(), " in the ",
                     test.Describe(), " but ", train.target_field().ToString(),
                     " in the ", train.Describe()));
  }
  return absl::OkStatus();
}

InputTransformSpec TransformOf(const v1::InputTransform& t) {
  return InputTransformSpec{
      t.scale(), std::vector<double>(t.mean().begin(), t.mean().end()),
      std::vector<double>(t.std().begin(), t.std().end())};
}

std::vector<std::string> InputsOf(const v1::NpySplit& split) {
  return std::vector<std::string>(split.inputs().begin(), split.inputs().end());
}

absl::StatusOr<JobData> LoadNpy(const v1::DatasetSpec& spec) {
  const InputTransformSpec transform = TransformOf(spec.transform());
  auto train = NpyDataset::Create(Split::kTrain, InputsOf(spec.train()),
                                  spec.train().targets(), transform);
  if (!train.ok()) return train.status();
  JobData out;
  out.train = *std::move(train);
  const v1::NpySplit& test = spec.test();
  if (test.inputs().empty() && test.targets().empty()) {
    out.test = NoTestSplit(*out.train);
    return out;
  }
  auto test_ds = NpyDataset::Create(Split::kTest, InputsOf(test),
                                    test.targets(), transform);
  if (!test_ds.ok()) return test_ds.status();
  if (absl::Status s = CheckSameFields(*out.train, **test_ds); !s.ok()) {
    return s;
  }
  out.test = *std::move(test_ds);
  return out;
}

absl::StatusOr<JobData> LoadTokens(const v1::DatasetSpec& spec) {
  if (spec.train_tokens().empty()) {
    return absl::InvalidArgumentError(
        "train split: no token file (dataset.train_tokens is empty)");
  }
  const NpyDtype raw = spec.token_dtype() == v1::TOKEN_DTYPE_UINT32
                           ? NpyDtype::kUint32
                           : NpyDtype::kUint16;
  auto train = TokenDataset::Create(Split::kTrain, spec.train_tokens(),
                                    spec.block_size(), raw);
  if (!train.ok()) return train.status();
  JobData out;
  out.train = *std::move(train);
  if (spec.test_tokens().empty()) {
    out.test = NoTestSplit(*out.train);
    return out;
  }
  auto test = TokenDataset::Create(Split::kTest, spec.test_tokens(),
                                   spec.block_size(), raw);
  if (!test.ok()) return test.status();
  out.test = *std::move(test);
  return out;
}

absl::StatusOr<JobData> LoadSplits(const v1::DatasetSpec& spec, uint64_t seed) {
  switch (spec.format()) {
    case v1::DATASET_FORMAT_IDX:
      return LoadIdx(spec);
    case v1::DATASET_FORMAT_SYNTHETIC:
      return LoadSynthetic(spec, seed);
    case v1::DATASET_FORMAT_NPY:
      return LoadNpy(spec);
    case v1::DATASET_FORMAT_TOKENS:
      return LoadTokens(spec);
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("unsupported dataset format ", spec.format()));
  }
}

// The padding is what a 0 pixel becomes under the transform: (0 - mean) /
// std per channel, as torchvision pads before ToTensor and Normalize.
ImageAugmentSpec AugmentSpec(const v1::DatasetSpec& spec) {
  const v1::ImageAugmentation& a = spec.augmentation();
  ImageAugmentSpec out;
  out.crop_padding = a.random_crop_padding();
  out.horizontal_flip = a.horizontal_flip();
  const v1::InputTransform& t = spec.transform();
  for (int c = 0; c < t.mean_size(); ++c) {
    const double std = c < t.std_size() ? t.std(c) : 1.0;
    out.fill.push_back(static_cast<float>(-t.mean(c) / std));
  }
  return out;
}

}  // namespace

absl::StatusOr<JobData> LoadJobData(const v1::DatasetSpec& spec,
                                    uint64_t seed) {
  if (spec.format() == v1::DATASET_FORMAT_IMAGE_FOLDER ||
      spec.format() == v1::DATASET_FORMAT_TAR_SHARDS) {
    // Their flips are drawn while decoding, not by an ImageAugment.
    absl::StatusOr<ImageSplits> images = LoadImageSplits(spec, seed);
    if (!images.ok()) return images.status();
    JobData out;
    out.train = std::move(images->train);
    out.test = std::move(images->test);
    out.class_names = std::move(images->class_names);
    return out;
  }
  absl::StatusOr<JobData> data = LoadSplits(spec, seed);
  if (!data.ok()) return data;
  const ImageAugmentSpec augment = AugmentSpec(spec);
  if (!augment.active()) return data;
  absl::StatusOr<ImageAugment> a =
      ImageAugment::Create(augment, data->train->input_fields());
  if (!a.ok()) return a.status();
  data->augment = *std::move(a);
  return data;
}

}  // namespace ringleader
