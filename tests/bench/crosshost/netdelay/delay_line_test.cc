#include "bench/crosshost/netdelay/delay_line.h"

#include <chrono>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace ringleader {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using Clock = DelayLine::Clock;
using Ids = std::vector<uint32_t>;

// A fake clock: instants as offsets from an arbitrary origin.
Clock::time_point At(Clock::duration d) { return Clock::time_point() + d; }

Ids Due(DelayLine& line, Clock::duration now) {
  Ids out;
  line.ReleaseDue(At(now), &out);
  return out;
}

TEST(DelayLineTest, HoldsEachPacketForTheDelayThenReleasesInOrder) {
  DelayLine line(milliseconds(2), 100);
  ASSERT_TRUE(line.Admit(7, At(microseconds(0))));
  ASSERT_TRUE(line.Admit(8, At(microseconds(500))));
  ASSERT_TRUE(line.Admit(9, At(microseconds(1500))));
  EXPECT_EQ(line.NextDeadline(), At(milliseconds(2)));
  EXPECT_EQ(Due(line, microseconds(1999)), Ids{});
  EXPECT_EQ(Due(line, milliseconds(2)), Ids{7});
  EXPECT_EQ(line.NextDeadline(), At(microseconds(2500)));
  EXPECT_EQ(Due(line, milliseconds(4)), (Ids{8, 9}));
  EXPECT_FALSE(line.NextDeadline().has_value());
  EXPECT_EQ(line.counters().admitted, 3u);
  EXPECT_EQ(line.counters().released, 3u);
}

TEST(DelayLineTest, ZeroDelayReleasesAtOnce) {
  DelayLine line(Clock::duration(0), 10);
  ASSERT_TRUE(line.Admit(1, At(milliseconds(5))));
  EXPECT_EQ(Due(line, milliseconds(5)), Ids{1});
  EXPECT_EQ(line.counters().max_lateness, Clock::duration(0));
}

TEST(DelayLineTest, RefusesAndCountsPacketsBeyondCapacity) {
  DelayLine line(milliseconds(20), 2);
  EXPECT_TRUE(line.Admit(1, At(milliseconds(0))));
  EXPECT_TRUE(line.Admit(2, At(milliseconds(1))));
  EXPECT_FALSE(line.Admit(3, At(milliseconds(2))));
  EXPECT_EQ(line.counters().dropped, 1u);
  EXPECT_EQ(line.counters().max_depth, 2u);
  EXPECT_EQ(Due(line, milliseconds(20)), Ids{1});
  // Room again once one left.
  EXPECT_TRUE(line.Admit(4, At(milliseconds(20))));
  EXPECT_EQ(Due(line, milliseconds(40)), (Ids{2, 4}));
  EXPECT_EQ(line.counters().admitted, 3u);
  EXPECT_EQ(line.counters().released, 3u);
}

TEST(DelayLineTest, CountsHowLateReleasesWere) {
  DelayLine line(milliseconds(2), 10);
  line.Admit(1, At(milliseconds(0)));
  line.Admit(2, At(milliseconds(1)));
  // Woken 300 us after the first deadline: 1 is 300 us late, 2 not yet due.
  EXPECT_EQ(Due(line, microseconds(2300)), Ids{1});
  EXPECT_EQ(Due(line, microseconds(3100)), Ids{2});
  EXPECT_EQ(line.counters().max_lateness, microseconds(300));
  EXPECT_EQ(line.counters().total_lateness, microseconds(400));
  EXPECT_EQ(line.counters().late_over_1ms, 0u);
  line.Admit(3, At(milliseconds(4)));
  EXPECT_EQ(Due(line, microseconds(7500)), Ids{3});  // 1.5 ms late
  EXPECT_EQ(line.counters().late_over_1ms, 1u);
}

TEST(DelayLineTest, AClockSteppingBackNeverReordersPackets) {
  DelayLine line(milliseconds(2), 10);
  line.Admit(1, At(milliseconds(10)));
  line.Admit(2, At(milliseconds(9)));  // Earlier instant, later arrival.
  EXPECT_EQ(Due(line, milliseconds(11)), Ids{});
  EXPECT_EQ(Due(line, milliseconds(12)), (Ids{1, 2}));
}

TEST(DelayLineTest, ReleaseAllEmptiesTheLineRegardlessOfDeadlines) {
  DelayLine line(milliseconds(20), 10);
  line.Admit(1, At(milliseconds(0)));
  line.Admit(2, At(milliseconds(1)));
  Ids out;
  line.ReleaseAll(&out);
  EXPECT_EQ(out, (Ids{1, 2}));
  EXPECT_EQ(line.depth(), 0u);
  EXPECT_EQ(line.counters().released, 2u);
  EXPECT_FALSE(line.NextDeadline().has_value());
}

}  // namespace
}  // namespace ringleader
