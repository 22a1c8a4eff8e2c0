#include "worker/train/step/step_plan.h"

#include "gtest/gtest.h"

namespace ringleader {
namespace {

v1::JobSpec Spec(int epochs, int batch, int accumulate = 1,
                 bool drop_last = false) {
  v1::JobSpec s;
  s.set_epochs(epochs);
  s.set_batch_size(batch);
  s.set_gradient_accumulation_steps(accumulate);
  s.mutable_dataset()->set_drop_last(drop_last);
  return s;
}

TEST(StepPlanTest, StepsPerEpoch) {
  // 9600 samples, 3 ranks of 16: 200 steps.
  EXPECT_EQ(OptimizerStepsPerEpoch(Spec(1, 16), 9600, 3), 200);
  // 10 samples on 3 ranks: padded to 4 each, or cut to 3 with drop_last.
  EXPECT_EQ(OptimizerStepsPerEpoch(Spec(1, 1), 10, 3), 4);
  EXPECT_EQ(OptimizerStepsPerEpoch(Spec(1, 1, 1, true), 10, 3), 3);
  // Accumulation: 550 per rank is 35 micro-batches of 16, 9 steps of 4 (the
  // epoch's last micro-batch always steps).
  EXPECT_EQ(OptimizerStepsPerEpoch(Spec(1, 16, 4), 1100, 2), 9);
  EXPECT_EQ(OptimizerStepsPerEpoch(Spec(1, 16, 4), 1000, 2), 8);
  // Spec value 0 means 1.
  EXPECT_EQ(OptimizerStepsPerEpoch(Spec(1, 16, 0), 1000, 2), 32);
}

TEST(StepPlanTest, AJobThatKeepsItsSizePlansEpochsTimesStepsPerEpoch) {
  const v1::JobSpec spec = Spec(3, 16);
  EXPECT_EQ(PlannedOptimizerSteps(spec, 9600, 3, {}), 600);
  // Resumed at world 3 anywhere on the way, the plan is the same.
  EXPECT_EQ(PlannedOptimizerSteps(spec, 9600, 3, {0, 60, 60 * 48}), 600);
  EXPECT_EQ(PlannedOptimizerSteps(spec, 9600, 3, {1, 200, 0}), 600);
  EXPECT_EQ(PlannedOptimizerSteps(spec, 9600, 3, {2, 460, 60 * 48}), 600);
}

TEST(StepPlanTest, AWorldSizeChangePlansTheRestAtTheNewSize) {
  const v1::JobSpec spec = Spec(3, 16);
  // 60 steps at world 3 consumed 2880 samples of epoch 0; 6720 are left, 210
  // steps of 2 x 16, then two epochs of 300.
  EXPECT_EQ(PlannedOptimizerSteps(spec, 9600, 2, {0, 60, 2880}), 870);
  // At an epoch's end: whole epochs only.
  EXPECT_EQ(PlannedOptimizerSteps(spec, 9600, 2, {1, 200, 0}), 800);
  // Growing: 60 steps at world 2 consumed 1920; 7680 left are 160 steps of
  // 3 x 16, then two epochs of 200.
  EXPECT_EQ(PlannedOptimizerSteps(spec, 9600, 3, {0, 60, 1920}), 620);
}

TEST(StepPlanTest, TheRestOfAStartedEpochIsPaddedOrCutLikeItsShard) {
  // 10 samples, 3 consumed: 7 left on 2 ranks of 1 is 4 (padded) or 3.
  EXPECT_EQ(PlannedOptimizerSteps(Spec(1, 1), 10, 2, {0, 3, 3}), 3 + 4);
  EXPECT_EQ(PlannedOptimizerSteps(Spec(1, 1, 1, true), 10, 2, {0, 3, 3}),
            3 + 3);
}

TEST(StepPlanTest, AFinishedJobPlansTheStepsItMade) {
  EXPECT_EQ(PlannedOptimizerSteps(Spec(3, 16), 9600, 2, {3, 600, 0}), 600);
}

}  // namespace
}  // namespace ringleader
