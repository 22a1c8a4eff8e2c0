#ifndef RINGLEADER_WORKER_DATA_DATASET_H_
#define RINGLEADER_WORKER_DATA_DATASET_H_

// The random-access view of a labelled image dataset that the loader reads
// batches from. Samples are addressed by index in [0, size()), the indices
// that common/distributed_sampler.h hands each rank; images come out as
// float pixels already normalized, so the model never sees raw bytes.

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"

namespace ringleader {

// Which half of a dataset: the training samples or the held-out test ones.
enum class Split { kTrain, kTest };

// Per-pixel normalization y = (x / 255 - mean) / stddev for 8-bit pixels x.
struct Normalization {
  float mean;
  float stddev;
};

// The usual constants, computed over each training set (the torchvision
// MNIST example's 0.1307/0.3081; Fashion-MNIST's 0.2860/0.3530).
inline constexpr Normalization kMnistNormalization{0.1307f, 0.3081f};
inline constexpr Normalization kFashionMnistNormalization{0.2860f, 0.3530f};

// Implementations are immutable after construction, so every method is
// thread-safe: a loader thread may Gather while another thread evaluates.
class Dataset {
 public:
  virtual ~Dataset() = default;

  virtual int64_t size() const = 0;
  virtual int64_t image_rows() const = 0;
  virtual int64_t image_cols() const = 0;
  // Labels are in [0, num_classes()).
  virtual int64_t num_classes() const = 0;

  // Pixels per image (one channel).
  int64_t image_numel() const { return image_rows() * image_cols(); }

  // Copies samples indices[0..n) in that order: n images of
  // 1 x image_rows() x image_cols() floats (row-major, normalized) into
  // `images_out` and n labels into `labels_out`, both caller-allocated.
  // OutOfRange, writing nothing, when an index is outside [0, size()).
  virtual absl::Status Gather(const int64_t* indices, size_t n,
                              float* images_out, int64_t* labels_out) const = 0;
};

// The check every Gather starts with, shared so the message is one shape.
absl::Status CheckIndices(const int64_t* indices, size_t n, int64_t size);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_DATASET_H_
