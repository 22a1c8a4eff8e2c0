#include "worker/job_data.h"

#include "absl/strings/str_cat.h"
#include "worker/data/idx_reader.h"
#include "worker/data/in_memory_image_dataset.h"
#include "worker/data/synthetic_dataset.h"

namespace ringleader {

absl::StatusOr<JobData> LoadJobData(const v1::DatasetSpec& spec,
                                    uint64_t seed) {
  JobData out;
  switch (spec.format()) {
    case v1::DATASET_FORMAT_IDX: {
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
    case v1::DATASET_FORMAT_SYNTHETIC: {
      auto train = SyntheticDataset::Create(spec.synthetic_train_size(), seed,
                                            Split::kTrain);
      if (!train.ok()) return train.status();
      auto test = SyntheticDataset::Create(spec.synthetic_test_size(), seed,
                                           Split::kTest);
      if (!test.ok()) return test.status();
      out.train = *std::move(train);
      out.test = *std::move(test);
      return out;
    }
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("unsupported dataset format ", spec.format()));
  }
}

}  // namespace ringleader
