#include "worker/data/image_augment.h"

#include <ATen/ATen.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "worker/data/sample_stream.h"

namespace ringleader {
namespace {

bool IsImage(const FieldShape& f) {
  return f.type == ElementType::kFloat32 &&
         (f.dims.size() == 2 || f.dims.size() == 3);
}

}  // namespace

AugmentDraw DrawAugment(uint64_t seed, int64_t epoch, int64_t id,
                        int64_t crop_padding) {
  const uint64_t h = SampleStreamSeed(seed, epoch, id);
  const uint64_t span = static_cast<uint64_t>(2 * crop_padding + 1);
  AugmentDraw d;
  // Three independent parts of the hash; span is at most a few hundred, so
  // the modulo's bias is below 2^-20.
  d.top = static_cast<int64_t>((h & 0xffffff) % span);
  d.left = static_cast<int64_t>(((h >> 24) & 0xffffff) % span);
  d.flip = ((h >> 63) & 1) != 0;
  return d;
}

absl::StatusOr<ImageAugment> ImageAugment::Create(
    const ImageAugmentSpec& spec, const std::vector<FieldShape>& inputs) {
  std::vector<bool> is_image;
  bool any = false;
  for (const FieldShape& f : inputs) {
    is_image.push_back(IsImage(f));
    if (!is_image.back()) continue;
    any = true;
    const int64_t channels = f.dims.size() == 3 ? f.dims[0] : 1;
    const size_t fills = spec.fill.size();
    if (fills > 1 && static_cast<int64_t>(fills) != channels) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dataset.augmentation: the transform's ", fills,
          " channel means do not fit the image input ", f.ToString()));
    }
  }
  if (!any) {
    return absl::InvalidArgumentError(
        "dataset.augmentation: no input is an image (float32 [C, H, W] or "
        "[H, W])");
  }
  return ImageAugment(spec, std::move(is_image));
}

void ImageAugment::ApplyOne(at::Tensor sample, const AugmentDraw& d) const {
  const int64_t p = spec_.crop_padding;
  if (p > 0) {
    const int64_t h = sample.size(-2), w = sample.size(-1);
    at::Tensor src = sample.clone();
    // The padded image's row top+y is the source's row top+y-p.
    const int64_t dy = d.top - p, dx = d.left - p;
    if (spec_.fill.size() > 1) {
      for (int64_t c = 0; c < sample.size(0); ++c)
        sample[c].fill_(spec_.fill[c]);
    } else {
      sample.fill_(spec_.fill.empty() ? 0.0f : spec_.fill[0]);
    }
    const int64_t y0 = std::max<int64_t>(0, -dy), y1 = std::min(h, h - dy);
    const int64_t x0 = std::max<int64_t>(0, -dx), x1 = std::min(w, w - dx);
    if (y0 < y1 && x0 < x1) {
      sample.slice(-2, y0, y1)
          .slice(-1, x0, x1)
          .copy_(src.slice(-2, y0 + dy, y1 + dy).slice(-1, x0 + dx, x1 + dx));
    }
  }
  if (spec_.horizontal_flip && d.flip) sample.copy_(sample.flip({-1}));
}

void ImageAugment::Apply(std::vector<at::Tensor>& inputs,
                         const std::vector<int64_t>& ids, uint64_t seed,
                         int64_t epoch) const {
  for (size_t i = 0; i < ids.size(); ++i) {
    const AugmentDraw d = DrawAugment(seed, epoch, ids[i], spec_.crop_padding);
    for (size_t k = 0; k < inputs.size() && k < is_image_.size(); ++k) {
      if (is_image_[k]) ApplyOne(inputs[k][static_cast<int64_t>(i)], d);
    }
  }
}

}  // namespace ringleader
