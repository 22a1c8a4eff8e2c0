#ifndef RINGLEADER_WORKER_DATA_IMAGE_TRANSFORM_H_
#define RINGLEADER_WORKER_DATA_IMAGE_TRANSFORM_H_

// One encoded image (JPEG or PNG bytes) to the float32 [3, size, size]
// tensor a model sees, torchvision's reference classification recipe in one
// pass: decode, crop and resize (training: RandomResizedCrop; evaluation:
// Resize then CenterCrop; crop_geometry.h), horizontal flip (training,
// probability 1/2), then ToTensor's scale and Normalize's per-channel
// mean/std. Every random draw comes from the sample's stream
// (sample_stream.h), so an image looks the same on any rank and across a
// resume.
//
// Where a JPEG is at least twice the needed size (in both directions)
// after dividing by 2, 4 or 8, it is decoded at that reduced scale
// (libjpeg's DCT scaling, PIL's Image.draft with Image.thumbnail's
// reducing_gap of 2) and only the rows the crop needs are decoded; the
// pixels then differ slightly from PIL's full decode and resize. Otherwise
// they are PIL's, bit for bit, up to the float normalization.

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "worker/data/crop_geometry.h"

namespace ringleader {

struct ImageTransformSpec {
  int size = 224;
  int resize_size = 256;    // Evaluation only; >= size.
  bool random_crop = true;  // False: Resize + CenterCrop (evaluation).
  RandomResizedCropRange range;
  bool horizontal_flip = false;
  // y = x * scale, then (y - mean[c]) / std[c]; empty mean/std: none.
  double scale = 1.0 / 255.0;
  std::vector<double> mean;
  std::vector<double> std;
  // Decode large JPEGs at a reduced scale (off: always decode whole, as
  // PIL does; the tests compare that way).
  bool reduced_decode = true;
  // Images with more pixels are refused (a decompression bomb).
  int64_t max_pixels = int64_t{1} << 28;
};

// Immutable after Create; Apply is thread-safe (each thread keeps its own
// scratch buffers).
class ImageTransform {
 public:
  // InvalidArgument for a size outside [1, 4096], resize_size < size, a
  // scale or ratio range that is not 0 < min <= max (scale <= 1), or
  // mean/std other than empty or 3 values (std > 0).
  static absl::StatusOr<ImageTransform> Create(const ImageTransformSpec& spec);

  // Writes 3 * size * size floats (channel-major) to `out`. `stream_seed`
  // is SampleStreamSeed(seed, epoch, index) (ignored by evaluation).
  // DataLoss naming what is wrong when the bytes are not a readable JPEG
  // or PNG (empty, another format, truncated, corrupt).
  absl::Status Apply(const uint8_t* data, size_t size, uint64_t stream_seed,
                     float* out) const;

  int size() const { return spec_.size; }

 private:
  explicit ImageTransform(const ImageTransformSpec& spec);

  ImageTransformSpec spec_;
  float lut_[3][256];  // Per channel, the normalized value of each byte.
};

// What the bytes are, from their first bytes.
enum class ImageFormat { kJpeg, kPng, kOther };
ImageFormat SniffImageFormat(const uint8_t* data, size_t size);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_IMAGE_TRANSFORM_H_
