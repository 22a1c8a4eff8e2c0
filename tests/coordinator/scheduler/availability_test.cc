#include "coordinator/scheduler/availability.h"

#include "gtest/gtest.h"

namespace ringleader::scheduler {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1000);

TEST(AvailabilityTest, KnownEndsFreeWorkersLater) {
  Availability a(2, kNow);
  a.Release(3, kNow + absl::Minutes(5));
  a.Release(4, absl::InfiniteFuture());  // Never counted.
  EXPECT_EQ(a.Now(), 2);
  EXPECT_EQ(a.Headroom(), 2);
  EXPECT_EQ(a.EarliestFit(2), kNow);
  EXPECT_EQ(a.EarliestFit(5), kNow + absl::Minutes(5));
  EXPECT_EQ(a.EarliestFit(6), absl::InfiniteFuture());
}

TEST(AvailabilityTest, AReservationLimitsWhatMayBeTakenNow) {
  Availability a(2, kNow);
  a.Release(3, kNow + absl::Minutes(5));
  a.Reserve(4, a.EarliestFit(4));  // From minute 5 on.
  // 2 free now, 5 at minute 5 less the 4 reserved: 1 may be held for good.
  EXPECT_EQ(a.Now(), 2);
  EXPECT_EQ(a.Headroom(), 1);
  a.Take(1);
  EXPECT_EQ(a.Headroom(), 0);
  EXPECT_EQ(a.Now(), 1);
}

TEST(AvailabilityTest, AnEndAlreadyPastIsSoonNotNow) {
  Availability a(0, kNow);
  a.Release(2, kNow - absl::Minutes(1));  // Running late.
  EXPECT_EQ(a.Now(), 0);
  EXPECT_GT(a.EarliestFit(2), kNow);
  EXPECT_LT(a.EarliestFit(2), kNow + absl::Seconds(1));
}

TEST(AvailabilityTest, FreedNowCountsAtOnceAndLessLater) {
  Availability a(0, kNow);
  a.Release(4, kNow + absl::Minutes(10));
  // Two of those four given back now (a shrink).
  a.FreeNow(2);
  a.Release(-2, kNow + absl::Minutes(10));
  EXPECT_EQ(a.Now(), 2);
  EXPECT_EQ(a.EarliestFit(4), kNow + absl::Minutes(10));
  EXPECT_EQ(a.EarliestFit(5), absl::InfiniteFuture());
}

}  // namespace
}  // namespace ringleader::scheduler
