#ifndef RINGLEADER_WORKER_DATA_IMAGE_JOB_DATA_H_
#define RINGLEADER_WORKER_DATA_IMAGE_JOB_DATA_H_

// A job's image splits (DATASET_FORMAT_IMAGE_FOLDER and _TAR_SHARDS): the
// sample lists built once (image_folder.h, tar_shards.h) and datasets that
// decode them with the spec's transforms (the training split's random
// crops and flips, the test split's resize and center crop).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ringleader/v1/job.pb.h"
#include "worker/data/dataset.h"
#include "worker/data/image_transform.h"

namespace ringleader {

struct ImageSplits {
  std::unique_ptr<Dataset> train;
  std::unique_ptr<Dataset> test;         // No samples when the spec names none.
  std::vector<std::string> class_names;  // An ImageFolder's; else empty.
};

// The transform of a split, from the spec's image, transform and
// augmentation fields with their defaults filled in.
ImageTransformSpec ImageTransformOf(const v1::DatasetSpec& spec, bool train);

// Errors name the root or shard and the file; a test ImageFolder whose
// classes are not the training one's is InvalidArgument (its ids would
// mean other classes).
absl::StatusOr<ImageSplits> LoadImageSplits(const v1::DatasetSpec& spec,
                                            uint64_t seed);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_IMAGE_JOB_DATA_H_
