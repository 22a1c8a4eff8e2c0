#include "worker/train/step/reducer_options.h"

namespace ringleader {

Reducer::Options ReducerOptionsFor(const v1::DdpSpec& ddp) {
  Reducer::Options options;
  if (ddp.bucket_cap_bytes() > 0) {
    options.bucket_cap_bytes = ddp.bucket_cap_bytes();
  }
  if (ddp.first_bucket_bytes() > 0) {
    options.first_bucket_bytes = ddp.first_bucket_bytes();
  }
  options.overlap = !ddp.allreduce_after_backward();
  options.communicate_alone = ddp.communicate_alone();
  switch (ddp.gradient_compression()) {
    case v1::GRADIENT_COMPRESSION_FP16:
      options.compression = BucketCompression::kFp16;
      break;
    case v1::GRADIENT_COMPRESSION_BF16:
      options.compression = BucketCompression::kBf16;
      break;
    default:  // NONE; the validator refuses other values.
      options.compression = BucketCompression::kNone;
      break;
  }
  return options;
}

int BucketsInFlightFor(const v1::DdpSpec& ddp) {
  return ddp.buckets_in_flight() > 0 ? ddp.buckets_in_flight()
                                     : kDefaultBucketsInFlight;
}

}  // namespace ringleader
