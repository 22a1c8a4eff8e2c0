#include "worker/data/npy_dataset.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "worker/data/dataset.h"
#include "worker/data/input_transform.h"
#include "worker/data/npy_convert.h"
#include "worker/data/npy_file.h"
#include "worker/data/npy_header.h"

namespace ringleader {
namespace {

const char* SplitName(Split split) {
  return split == Split::kTrain ? "train" : "test";
}

std::vector<int64_t> SampleDims(const NpyFile& file) {
  const std::vector<int64_t>& shape = file.header().shape;
  return std::vector<int64_t>(shape.begin() + 1, shape.end());
}

// Maps one file of the split; it needs a first dimension to count samples.
absl::StatusOr<NpyFile> OpenSplitFile(const std::string& path) {
  absl::StatusOr<NpyFile> file = NpyFile::Open(path);
  if (!file.ok()) return file.status();
  if (file->header().shape.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path,
        ": a 0-d array (one scalar) has no samples; inputs and targets "
        "need at least one dimension, the sample count"));
  }
  return file;
}

// Every file's first dimension must be the first input's.
absl::Status CheckSampleCounts(const std::vector<const NpyFile*>& files) {
  const NpyFile& first = *files.front();
  for (const NpyFile* file : files) {
    if (file->rows() != first.rows()) {
      return absl::InvalidArgumentError(absl::StrCat(
          file->path(), " has ", file->rows(), " samples (its first dimension)",
          " but ", first.path(), " has ", first.rows(),
          "; every file of a split has one row per sample"));
    }
  }
  return absl::OkStatus();
}

ElementType UntransformedType(NpyDtype dtype) {
  return NpyDtypeIsFloat(dtype) ? ElementType::kFloat32 : ElementType::kInt64;
}

// Rows `indices` of `file` into `out` (n x row_elements() of `type`), as
// they are (integers widened, floats to float32): the dispatch on dtype
// happens once per row, inside the conversion call.
void GatherRows(const NpyFile& file, ElementType type, const int64_t* indices,
                size_t n, void* out) {
  const size_t numel = file.row_elements();
  if (type == ElementType::kFloat32) {
    float* dst = static_cast<float*>(out);
    for (size_t i = 0; i < n; ++i) {
      ConvertToFloat32(file.dtype(), file.row(indices[i]), numel,
                       dst + i * numel);
    }
  } else {
    int64_t* dst = static_cast<int64_t*>(out);
    for (size_t i = 0; i < n; ++i) {
      ConvertToInt64(file.dtype(), file.row(indices[i]), numel,
                     dst + i * numel);
    }
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<NpyDataset>> NpyDataset::Create(
    Split split, const std::vector<std::string>& input_paths,
    const std::string& targets_path, const InputTransformSpec& transform) {
  const auto in_split = [split](const absl::Status& s) {
    return absl::Status(
        s.code(), absl::StrCat(SplitName(split), " split: ", s.message()));
  };
  if (input_paths.empty()) {
    return in_split(absl::InvalidArgumentError("no input files"));
  }
  if (targets_path.empty()) {
    return in_split(absl::InvalidArgumentError("no targets file"));
  }
  std::vector<Input> inputs;
  for (size_t k = 0; k < input_paths.size(); ++k) {
    absl::StatusOr<NpyFile> file = OpenSplitFile(input_paths[k]);
    if (!file.ok()) return in_split(file.status());
    const NpyDtype dtype = file->dtype();
    const std::vector<int64_t> dims = SampleDims(*file);
    Input input{*std::move(file), FieldShape{UntransformedType(dtype), dims},
                std::nullopt};
    if (transform.active()) {
      absl::StatusOr<SampleTransform> t = SampleTransform::Create(
          transform, dtype, dims,
          absl::StrCat("input ", k, " (", input_paths[k], ")"));
      if (!t.ok()) return in_split(t.status());
      input.field.type = ElementType::kFloat32;
      input.transform = *std::move(t);
    }
    inputs.push_back(std::move(input));
  }
  absl::StatusOr<NpyFile> targets = OpenSplitFile(targets_path);
  if (!targets.ok()) return in_split(targets.status());
  std::vector<const NpyFile*> files;
  for (const Input& input : inputs) files.push_back(&input.file);
  files.push_back(&*targets);
  if (absl::Status s = CheckSampleCounts(files); !s.ok()) return in_split(s);
  if (split == Split::kTrain && targets->rows() == 0) {
    return in_split(absl::InvalidArgumentError(
        absl::StrCat("no samples (", targets_path, " has 0 rows)")));
  }
  std::vector<std::string> paths = input_paths;
  paths.push_back(targets_path);
  return std::unique_ptr<NpyDataset>(
      new NpyDataset(std::move(inputs), *std::move(targets),
                     absl::StrCat(SplitName(split), " split of ",
                                  absl::StrJoin(paths, ", "))));
}

NpyDataset::NpyDataset(std::vector<Input> inputs, NpyFile targets,
                       std::string description)
    : inputs_(std::move(inputs)),
      targets_(std::move(targets)),
      target_field_{UntransformedType(targets_.dtype()), SampleDims(targets_)},
      size_(targets_.rows()),
      description_(std::move(description)) {
  // One pass over the targets (small next to the inputs) for num_classes.
  const IntRange range =
      IntegerRange(targets_.dtype(), targets_.data(),
                   static_cast<size_t>(size_) * targets_.row_elements());
  target_range_min_ = range.min;
  target_range_max_ = range.max;
}

std::vector<FieldShape> NpyDataset::input_fields() const {
  std::vector<FieldShape> fields;
  for (const Input& input : inputs_) fields.push_back(input.field);
  return fields;
}

int64_t NpyDataset::num_classes() const {
  if (target_field_.type != ElementType::kInt64 || size_ == 0) return 0;
  if (target_range_max_ < 0) return 0;
  if (target_range_max_ == std::numeric_limits<int64_t>::max()) {
    return target_range_max_;
  }
  return target_range_max_ + 1;
}

absl::Status NpyDataset::GatherFields(const int64_t* indices, size_t n,
                                      const std::vector<void*>& inputs_out,
                                      void* targets_out) const {
  if (inputs_out.size() != inputs_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(description_, " has ", inputs_.size(),
                     " inputs per sample, not ", inputs_out.size()));
  }
  if (absl::Status s = CheckIndices(indices, n, size_); !s.ok()) {
    return absl::Status(s.code(),
                        absl::StrCat(description_, ": ", s.message()));
  }
  for (size_t k = 0; k < inputs_.size(); ++k) {
    GatherInput(inputs_[k], indices, n, inputs_out[k]);
  }
  GatherRows(targets_, target_field_.type, indices, n, targets_out);
  return absl::OkStatus();
}

void NpyDataset::GatherInput(const Input& input, const int64_t* indices,
                             size_t n, void* out) const {
  if (!input.transform) {
    GatherRows(input.file, input.field.type, indices, n, out);
    return;
  }
  const size_t numel = input.file.row_elements();
  float* dst = static_cast<float*>(out);
  for (size_t i = 0; i < n; ++i) {
    input.transform->Apply(input.file.row(indices[i]), dst + i * numel);
  }
}

}  // namespace ringleader
