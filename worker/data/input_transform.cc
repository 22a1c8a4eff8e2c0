#include "worker/data/input_transform.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "worker/data/npy_convert.h"
#include "worker/data/npy_header.h"

namespace ringleader {
namespace {

// The spec's own values, whatever the input.
absl::Status CheckSpec(const InputTransformSpec& spec) {
  if (!std::isfinite(spec.scale)) {
    return absl::InvalidArgumentError(
        absl::StrCat("transform.scale must be finite, got ", spec.scale));
  }
  if (spec.mean.size() != spec.std.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("transform.mean has ", spec.mean.size(),
                     " values but transform.std has ", spec.std.size(),
                     " (one of each per channel)"));
  }
  for (size_t c = 0; c < spec.mean.size(); ++c) {
    if (!std::isfinite(spec.mean[c])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "transform.mean[", c, "] must be finite, got ", spec.mean[c]));
    }
    if (!(spec.std[c] > 0) || !std::isfinite(spec.std[c])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "transform.std[", c, "] must be finite and > 0, got ", spec.std[c]));
    }
  }
  return absl::OkStatus();
}

// The value of a one-byte element, as its dtype reads it.
double ByteValue(NpyDtype dtype, int byte) {
  return dtype == NpyDtype::kInt8 ? static_cast<int8_t>(byte) : byte;
}

}  // namespace

absl::StatusOr<SampleTransform> SampleTransform::Create(
    const InputTransformSpec& spec, NpyDtype dtype,
    const std::vector<int64_t>& sample_dims, absl::string_view field) {
  if (absl::Status s = CheckSpec(spec); !s.ok()) return s;
  SampleTransform t;
  t.dtype_ = dtype;
  int64_t numel = 1;
  for (int64_t d : sample_dims) numel *= d;
  if (!spec.mean.empty()) {
    if (sample_dims.empty() ||
        sample_dims[0] != static_cast<int64_t>(spec.mean.size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "transform.mean and transform.std have ", spec.mean.size(),
          " values (one per channel) but ", field, " has ",
          sample_dims.empty()
              ? "scalar samples, without channels"
              : absl::StrCat(sample_dims[0],
                             sample_dims[0] == 1 ? " channel" : " channels"),
          " (the first dimension of a sample)"));
    }
    t.channels_ = sample_dims[0];
  }
  t.channel_elements_ = t.channels_ == 0 ? 0 : numel / t.channels_;
  const double scale = spec.scale == 0 ? 1.0 : spec.scale;
  for (int64_t c = 0; c < t.channels_; ++c) {
    const double mean = spec.mean.empty() ? 0.0 : spec.mean[c];
    const double stddev = spec.std.empty() ? 1.0 : spec.std[c];
    t.mul_.push_back(static_cast<float>(scale / stddev));
    t.add_.push_back(static_cast<float>(-mean / stddev));
    if (NpyDtypeSize(dtype) != 1) continue;
    for (int byte = 0; byte < 256; ++byte) {
      t.lut_.push_back(
          static_cast<float>((ByteValue(dtype, byte) * scale - mean) / stddev));
    }
  }
  return t;
}

void SampleTransform::Apply(const uint8_t* src, float* dst) const {
  const int64_t n = channel_elements_;
  if (!lut_.empty()) {
    for (int64_t c = 0; c < channels_; ++c) {
      const float* lut = lut_.data() + 256 * c;
      const uint8_t* in = src + c * n;
      float* out = dst + c * n;
      for (int64_t i = 0; i < n; ++i) out[i] = lut[in[i]];
    }
    return;
  }
  // Convert, then scale in place: two passes over a sample that is in
  // cache, each a simple loop the compiler vectorizes. In float, not double:
  // a few ulp off the exact value, as torchvision's float Normalize is.
  ConvertToFloat32(dtype_, src, static_cast<size_t>(n * channels_), dst);
  for (int64_t c = 0; c < channels_; ++c) {
    const float mul = mul_[c];
    const float add = add_[c];
    float* out = dst + c * n;
    for (int64_t i = 0; i < n; ++i) out[i] = out[i] * mul + add;
  }
}

}  // namespace ringleader
