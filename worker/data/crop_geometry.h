#ifndef RINGLEADER_WORKER_DATA_CROP_GEOMETRY_H_
#define RINGLEADER_WORKER_DATA_CROP_GEOMETRY_H_

// Where torchvision's reference transforms crop (references/classification
// presets): training RandomResizedCrop(size, scale, ratio), evaluation
// Resize(resize_size) then CenterCrop(size). The arithmetic is
// torchvision 0.14's, step for step (float32 where it draws float32
// tensors, Python's round-half-even), so the same draws give the same box.

#include <cstdint>

#include "absl/functional/function_ref.h"

namespace ringleader {

struct CropBox {
  int top = 0;
  int left = 0;
  int height = 0;
  int width = 0;
};

struct RandomResizedCropRange {
  double min_scale = 0.08;
  double max_scale = 1.0;
  double min_ratio = 3.0 / 4.0;
  double max_ratio = 4.0 / 3.0;
};

// RandomResizedCrop.get_params for a width x height image. `uniform`
// stands for each of torch's draws, called in torch's order: per try, the
// area's then the log-ratio's uniform in [0, 1) (scaled here as torch's
// uniform_(a, b) does), and, for the try that fits, the top's and the
// left's (randint(0, n) = floor(u * n)). At most 10 tries, then the
// central fallback.
CropBox RandomResizedCropBox(int width, int height,
                             const RandomResizedCropRange& range,
                             absl::FunctionRef<double()> uniform);

// Resize(resize_size) (the shorter side to resize_size, the longer one
// int(resize_size * long / short)) then CenterCrop(size) (offsets
// int(round((resized - size) / 2))).
struct ResizeCenterCrop {
  int resized_width = 0;
  int resized_height = 0;
  int top = 0;
  int left = 0;
};
ResizeCenterCrop ResizeThenCenterCrop(int width, int height, int resize_size,
                                      int size);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_CROP_GEOMETRY_H_
