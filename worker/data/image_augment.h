#ifndef RINGLEADER_WORKER_DATA_IMAGE_AUGMENT_H_
#define RINGLEADER_WORKER_DATA_IMAGE_AUGMENT_H_

// Random augmentation of training images, torchvision's CIFAR recipe:
// RandomCrop(size, padding=p) then RandomHorizontalFlip(), per sample, run
// by the batch loader's thread on the gathered (transformed) batch.
//
// Each sample's draw is a pure function of (seed, epoch, sample index): a
// sample looks the same wherever and whenever it is trained, so a resumed
// run, at any world size, trains on exactly the images an uninterrupted one
// does, and no generator state needs to be checkpointed.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/data/dataset.h"

namespace ringleader {

struct ImageAugmentSpec {
  int64_t crop_padding = 0;  // 0: no crop.
  bool horizontal_flip = false;
  // Per channel, the value a 0 pixel has after the input transform
  // (-mean / std); the padding's value, as torchvision pads before
  // normalizing. Empty: 0.
  std::vector<float> fill;

  bool active() const { return crop_padding > 0 || horizontal_flip; }
};

// One sample's draw.
struct AugmentDraw {
  int64_t top = 0;   // Crop offset in the padded image, [0, 2p].
  int64_t left = 0;  // Likewise.
  bool flip = false;
};

// The draw for sample `id` of `epoch`: a pure function of its arguments.
AugmentDraw DrawAugment(uint64_t seed, int64_t epoch, int64_t id,
                        int64_t crop_padding);

// Immutable; Apply is thread-safe.
class ImageAugment {
 public:
  // For a dataset's input fields: the float32 inputs of shape [C, H, W] or
  // [H, W] are images and get augmented; InvalidArgument when none is, or
  // `fill` has a length other than an image's channels (or 1).
  static absl::StatusOr<ImageAugment> Create(
      const ImageAugmentSpec& spec, const std::vector<FieldShape>& inputs);

  // Augments the image inputs of a batch in place; `ids` are the batch's
  // dataset indices, one per row.
  void Apply(std::vector<at::Tensor>& inputs, const std::vector<int64_t>& ids,
             uint64_t seed, int64_t epoch) const;

 private:
  ImageAugment(ImageAugmentSpec spec, std::vector<bool> is_image)
      : spec_(std::move(spec)), is_image_(std::move(is_image)) {}

  // One [C, H, W] (or [H, W]) sample, in place.
  void ApplyOne(at::Tensor sample, const AugmentDraw& d) const;

  ImageAugmentSpec spec_;
  std::vector<bool> is_image_;  // Per input.
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_IMAGE_AUGMENT_H_
