// PhaseClock and the phases TimelineSpan sets (worker/timeline/phase.h):
// what a heartbeat reads while the training thread is in a span.
#include "worker/timeline/phase.h"

#include "gtest/gtest.h"
#include "worker/timeline/timeline.h"

namespace ringleader {
namespace {

TEST(PhaseClockTest, SpansSetThePhaseEvenWithTheTimelineOff) {
  PhaseClock phases;
  Timeline off("", /*rank=*/0, /*max_steps=*/0);
  off.SetPhases(&phases);
  off.SetStep(3);
  {
    TimelineSpan span(&off, "data_wait", Phase::kDataLoading);
    EXPECT_EQ(phases.Read().phase, Phase::kDataLoading);
    EXPECT_EQ(phases.Read().step, 3);
  }
  // A step's phases follow one another: the last stays until the next.
  EXPECT_EQ(phases.Read().phase, Phase::kDataLoading);
  { TimelineSpan span(&off, "forward", Phase::kForward); }
  EXPECT_EQ(phases.Read().phase, Phase::kForward);
  EXPECT_TRUE(off.Events().empty());
  // A span without a phase (or a null timeline) changes nothing.
  { TimelineSpan span(&off, "other"); }
  { TimelineSpan span(nullptr, "null", Phase::kBackward); }
  EXPECT_EQ(phases.Read().phase, Phase::kForward);
}

TEST(PhaseClockTest, AnEnclosingPhaseComesBackWithItsStart) {
  PhaseClock phases;
  Timeline tl("", 0, 0);
  tl.SetPhases(&phases);
  {
    TimelineSpan eval(&tl, "evaluation", Phase::kEvaluation);
    {
      TimelineSpan sync(&tl, "buffer_sync", Phase::kBufferSync);
      EXPECT_EQ(phases.Read().phase, Phase::kBufferSync);
    }
    EXPECT_EQ(phases.Read().phase, Phase::kEvaluation);
  }
}

TEST(PhaseClockTest, BucketOnlyInAllReduceWaitAndStepTimesAfterTheFirst) {
  PhaseClock phases;
  phases.Enter(Phase::kAllReduceWait);
  phases.SetBucket(3);
  EXPECT_EQ(phases.Read().bucket, 3);
  phases.Enter(Phase::kOptimizer);
  EXPECT_EQ(phases.Read().bucket, -1);
  EXPECT_EQ(phases.Read().step_time_ms, 0);
  phases.SetStep(1);  // Step 1 starts: nothing timed yet.
  phases.SetStep(1);  // Micro-batches of one step.
  EXPECT_EQ(phases.Read().step_time_ms, 0);
  phases.SetStep(2);  // Step 1 took under a millisecond: shown as 1.
  EXPECT_EQ(phases.Read().step_time_ms, 1);
  phases.SetStep(5);  // A jump (a resume) times nothing.
  EXPECT_EQ(phases.Read().step_time_ms, 1);
  phases.ResetSteps();
  EXPECT_EQ(phases.Read().step_time_ms, 0);
  EXPECT_EQ(phases.Read().step, 0);
}

}  // namespace
}  // namespace ringleader
