#ifndef RINGLEADER_WORKER_DATA_INPUT_TRANSFORM_H_
#define RINGLEADER_WORKER_DATA_INPUT_TRANSFORM_H_

// The transform every NPY input goes through as it is read (the contract is
// InputTransform in proto/ringleader/v1/job.proto; torchvision's ToTensor
// and Normalize): y = x * scale, then per channel c, the first dimension of
// a sample, y = (y - mean[c]) / std[c]. The result is float32.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "worker/data/npy_header.h"

namespace ringleader {

// InputTransform's fields, without the proto.
struct InputTransformSpec {
  double scale = 0;  // 0 means 1.
  std::vector<double> mean;
  std::vector<double> std;

  // Whether any of it is set: then every input becomes float32.
  bool active() const { return scale != 0 || !mean.empty() || !std.empty(); }
};

// The transform of one input, fixed for its dtype and sample shape.
// Immutable after Create; Apply is thread-safe.
class SampleTransform {
 public:
  // `field` names the input in errors ("input 0 (/data/x.npy)").
  // InvalidArgument when scale is not finite, a mean is not finite, a std is
  // not finite and > 0, mean and std differ in length, or mean is set and
  // its length is not the sample's first dimension (also for a scalar
  // sample, which has no channels).
  static absl::StatusOr<SampleTransform> Create(
      const InputTransformSpec& spec, NpyDtype dtype,
      const std::vector<int64_t>& sample_dims, absl::string_view field);

  // Transforms one sample: `src` holds the sample's elements of the dtype
  // (any alignment), `dst` receives as many floats.
  void Apply(const uint8_t* src, float* dst) const;

 private:
  SampleTransform() = default;

  NpyDtype dtype_ = NpyDtype::kUint8;
  int64_t channels_ = 1;
  int64_t channel_elements_ = 0;  // Elements per channel of one sample.
  // Per channel, y = x * mul_[c] + add_[c]: scale / std and -mean / std.
  std::vector<float> mul_;
  std::vector<float> add_;
  // For one-byte dtypes, [channels x 256]: the transformed value of every
  // byte, computed once in double (so also exactly rounded), making Apply a
  // table lookup.
  std::vector<float> lut_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_INPUT_TRANSFORM_H_
