#ifndef RINGLEADER_WORKER_DATA_JPEG_DECODER_H_
#define RINGLEADER_WORKER_DATA_JPEG_DECODER_H_

// JPEG decoding with libjpeg-turbo's libjpeg API (Debian's
// libjpeg62-turbo, the library PIL links), to 8-bit RGB as PIL's
// Image.convert("RGB") gives it: baseline and progressive, YCbCr, RGB,
// grayscale (replicated) and CMYK/YCCK (Adobe's inverted polarity, as PIL
// assumes). Two things PIL does not do, both for speed: decoding at a
// reduced scale (libjpeg's DCT scaling, 1/2, 1/4 or 1/8) and decoding only a
// band of rows. At scale 1 and all rows the pixels are PIL's.
//
// Untrusted bytes: every libjpeg error and a truncated file (no end marker,
// libjpeg's "Premature end of JPEG file") are a DataLoss status; other
// libjpeg warnings (corrupt entropy data) are accepted, as PIL accepts them.
// Decoding never crashes; a progressive file of more than 1000 scans, or an
// image above `max_pixels`, is refused rather than decoded slowly.

#include <cstddef>
#include <cstdint>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "worker/data/rgb_image.h"

namespace ringleader {

struct JpegHeader {
  int width = 0;
  int height = 0;
  int components = 0;  // 1 (grayscale), 3 or 4 (CMYK/YCCK).
  bool progressive = false;
};

// What to decode, chosen once the header is known.
struct JpegPlan {
  int scale_denom = 1;  // 1, 2, 4 or 8: the image is decoded at 1/denom.
  // Rows of the scaled image to decode, [row_begin, row_end), clamped to it.
  int row_begin = 0;
  int row_end = 1 << 30;
};

// The scaled image's side for a side of `full` pixels, as libjpeg computes
// it (rounded up).
inline int ScaledJpegSide(int full, int denom) {
  return (full + denom - 1) / denom;
}

// Only the header: size and components. DataLoss when it is not a JPEG
// header.
absl::StatusOr<JpegHeader> ReadJpegHeader(const uint8_t* data, size_t size);

// Decodes `data`; `plan` is called once with the header. `out` receives the
// scaled image's size and the planned rows.
absl::Status DecodeJpeg(const uint8_t* data, size_t size,
                        absl::FunctionRef<JpegPlan(const JpegHeader&)> plan,
                        RgbImage* out, int64_t max_pixels = int64_t{1} << 28);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_JPEG_DECODER_H_
