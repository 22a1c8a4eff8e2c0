// LossTracker: read at once on the CPU (a non-finite loss caught at its
// step), summed on the device otherwise and read only when taken. The
// device path runs here on CPU tensors: what it defers is the read.
#include "worker/train/progress/loss_tracker.h"

#include <torch/torch.h>

#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/train/job_error.h"

namespace ringleader {
namespace {

using ::testing::HasSubstr;

at::Tensor Scalar(double v) { return torch::tensor(v, torch::kFloat32); }

TEST(LossTrackerTest, WindowSumsAndEpochMeansAreTheSameReadNowOrLater) {
  for (bool on_device : {false, true}) {
    LossTracker t(on_device);
    ASSERT_TRUE(t.Add(Scalar(2.0), 1, 0, 0).ok());
    ASSERT_TRUE(t.Add(Scalar(4.0), 2, 0, 8).ok());
    EXPECT_EQ(*t.TakeWindowSum(), 6.0) << on_device;
    EXPECT_EQ(*t.TakeWindowSum(), 0.0) << on_device;  // A new window.
    ASSERT_TRUE(t.Add(Scalar(0.5), 3, 0, 16).ok());
    EXPECT_EQ(*t.TakeWindowSum(), 0.5) << on_device;
    EXPECT_DOUBLE_EQ(*t.TakeEpochMean(), 6.5 / 3) << on_device;
    EXPECT_EQ(*t.TakeEpochMean(), 0.0) << on_device;  // A new epoch.
  }
}

TEST(LossTrackerTest, OnTheCpuANonFiniteLossIsCaughtAtItsStep) {
  LossTracker t(/*on_device=*/false);
  ASSERT_TRUE(t.Add(Scalar(1.0), 1, 2, 0).ok());
  const absl::Status s =
      t.Add(Scalar(std::numeric_limits<double>::infinity()), 3, 2, 17);
  EXPECT_TRUE(IsJobError(s));
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("the training loss is inf at step 3 (epoch 2, a "
                        "batch of samples 17"));
}

TEST(LossTrackerTest, OnTheDeviceANonFiniteLossIsCaughtWhenRead) {
  LossTracker t(/*on_device=*/true);
  ASSERT_TRUE(t.Add(Scalar(1.0), 4, 1, 0).ok());
  ASSERT_TRUE(t.Add(Scalar(std::nan("")), 5, 1, 8).ok());  // Not read yet.
  absl::StatusOr<double> window = t.TakeWindowSum();
  EXPECT_TRUE(IsJobError(window.status()));
  EXPECT_THAT(std::string(window.status().message()),
              HasSubstr("the training loss is nan in the steps from 4 "
                        "(epoch 1) on"));
  EXPECT_TRUE(IsJobError(t.TakeEpochMean().status()));
}

}  // namespace
}  // namespace ringleader
