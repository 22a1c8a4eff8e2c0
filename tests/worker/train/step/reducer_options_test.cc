#include "worker/train/step/reducer_options.h"

#include "gtest/gtest.h"

namespace ringleader {
namespace {

TEST(ReducerOptionsTest, ZeroValuesKeepDdpDefaults) {
  const Reducer::Options o = ReducerOptionsFor(v1::DdpSpec());
  const Reducer::Options defaults;
  EXPECT_EQ(o.bucket_cap_bytes, defaults.bucket_cap_bytes);
  EXPECT_EQ(o.first_bucket_bytes, defaults.first_bucket_bytes);
  EXPECT_TRUE(o.overlap);
  EXPECT_EQ(o.compression, BucketCompression::kNone);
  EXPECT_EQ(o.timeline, nullptr);
  EXPECT_EQ(BucketsInFlightFor(v1::DdpSpec()), kDefaultBucketsInFlight);
}

TEST(ReducerOptionsTest, EveryFieldIsTaken) {
  v1::DdpSpec ddp;
  ddp.set_bucket_cap_bytes(4096);
  ddp.set_first_bucket_bytes(1024);
  ddp.set_allreduce_after_backward(true);
  ddp.set_gradient_compression(v1::GRADIENT_COMPRESSION_FP16);
  const Reducer::Options o = ReducerOptionsFor(ddp);
  EXPECT_EQ(o.bucket_cap_bytes, 4096u);
  EXPECT_EQ(o.first_bucket_bytes, 1024u);
  EXPECT_FALSE(o.overlap);
  EXPECT_EQ(o.compression, BucketCompression::kFp16);
  ddp.set_gradient_compression(v1::GRADIENT_COMPRESSION_BF16);
  EXPECT_EQ(ReducerOptionsFor(ddp).compression, BucketCompression::kBf16);
  ddp.set_gradient_compression(v1::GRADIENT_COMPRESSION_NONE);
  EXPECT_EQ(ReducerOptionsFor(ddp).compression, BucketCompression::kNone);
  for (int k : {1, 3, 8}) {
    ddp.set_buckets_in_flight(k);
    EXPECT_EQ(BucketsInFlightFor(ddp), k);
  }
}

}  // namespace
}  // namespace ringleader
