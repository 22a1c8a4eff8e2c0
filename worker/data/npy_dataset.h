#ifndef RINGLEADER_WORKER_DATA_NPY_DATASET_H_
#define RINGLEADER_WORKER_DATA_NPY_DATASET_H_

// One split of an NPY dataset (DATASET_FORMAT_NPY in
// proto/ringleader/v1/job.proto): one .npy per model input plus one of
// targets, sample i being row i of every file. All files stay memory-mapped
// (mapped_file.h): Create reads their headers and scans the targets once;
// GatherFields reads only the rows asked for, which is how a rank reads only
// its shard of a dataset larger than RAM.
//
// Fields: an input is float32 when a transform is set (input_transform.h)
// or its dtype is a float (float16 converted exactly), else int64; a sample
// is one row, so the field's shape is the file's shape without its first
// dimension. Targets are int64 class ids for an integer file, float32
// values for a float one.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "worker/data/dataset.h"
#include "worker/data/input_transform.h"
#include "worker/data/npy_file.h"

namespace ringleader {

// Immutable after Create; thread-safe.
class NpyDataset final : public Dataset {
 public:
  // Opens the split's files. Errors start with the split ("train split: ")
  // and name the file: MappedFile's and ParseNpyHeader's, and
  // InvalidArgument when there is no input or no targets file, a file is
  // 0-d, the files' first dimensions (sample counts) differ, the transform
  // does not fit an input (input_transform.h), or a train split has no
  // samples (a test split may).
  static absl::StatusOr<std::unique_ptr<NpyDataset>> Create(
      Split split, const std::vector<std::string>& input_paths,
      const std::string& targets_path,
      const InputTransformSpec& transform = {});

  int64_t size() const override { return size_; }
  std::vector<FieldShape> input_fields() const override;
  FieldShape target_field() const override { return target_field_; }
  // For integer targets, the largest over the split + 1 (at least 0: a
  // split whose targets are all negative, e.g. all ignore_index, shows no
  // classes); 0 for float targets. Negative targets are left to the loss
  // (ignore_index is one), see min_target().
  int64_t num_classes() const override;
  // "train split of /d/x.npy, /d/y.npy": the inputs, then the targets.
  std::string Describe() const override { return description_; }
  absl::Status GatherFields(const int64_t* indices, size_t n,
                            const std::vector<void*>& inputs_out,
                            void* targets_out) const override;

  // The smallest and largest integer target over the split (0 and 0 for
  // float targets or no samples).
  int64_t min_target() const { return target_range_min_; }
  int64_t max_target() const { return target_range_max_; }

 private:
  struct Input {
    NpyFile file;
    FieldShape field;
    std::optional<SampleTransform> transform;
  };

  NpyDataset(std::vector<Input> inputs, NpyFile targets,
             std::string description);
  void GatherInput(const Input& input, const int64_t* indices, size_t n,
                   void* out) const;

  std::vector<Input> inputs_;
  NpyFile targets_;
  FieldShape target_field_;
  int64_t size_ = 0;
  int64_t target_range_min_ = 0;
  int64_t target_range_max_ = 0;
  std::string description_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_NPY_DATASET_H_
