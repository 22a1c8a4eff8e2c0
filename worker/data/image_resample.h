#ifndef RINGLEADER_WORKER_DATA_IMAGE_RESAMPLE_H_
#define RINGLEADER_WORKER_DATA_IMAGE_RESAMPLE_H_

// Bilinear resizing of 8-bit RGB images exactly as PIL's Image.resize with
// Image.BILINEAR does it (Pillow's libImaging/Resample.c, what torchvision's
// Resize and RandomResizedCrop call on PIL images): a triangle filter
// widened by the scale when shrinking (so downscaling averages, PIL's
// antialiasing), coefficients in 22-bit fixed point, a horizontal pass
// then a vertical pass, each rounded to 8 bits. Given the same source
// pixels the output is PIL's, bit for bit.
//
// One addition: only a window of the output is computed (the pixels a
// CenterCrop keeps), which gives the same pixels as resizing whole and
// cropping, because each output pixel depends only on its own
// coefficients.

#include <cstdint>
#include <vector>

#include "worker/data/rgb_image.h"

namespace ringleader {

// The taps of output pixels [out_begin, out_begin + out_count) of a resize
// of source samples [0, in_size) over the interval [in0, in1) to out_size
// pixels (PIL's precompute_coeffs and normalize_coeffs_8bpc).
struct ResampleAxis {
  int ksize = 0;           // Taps per output pixel (the stride of coeffs).
  std::vector<int> first;  // Per output pixel: its first source sample.
  std::vector<int> count;  // Per output pixel: its taps.
  std::vector<int32_t> coeffs;
  // Whether PIL would skip this pass (the axis is not resized).
  bool identity = false;

  // The source samples the window reads: [min_first(), end()).
  int min_first() const;
  int end() const;
};

ResampleAxis PlanResampleAxis(int in_size, double in0, double in1, int out_size,
                              int out_begin, int out_count);

// Resizes `src` through the two axes' plans (source coordinates relative to
// (x_offset, y_offset) in src: a crop's corner), writing the window as
// rows of x.first.size() RGB pixels to `dst`. The source rows the plan
// reads must be in src's decoded band. `scratch` is reused between calls.
void ResampleBilinear(const RgbImage& src, int x_offset, int y_offset,
                      const ResampleAxis& x, const ResampleAxis& y,
                      std::vector<uint8_t>& scratch, uint8_t* dst);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_IMAGE_RESAMPLE_H_
