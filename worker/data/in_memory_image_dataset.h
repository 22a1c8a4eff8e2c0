#ifndef RINGLEADER_WORKER_DATA_IN_MEMORY_IMAGE_DATASET_H_
#define RINGLEADER_WORKER_DATA_IN_MEMORY_IMAGE_DATASET_H_

// A dataset held in memory as the 8-bit pixels read from disk (Fashion-MNIST
// train is 47 MB this way, four times that as floats); pixels are
// normalized only as a batch is gathered.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "worker/data/dataset.h"
#include "worker/data/idx_reader.h"

namespace ringleader {

// Immutable after Create; thread-safe.
class InMemoryImageDataset final : public ImageDataset {
 public:
  // Takes the split over. InvalidArgument when a label is >= num_classes
  // (naming the first such sample) or num_classes is not in [1, 256]: a
  // label out of range would otherwise only fail deep in the loss, mid-epoch.
  static absl::StatusOr<std::unique_ptr<InMemoryImageDataset>> Create(
      IdxDataset data, Normalization normalization = kFashionMnistNormalization,
      int64_t num_classes = 10,
      std::string description = "in-memory image dataset");

  int64_t size() const override { return data_.size(); }
  int64_t image_rows() const override { return data_.images.rows; }
  int64_t image_cols() const override { return data_.images.cols; }
  int64_t num_classes() const override { return num_classes_; }
  std::string Describe() const override { return description_; }
  absl::Status Gather(const int64_t* indices, size_t n, float* images_out,
                      int64_t* labels_out) const override;

 private:
  InMemoryImageDataset(IdxDataset data, Normalization normalization,
                       int64_t num_classes, std::string description);

  const IdxDataset data_;
  const int64_t num_classes_;
  const std::string description_;
  // y = lut_[x]: the 256 possible normalized values, computed once so that
  // Gather is a table lookup and every sample maps bit-identically.
  float lut_[256];
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_IN_MEMORY_IMAGE_DATASET_H_
