#include "coordinator/finish_line.h"

#include "gtest/gtest.h"

namespace ringleader {
namespace {

TEST(FinishLineTest, CrossedOnceWhenEveryMemberReachedTheLastStep) {
  FinishLine line;
  line.StartGeneration("job", 1, {"a", "b"});
  // The plan's length comes with a report; steps alone say nothing yet.
  EXPECT_FALSE(line.Reached("job", 1, "a", 50));
  EXPECT_FALSE(line.Reached("job", 1, "b", 49));
  EXPECT_FALSE(line.Reached("job", 1, "a", 50, /*total_steps=*/50));
  EXPECT_TRUE(line.Reached("job", 1, "b", 50));
  EXPECT_FALSE(line.Reached("job", 1, "b", 50));  // Once.
}

TEST(FinishLineTest, StepsNeverGoBackAndOtherGenerationsAreIgnored) {
  FinishLine line;
  line.StartGeneration("job", 2, {"a", "b"});
  EXPECT_FALSE(line.Reached("job", 2, "a", 10, 10));
  EXPECT_FALSE(line.Reached("job", 2, "a", 3));   // An older heartbeat.
  EXPECT_FALSE(line.Reached("job", 1, "b", 10));  // Another generation.
  EXPECT_FALSE(line.Reached("job", 2, "c", 10));  // Not a member.
  line.StartGeneration("job", 1, {"a", "b"});     // Older: ignored.
  EXPECT_TRUE(line.Reached("job", 2, "b", 10));
}

TEST(FinishLineTest, ANewGenerationStartsOverWithItsOwnPlan) {
  FinishLine line;
  line.StartGeneration("job", 1, {"a", "b"});
  EXPECT_FALSE(line.Reached("job", 1, "a", 10, 10));
  line.StartGeneration("job", 2, {"a"});
  // Generation 1's plan does not carry over (the world size changed).
  EXPECT_FALSE(line.Reached("job", 2, "a", 10));
  EXPECT_TRUE(line.Reached("job", 2, "a", 15, 15));
  line.EndJob("job");
  EXPECT_FALSE(line.Reached("job", 2, "a", 15, 15));
}

}  // namespace
}  // namespace ringleader
