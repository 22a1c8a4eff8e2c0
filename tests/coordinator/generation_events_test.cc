#include "coordinator/generation_events.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

using ::testing::ElementsAre;
using Kind = GenerationEvent::Kind;

const absl::Time kT = absl::FromUnixSeconds(100);

TEST(GenerationEventsTest, FormedNamesMembersAndWhoJoinedOrLeft) {
  GenerationEvents events;
  events.Formed("job", 1, {{"w0", "h0"}, {"w1", "h1"}}, kT);
  events.Formed("job", 2, {{"w0", "h0"}, {"w2", "h2"}}, kT);
  const GenerationEvents::Snapshot s = events.Get("job");
  ASSERT_EQ(s.events.size(), 2u);
  EXPECT_THAT(s.events[0].members, ElementsAre("h0 (w0)", "h1 (w1)"));
  EXPECT_TRUE(s.events[0].joined.empty());  // The first generation.
  EXPECT_THAT(s.events[1].joined, ElementsAre("w2"));
  EXPECT_THAT(s.events[1].left, ElementsAre("w1"));
  EXPECT_FALSE(s.events[1].recovery);
}

TEST(GenerationEventsTest, ARecoveryCountsTheStepsLost) {
  GenerationEvents events;
  events.Formed("job", 1, {{"w0", "h0"}, {"w1", "h1"}}, kT);
  events.StepHeard("job", 1, 0);  // None completed yet: no step.
  events.StepHeard("job", 1, 12);
  events.StepHeard("job", 1, 30);
  events.Ended("job", 1, Kind::kEnded, "worker w1 lease expired", kT);
  events.Formed("job", 2, {{"w0", "h0"}}, kT);
  events.StepHeard("job", 2, 0);
  EXPECT_EQ(events.Get("job").events.back().steps_lost, -1);
  // Resumed from the checkpoint of step 20: its first step is 21.
  events.StepHeard("job", 2, 21);
  events.StepHeard("job", 2, 22);  // Only the first counts.
  const GenerationEvents::Snapshot s = events.Get("job");
  ASSERT_EQ(s.events.size(), 3u);
  EXPECT_EQ(s.events[1].kind, Kind::kEnded);
  EXPECT_EQ(s.events[1].reached_step, 30);
  EXPECT_EQ(s.events[1].reason, "worker w1 lease expired");
  EXPECT_TRUE(s.events[2].recovery);
  EXPECT_EQ(s.events[2].steps_lost, 10);
}

TEST(GenerationEventsTest, RecoveringFromPeersLosesNothing) {
  GenerationEvents events;
  events.Formed("job", 1, {{"w0", "h0"}, {"w1", "h1"}}, kT);
  events.StepHeard("job", 1, 30);
  events.Ended("job", 1, Kind::kPreempted, "every worker signalled", kT);
  events.Formed("job", 2, {{"w0", "h0"}}, kT);
  events.StepHeard("job", 2, 35);  // Heard late: clamped, not negative.
  EXPECT_EQ(events.Get("job").events.back().steps_lost, 0);
}

TEST(GenerationEventsTest, AResizeIsNoRecovery) {
  GenerationEvents events;
  events.Formed("job", 1, {{"w0", "h0"}}, kT);
  events.Ended("job", 1, Kind::kResized, "a worker is waiting", kT);
  events.Formed("job", 2, {{"w0", "h0"}, {"w1", "h1"}}, kT);
  EXPECT_FALSE(events.Get("job").events.back().recovery);
}

TEST(GenerationEventsTest, LateAndStaleNewsIsIgnored) {
  GenerationEvents events;
  events.Formed("job", 2, {{"w0", "h0"}}, kT);
  events.Formed("job", 1, {{"w9", "h9"}}, kT);  // Its hook ran late.
  events.Ended("job", 1, Kind::kEnded, "old", kT);
  events.Ended("other", 1, Kind::kEnded, "unknown job", kT);
  EXPECT_EQ(events.Get("job").events.size(), 1u);
  EXPECT_TRUE(events.Get("other").events.empty());
}

TEST(GenerationEventsTest, AdoptedGenerationsAreSaidSo) {
  GenerationEvents events;
  events.Formed("job", 3, {{"w0", "h0"}}, kT, /*adopted=*/true);
  EXPECT_EQ(events.Get("job").events[0].kind, Kind::kAdopted);
  EXPECT_STREQ(GenerationEventKindName(Kind::kAdopted),
               "adopted after a coordinator restart");
}

TEST(GenerationEventsTest, BoundedPerJobAndForgotten) {
  GenerationEvents events;
  for (int g = 1; g <= 150; ++g) {
    events.Formed("job", g, {{"w0", "h0"}}, kT);
    events.Ended("job", g, Kind::kEnded, "again", kT);
  }
  GenerationEvents::Snapshot s = events.Get("job");
  EXPECT_EQ(s.events.size(), kMaxGenerationEvents);
  EXPECT_EQ(s.dropped, 300 - static_cast<int64_t>(kMaxGenerationEvents));
  EXPECT_EQ(s.events.back().generation, 150);
  events.Forget("job");
  EXPECT_TRUE(events.Get("job").events.empty());
}

}  // namespace
}  // namespace ringleader
