#ifndef RINGLEADER_WORKER_DATA_DATASET_H_
#define RINGLEADER_WORKER_DATA_DATASET_H_

// The random-access view of a dataset that the loader reads batches from,
// torch's map-style Dataset: samples are addressed by index in [0, size()),
// the indices that common/distributed_sampler.h hands each rank. A sample is
// one tensor per model input plus one target, each of a fixed shape and of
// one of the two element types models take (float32 values, int64 ids), so
// the model never sees raw bytes. No LibTorch here: the loader allocates
// the tensors, datasets fill plain buffers.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace ringleader {

// Which half of a dataset: the training samples or the held-out test ones.
enum class Split { kTrain, kTest };

enum class ElementType { kFloat32, kInt64 };

// One field of a sample: its element type and shape ({} for a scalar).
struct FieldShape {
  ElementType type = ElementType::kFloat32;
  std::vector<int64_t> dims;

  int64_t numel() const;
  size_t element_bytes() const { return type == ElementType::kInt64 ? 8 : 4; }
  size_t bytes() const {
    return static_cast<size_t>(numel()) * element_bytes();
  }
  // "float32 [3, 32, 32]".
  std::string ToString() const;
  bool operator==(const FieldShape& o) const {
    return type == o.type && dims == o.dims;
  }
};

// Implementations are immutable after construction, so every method is
// thread-safe: a loader thread may gather while another thread evaluates.
class Dataset {
 public:
  virtual ~Dataset() = default;

  virtual int64_t size() const = 0;
  // One per model input, in forward's argument order.
  virtual std::vector<FieldShape> input_fields() const = 0;
  virtual FieldShape target_field() const = 0;
  // When targets are class ids, how many classes the data declares or shows
  // (targets are then in [0, num_classes())); 0 when unknown or not classes.
  virtual int64_t num_classes() const = 0;
  // Names the split and its files, for error messages: "train split of
  // /data/x.npy, /data/y.npy".
  virtual std::string Describe() const = 0;

  // Copies samples indices[0..n), in that order: input k of every sample
  // into inputs_out[k] (n x input_fields()[k], contiguous) and the targets
  // into targets_out (n x target_field()), all caller-allocated with the
  // fields' element types. OutOfRange, when an index is outside
  // [0, size()); DataLoss when the bytes read are not what the file
  // promised. Either way the buffers' contents are unspecified.
  virtual absl::Status GatherFields(const int64_t* indices, size_t n,
                                    const std::vector<void*>& inputs_out,
                                    void* targets_out) const = 0;

  // GatherFields for training epoch `epoch`. A dataset whose samples depend
  // on the epoch (image formats draw random crops while decoding, from the
  // stream of (seed, epoch, index)) overrides it; the others are the same
  // in every epoch.
  virtual absl::Status GatherForEpoch(int64_t epoch, const int64_t* indices,
                                      size_t n,
                                      const std::vector<void*>& inputs_out,
                                      void* targets_out) const {
    (void)epoch;
    return GatherFields(indices, n, inputs_out, targets_out);
  }

  // Samples left out or replaced because their files are unreadable
  // (dataset.skip_corrupt); 0 for formats that never skip.
  virtual int64_t skipped_samples() const { return 0; }
};

// Per-pixel normalization y = (x / 255 - mean) / stddev for 8-bit pixels x.
struct Normalization {
  float mean;
  float stddev;
};

// The usual constants, computed over each training set (the torchvision
// MNIST example's 0.1307/0.3081; Fashion-MNIST's 0.2860/0.3530).
inline constexpr Normalization kMnistNormalization{0.1307f, 0.3081f};
inline constexpr Normalization kFashionMnistNormalization{0.2860f, 0.3530f};

// A labelled grey-image dataset (IDX files, the synthetic one): one input,
// float [1, rows, cols], and an int64 class id per sample.
class ImageDataset : public Dataset {
 public:
  virtual int64_t image_rows() const = 0;
  virtual int64_t image_cols() const = 0;
  // Pixels per image (one channel).
  int64_t image_numel() const { return image_rows() * image_cols(); }

  // GatherFields for this one-input shape: n images of
  // 1 x image_rows() x image_cols() floats and n labels.
  virtual absl::Status Gather(const int64_t* indices, size_t n,
                              float* images_out, int64_t* labels_out) const = 0;

  std::vector<FieldShape> input_fields() const override;
  FieldShape target_field() const override;
  absl::Status GatherFields(const int64_t* indices, size_t n,
                            const std::vector<void*>& inputs_out,
                            void* targets_out) const override;
};

// The check every Gather starts with, shared so the message is one shape.
absl::Status CheckIndices(const int64_t* indices, size_t n, int64_t size);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_DATASET_H_
