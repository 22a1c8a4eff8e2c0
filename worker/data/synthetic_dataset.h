#ifndef RINGLEADER_WORKER_DATA_SYNTHETIC_DATASET_H_
#define RINGLEADER_WORKER_DATA_SYNTHETIC_DATASET_H_

// A generated dataset for tests and benchmarks that must not depend on
// files: every sample is a pure function of (seed, split, index), computed
// with integer arithmetic only, so every machine and every rank sees the same
// bytes and a distributed run can be compared exactly with a single process.
//
// It is learnable but not trivial: class c has a fixed random prototype P_c
// (one byte per pixel, from the seed), sample i has label
// hash(seed, split, i) mod num_classes and pixels (P_label + noise) / 2,
// where noise is a fresh uniform byte per pixel from a counter-based
// generator keyed by (seed, split, i). Signal and noise have equal power per
// pixel; over 784 pixels a linear model separates the classes. The train and
// test splits share the prototypes and differ in labels and noise.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/data/dataset.h"

namespace ringleader {

// Mean and standard deviation of the generated pixels: floor((P + N) / 2) for
// independent uniform bytes P, N has mean 127.25 and deviation 52.3 (of 255).
inline constexpr Normalization kSyntheticNormalization{0.4990f, 0.2050f};

// Immutable after Create; thread-safe. Costs num_classes x rows x cols bytes.
class SyntheticDataset final : public ImageDataset {
 public:
  // InvalidArgument unless size >= 0, num_classes in [1, 256], rows and cols
  // in [1, 4096].
  static absl::StatusOr<std::unique_ptr<SyntheticDataset>> Create(
      int64_t size, uint64_t seed, Split split = Split::kTrain,
      int64_t num_classes = 10, int64_t rows = 28, int64_t cols = 28);

  int64_t size() const override { return size_; }
  int64_t image_rows() const override { return rows_; }
  int64_t image_cols() const override { return cols_; }
  int64_t num_classes() const override { return num_classes_; }
  std::string Describe() const override;
  absl::Status Gather(const int64_t* indices, size_t n, float* images_out,
                      int64_t* labels_out) const override;

  // The label and raw bytes of one sample (`pixels_out` holds image_numel()),
  // before normalization; index must be in [0, size()).
  int64_t Label(int64_t index) const;
  void RawImage(int64_t index, uint8_t* pixels_out) const;

 private:
  SyntheticDataset(int64_t size, uint64_t seed, Split split,
                   int64_t num_classes, int64_t rows, int64_t cols);

  const int64_t size_;
  const Split split_;
  const int64_t num_classes_;
  const int64_t rows_;
  const int64_t cols_;
  const uint64_t label_key_;
  const uint64_t noise_key_;
  std::vector<uint8_t> prototypes_;  // [num_classes, rows * cols]
  float lut_[256];                   // Byte to normalized float.
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_SYNTHETIC_DATASET_H_
