#include "worker/data/in_memory_image_dataset.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "worker/data/dataset.h"
#include "worker/data/idx_reader.h"

namespace ringleader {

absl::StatusOr<std::unique_ptr<InMemoryImageDataset>>
InMemoryImageDataset::Create(IdxDataset data, Normalization normalization,
                             int64_t num_classes, std::string description) {
  if (num_classes < 1 || num_classes > 256) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_classes must be in [1, 256], got ", num_classes));
  }
  if (!(normalization.stddev > 0) || !std::isfinite(normalization.stddev) ||
      !std::isfinite(normalization.mean)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "normalization needs a finite mean and a finite stddev > 0, got ",
        normalization.mean, " and ", normalization.stddev));
  }
  if (static_cast<int64_t>(data.labels.size()) != data.images.count ||
      static_cast<int64_t>(data.images.pixels.size()) !=
          data.images.count * data.images.rows * data.images.cols) {
    return absl::InvalidArgumentError(
        "inconsistent IdxDataset: pixel or label count does not match sizes");
  }
  for (size_t i = 0; i < data.labels.size(); ++i) {
    if (data.labels[i] >= num_classes) {
      return absl::InvalidArgumentError(
          absl::StrCat("sample ", i, " has label ", int{data.labels[i]},
                       ", outside [0, ", num_classes, ")"));
    }
  }
  return std::unique_ptr<InMemoryImageDataset>(new InMemoryImageDataset(
      std::move(data), normalization, num_classes, std::move(description)));
}

InMemoryImageDataset::InMemoryImageDataset(IdxDataset data,
                                           Normalization normalization,
                                           int64_t num_classes,
                                           std::string description)
    : data_(std::move(data)),
      num_classes_(num_classes),
      description_(std::move(description)) {
  for (int x = 0; x < 256; ++x) {
    lut_[x] = (static_cast<float>(x) / 255.0f - normalization.mean) /
              normalization.stddev;
  }
}

absl::Status InMemoryImageDataset::Gather(const int64_t* indices, size_t n,
                                          float* images_out,
                                          int64_t* labels_out) const {
  if (absl::Status s = CheckIndices(indices, n, size()); !s.ok()) return s;
  const int64_t numel = image_numel();
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* src = data_.images.pixels.data() + indices[i] * numel;
    float* dst = images_out + static_cast<int64_t>(i) * numel;
    for (int64_t p = 0; p < numel; ++p) dst[p] = lut_[src[p]];
    labels_out[i] = data_.labels[indices[i]];
  }
  return absl::OkStatus();
}

}  // namespace ringleader
