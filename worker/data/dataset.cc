#include "worker/data/dataset.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ringleader {

int64_t FieldShape::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string FieldShape::ToString() const {
  return absl::StrCat(type == ElementType::kInt64 ? "int64" : "float32", " [",
                      absl::StrJoin(dims, ", "), "]");
}

std::vector<FieldShape> ImageDataset::input_fields() const {
  return {FieldShape{ElementType::kFloat32, {1, image_rows(), image_cols()}}};
}

FieldShape ImageDataset::target_field() const {
  return FieldShape{ElementType::kInt64, {}};
}

absl::Status ImageDataset::GatherFields(const int64_t* indices, size_t n,
                                        const std::vector<void*>& inputs_out,
                                        void* targets_out) const {
  if (inputs_out.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        Describe(), " has one input per sample, not ", inputs_out.size()));
  }
  return Gather(indices, n, static_cast<float*>(inputs_out[0]),
                static_cast<int64_t*>(targets_out));
}

absl::Status CheckIndices(const int64_t* indices, size_t n, int64_t size) {
  for (size_t i = 0; i < n; ++i) {
    if (indices[i] < 0 || indices[i] >= size) {
      return absl::OutOfRangeError(
          absl::StrCat("sample index ", indices[i], " (position ", i,
                       ") is outside the dataset of ", size, " samples"));
    }
  }
  return absl::OkStatus();
}

}  // namespace ringleader
