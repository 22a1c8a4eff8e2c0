#include "worker/data/crop_geometry.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace ringleader {
namespace {

// Python's int(round(x)): round half to even (the default rounding mode).
int RoundHalfEven(double x) { return static_cast<int>(std::nearbyint(x)); }

// torch.empty(1).uniform_(a, b).item(): a float32 drawn in [a, b).
float UniformIn(double a, double b, double u) {
  return static_cast<float>(a + u * (b - a));
}

// torch.randint(0, n, (1,)).item() from a uniform in [0, 1).
int RandIntBelow(int n, double u) {
  return std::min(n - 1, static_cast<int>(u * n));
}

}  // namespace

CropBox RandomResizedCropBox(int width, int height,
                             const RandomResizedCropRange& range,
                             absl::FunctionRef<double()> uniform) {
  const double area = static_cast<double>(height) * width;
  // torch.log(torch.tensor(ratio)): float32 logs.
  const float log_lo = std::log(static_cast<float>(range.min_ratio));
  const float log_hi = std::log(static_cast<float>(range.max_ratio));
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target_area =
        area * UniformIn(range.min_scale, range.max_scale, uniform());
    const double aspect = std::exp(UniformIn(log_lo, log_hi, uniform()));
    const int w = RoundHalfEven(std::sqrt(target_area * aspect));
    const int h = RoundHalfEven(std::sqrt(target_area / aspect));
    if (0 < w && w <= width && 0 < h && h <= height) {
      CropBox box;
      box.height = h;
      box.width = w;
      box.top = RandIntBelow(height - h + 1, uniform());
      box.left = RandIntBelow(width - w + 1, uniform());
      return box;
    }
  }
  // Fallback to a central crop, as torchvision does.
  const double in_ratio = static_cast<double>(width) / height;
  CropBox box;
  if (in_ratio < std::min(range.min_ratio, range.max_ratio)) {
    box.width = width;
    box.height =
        RoundHalfEven(width / std::min(range.min_ratio, range.max_ratio));
  } else if (in_ratio > std::max(range.min_ratio, range.max_ratio)) {
    box.height = height;
    box.width =
        RoundHalfEven(height * std::max(range.min_ratio, range.max_ratio));
  } else {
    box.width = width;
    box.height = height;
  }
  box.top = (height - box.height) / 2;
  box.left = (width - box.width) / 2;
  return box;
}

ResizeCenterCrop ResizeThenCenterCrop(int width, int height, int resize_size,
                                      int size) {
  const bool wide = width > height;
  const int64_t shorter = wide ? height : width;
  const int64_t longer = wide ? width : height;
  // int(requested * long / short): true division, then truncation.
  const int new_long =
      static_cast<int>(static_cast<double>(int64_t{resize_size} * longer) /
                       static_cast<double>(shorter));
  ResizeCenterCrop r;
  r.resized_width = wide ? new_long : resize_size;
  r.resized_height = wide ? resize_size : new_long;
  r.top = RoundHalfEven((r.resized_height - size) / 2.0);
  r.left = RoundHalfEven((r.resized_width - size) / 2.0);
  return r;
}

}  // namespace ringleader
