#include "worker/data/image_transform.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "worker/data/image_resample.h"
#include "worker/data/jpeg_decoder.h"
#include "worker/data/png_decoder.h"
#include "worker/data/rgb_image.h"
#include "worker/data/sample_random.h"

namespace ringleader {
namespace {

// A decoded image after planning: which rows of which scale to decode and
// the resize from there to the output window.
struct SamplePlan {
  int denom = 1;
  int x_offset = 0;  // The crop's corner in the (scaled) image.
  int y_offset = 0;
  ResampleAxis x;
  ResampleAxis y;
};

// The largest of 8, 4, 2 that leaves `side` at least twice `needed` (PIL's
// reducing_gap of 2), else 1.
int ReducedScale(int side_w, int side_h, int needed_w, int needed_h) {
  for (int d : {8, 4, 2}) {
    if (side_w / d >= 2 * needed_w && side_h / d >= 2 * needed_h) return d;
  }
  return 1;
}

// One axis of a crop [begin, begin + length) of a `full`-pixel side,
// resized to `out`, in an image decoded at 1/denom (scaled side `scaled`).
// At denom 1 these are PIL's crop-then-resize coefficients exactly.
ResampleAxis CropAxis(int begin, int length, int out, int denom, int scaled,
                      int* offset) {
  const double in0 = static_cast<double>(begin) / denom;
  const double in1 = static_cast<double>(begin + length) / denom;
  const int lo = static_cast<int>(std::floor(in0));
  const int hi = std::min(scaled, static_cast<int>(std::ceil(in1)));
  *offset = lo;
  return PlanResampleAxis(hi - lo, in0 - lo, in1 - lo, out, 0, out);
}

SamplePlan PlanSample(const ImageTransformSpec& spec, int width, int height,
                      bool can_reduce, uint64_t stream_seed) {
  SamplePlan p;
  const int s = spec.size;
  if (spec.random_crop) {
    SampleRandom rng(stream_seed);
    const CropBox box = RandomResizedCropBox(width, height, spec.range,
                                             [&rng] { return rng.Uniform(); });
    if (can_reduce) p.denom = ReducedScale(box.width, box.height, s, s);
    p.x = CropAxis(box.left, box.width, s, p.denom,
                   ScaledJpegSide(width, p.denom), &p.x_offset);
    p.y = CropAxis(box.top, box.height, s, p.denom,
                   ScaledJpegSide(height, p.denom), &p.y_offset);
    return p;
  }
  const ResizeCenterCrop g =
      ResizeThenCenterCrop(width, height, spec.resize_size, s);
  if (can_reduce) {
    p.denom = ReducedScale(width, height, g.resized_width, g.resized_height);
  }
  // Resize of the whole (scaled) image, of which the window is kept.
  p.x = PlanResampleAxis(ScaledJpegSide(width, p.denom), 0,
                         static_cast<double>(width) / p.denom, g.resized_width,
                         g.left, s);
  p.y = PlanResampleAxis(ScaledJpegSide(height, p.denom), 0,
                         static_cast<double>(height) / p.denom,
                         g.resized_height, g.top, s);
  return p;
}

absl::Status CheckSpec(const ImageTransformSpec& spec) {
  if (spec.size < 1 || spec.size > 4096) {
    return absl::InvalidArgumentError(
        absl::StrCat("image size must be in [1, 4096], got ", spec.size));
  }
  if (!spec.random_crop && spec.resize_size < spec.size) {
    return absl::InvalidArgumentError(
        absl::StrCat("resize size ", spec.resize_size,
                     " is below the crop size ", spec.size));
  }
  const RandomResizedCropRange& r = spec.range;
  if (!(r.min_scale > 0 && r.min_scale <= r.max_scale && r.max_scale <= 1)) {
    return absl::InvalidArgumentError(
        "scale range must be 0 < min <= max <= 1");
  }
  if (!(r.min_ratio > 0 && r.min_ratio <= r.max_ratio &&
        std::isfinite(r.max_ratio))) {
    return absl::InvalidArgumentError("ratio range must be 0 < min <= max");
  }
  if (spec.mean.size() != spec.std.size() ||
      (!spec.mean.empty() && spec.mean.size() != 3)) {
    return absl::InvalidArgumentError(
        "mean and std need 3 values each (RGB) or none");
  }
  for (double v : spec.std) {
    if (!(v > 0) || !std::isfinite(v)) {
      return absl::InvalidArgumentError("every std must be finite and > 0");
    }
  }
  return absl::OkStatus();
}

// Per-thread buffers: the decoded band, the resample's intermediate rows
// and the output window, reused from sample to sample.
struct Scratch {
  RgbImage image;
  std::vector<uint8_t> band;
  std::vector<uint8_t> window;
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

}  // namespace

ImageFormat SniffImageFormat(const uint8_t* data, size_t size) {
  static constexpr uint8_t kPng[8] = {0x89, 'P',  'N',  'G',
                                      '\r', '\n', 0x1a, '\n'};
  if (size >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF) {
    return ImageFormat::kJpeg;
  }
  if (size >= 8 && std::memcmp(data, kPng, 8) == 0) return ImageFormat::kPng;
  return ImageFormat::kOther;
}

absl::StatusOr<ImageTransform> ImageTransform::Create(
    const ImageTransformSpec& spec) {
  if (absl::Status s = CheckSpec(spec); !s.ok()) return s;
  return ImageTransform(spec);
}

ImageTransform::ImageTransform(const ImageTransformSpec& spec) : spec_(spec) {
  for (int c = 0; c < 3; ++c) {
    const double mean = spec.mean.empty() ? 0.0 : spec.mean[c];
    const double std = spec.std.empty() ? 1.0 : spec.std[c];
    for (int v = 0; v < 256; ++v) {
      lut_[c][v] = static_cast<float>((v * spec.scale - mean) / std);
    }
  }
}

absl::Status ImageTransform::Apply(const uint8_t* data, size_t size,
                                   uint64_t stream_seed, float* out) const {
  if (size == 0) return absl::DataLossError("an empty file (0 bytes)");
  Scratch& scratch = ThreadScratch();
  SamplePlan plan;
  switch (SniffImageFormat(data, size)) {
    case ImageFormat::kJpeg: {
      auto planner = [&](const JpegHeader& h) {
        plan = PlanSample(spec_, h.width, h.height, spec_.reduced_decode,
                          stream_seed);
        JpegPlan j;
        j.scale_denom = plan.denom;
        j.row_begin = plan.y_offset + plan.y.min_first();
        j.row_end = plan.y_offset + plan.y.end();
        return j;
      };
      if (absl::Status s =
              DecodeJpeg(data, size, planner, &scratch.image, spec_.max_pixels);
          !s.ok()) {
        return s;
      }
      break;
    }
    case ImageFormat::kPng:
      if (absl::Status s =
              DecodePng(data, size, &scratch.image, spec_.max_pixels);
          !s.ok()) {
        return s;
      }
      plan = PlanSample(spec_, scratch.image.width, scratch.image.height,
                        /*can_reduce=*/false, stream_seed);
      break;
    case ImageFormat::kOther:
      return absl::DataLossError(absl::StrCat(
          "not a JPEG or PNG image (it starts with \"",
          absl::CHexEscape(absl::string_view(
              reinterpret_cast<const char*>(data), std::min<size_t>(size, 8))),
          "\")"));
  }
  const int s = spec_.size;
  scratch.window.resize(size_t{3} * s * s);
  ResampleBilinear(scratch.image, plan.x_offset, plan.y_offset, plan.x, plan.y,
                   scratch.band, scratch.window.data());
  // RandomHorizontalFlip's coin: the stream seed's top bit, the draw
  // image_augment.h's flip takes for the same sample.
  const bool flip = spec_.horizontal_flip && (stream_seed >> 63) != 0;
  const size_t plane = static_cast<size_t>(s) * s;
  for (int y = 0; y < s; ++y) {
    const uint8_t* row = scratch.window.data() + size_t{3} * s * y;
    for (int c = 0; c < 3; ++c) {
      float* o = out + c * plane + static_cast<size_t>(y) * s;
      const float* lut = lut_[c];
      if (flip) {
        for (int x = 0; x < s; ++x) o[x] = lut[row[3 * (s - 1 - x) + c]];
      } else {
        for (int x = 0; x < s; ++x) o[x] = lut[row[3 * x + c]];
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace ringleader
