#ifndef RINGLEADER_WORKER_DATA_JOB_DATA_H_
#define RINGLEADER_WORKER_DATA_JOB_DATA_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ringleader/v1/job.pb.h"
#include "worker/data/dataset.h"
#include "worker/data/image_augment.h"

namespace ringleader {

// A job's training and test splits, loaded once per job and kept across its
// generations (a rejoin does not reread the files).
struct JobData {
  std::unique_ptr<Dataset> train;
  std::unique_ptr<Dataset> test;
  // The training images' augmentation, when the spec asks for one.
  std::optional<ImageAugment> augment;
  // The image formats': class names by id (an ImageFolder's folders).
  std::vector<std::string> class_names;
};

// Opens the spec's dataset (`seed` drives the synthetic one):
//   IDX: the directory's train and t10k files, read into memory;
//   SYNTHETIC: generated samples;
//   NPY: spec.train and spec.test memory-mapped (worker/data/npy_dataset.h),
//     spec.transform applied to every input;
//   TOKENS: spec.train_tokens and spec.test_tokens memory-mapped
//     (worker/data/token_dataset.h), windows of spec.block_size;
//   IMAGE_FOLDER, TAR_SHARDS: the file list built once
//     (worker/data/image_job_data.h), decoded by the loader threads.
// Paths are used as given: absolute, or relative to the worker's working
// directory. For NPY and TOKENS the test split is optional: left empty, it
// is a split of no samples with the train split's fields. Errors name the
// split and the file; a test split whose fields differ from the train
// split's is InvalidArgument, and so is an augmentation (spec.augmentation)
// when no input is an image. Its padding takes the transform's -mean/std.
absl::StatusOr<JobData> LoadJobData(const v1::DatasetSpec& spec, uint64_t seed);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_JOB_DATA_H_
