// The schedule against closed-form values: warmup, each kind's curve, the
// floor, STEP's boundaries, the horizon (explicit or planned).
#include "worker/train/step/lr_schedule.h"

#include <cmath>

#include "gtest/gtest.h"

namespace ringleader {
namespace {

v1::LrSchedule Schedule(v1::LrScheduleKind kind, int64_t warmup = 0,
                        double min_lr = 0, int64_t decay_steps = 0) {
  v1::LrSchedule s;
  s.set_kind(kind);
  s.set_warmup_steps(warmup);
  s.set_min_lr(min_lr);
  s.set_decay_steps(decay_steps);
  return s;
}

TEST(LrScheduleTest, ConstantIsThePeakAtEveryStep) {
  for (v1::LrScheduleKind kind :
       {v1::LR_SCHEDULE_KIND_UNSPECIFIED, v1::LR_SCHEDULE_KIND_CONSTANT}) {
    const v1::LrSchedule s = Schedule(kind);
    for (int64_t t : {0, 1, 99, 100, 1000000}) {
      EXPECT_EQ(LearningRateAt(s, 0.1, t, 100), 0.1) << t;
    }
  }
}

TEST(LrScheduleTest, WarmupRampsLinearlyToThePeakAtItsLastStep) {
  const v1::LrSchedule s = Schedule(v1::LR_SCHEDULE_KIND_CONSTANT, 4);
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 0.8, 0, 100), 0.2);  // Never 0.
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 0.8, 1, 100), 0.4);
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 0.8, 2, 100), 0.6);
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 0.8, 3, 100), 0.8);
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 0.8, 4, 100), 0.8);
  // Warmup ignores the floor: it starts below it.
  const v1::LrSchedule cos =
      Schedule(v1::LR_SCHEDULE_KIND_COSINE, 4, /*min_lr=*/0.5);
  EXPECT_DOUBLE_EQ(LearningRateAt(cos, 0.8, 0, 100), 0.2);
}

TEST(LrScheduleTest, CosineFromThePeakToTheFloorAtTheHorizon) {
  // W = 10, H = 110 (planned), m = 0.01, lr = 1.
  const v1::LrSchedule s = Schedule(v1::LR_SCHEDULE_KIND_COSINE, 10, 0.01);
  auto want = [](int64_t t) {
    return 0.01 + 0.99 * 0.5 * (1 + std::cos(M_PI * (t - 10) / 100.0));
  };
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 1.0, 9, 110), 1.0);  // Last warmup step.
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 1.0, 10, 110), 1.0);
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 1.0, 60, 110), 0.01 + 0.99 * 0.5);
  for (int64_t t : {11, 35, 85, 109}) {
    EXPECT_DOUBLE_EQ(LearningRateAt(s, 1.0, t, 110), want(t)) << t;
  }
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 1.0, 110, 110), 0.01);
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 1.0, 5000, 110), 0.01);
  // Monotone down between warmup and horizon.
  for (int64_t t = 10; t < 110; ++t) {
    EXPECT_GT(LearningRateAt(s, 1.0, t, 110),
              LearningRateAt(s, 1.0, t + 1, 110))
        << t;
  }
}

TEST(LrScheduleTest, LinearFromThePeakToTheFloorAtTheHorizon) {
  const v1::LrSchedule s = Schedule(v1::LR_SCHEDULE_KIND_LINEAR, 0, 0.2);
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 1.0, 0, 10), 1.0);
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 1.0, 5, 10), 0.6);
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 1.0, 9, 10), 1.0 - 0.8 * 0.9);
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 1.0, 10, 10), 0.2);
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 1.0, 11, 10), 0.2);
}

TEST(LrScheduleTest, AnExplicitHorizonWinsOverThePlannedSteps) {
  // nanoGPT: lr_decay_iters independent of how long the job runs.
  const v1::LrSchedule s =
      Schedule(v1::LR_SCHEDULE_KIND_LINEAR, 0, 0, /*decay_steps=*/20);
  EXPECT_EQ(DecayHorizon(s, 1000), 20);
  EXPECT_EQ(DecayHorizon(Schedule(v1::LR_SCHEDULE_KIND_LINEAR), 1000), 1000);
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 1.0, 10, 1000), 0.5);
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 1.0, 20, 1000), 0.0);
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 1.0, 500, 1000), 0.0);
}

TEST(LrScheduleTest, StepDecaysAtEachBoundaryDownToTheFloor) {
  v1::LrSchedule s = Schedule(v1::LR_SCHEDULE_KIND_STEP, 2, 0.0015);
  s.set_step_size(3);
  s.set_gamma(0.5);
  // Warmup 0, 1; then boundaries every 3 steps counted from the warmup's end.
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 0.1, 0, 0), 0.05);
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 0.1, 1, 0), 0.1);
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 0.1, 2, 0), 0.1);
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 0.1, 4, 0), 0.1);
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 0.1, 5, 0), 0.05);
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 0.1, 7, 0), 0.05);
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 0.1, 8, 0), 0.025);
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 0.1, 11, 0), 0.0125);
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 0.1, 14, 0), 0.00625);
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 0.1, 17, 0), 0.003125);
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 0.1, 20, 0), 0.0015625);
  // 0.00078125 is below the floor.
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 0.1, 23, 0), 0.0015);
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 0.1, 1000000, 0), 0.0015);
  // The planned steps do not matter to STEP.
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 0.1, 8, 9), 0.025);
}

TEST(LrScheduleTest, StepGammaZeroMeansTorchsDefault) {
  v1::LrSchedule s = Schedule(v1::LR_SCHEDULE_KIND_STEP);
  s.set_step_size(10);
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 1.0, 9, 0), 1.0);
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 1.0, 10, 0), 0.1);
  EXPECT_NEAR(LearningRateAt(s, 1.0, 25, 0), 0.01, 1e-17);
}

TEST(LrScheduleTest, APlannedHorizonInsideTheWarmupNeverLeavesIt) {
  // A job shorter than its warmup: every step it makes is a warmup step.
  const v1::LrSchedule s = Schedule(v1::LR_SCHEDULE_KIND_COSINE, 100, 0.01);
  EXPECT_DOUBLE_EQ(LearningRateAt(s, 1.0, 49, 50), 0.5);
}

}  // namespace
}  // namespace ringleader
