#include "coordinator/barrier_manager.h"

#include <optional>

#include "common/fake_clock.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

class BarrierManagerTest : public ::testing::Test {
 protected:
  // Returns the round the arrival waits in (0: answered at once).
  uint64_t Arrive(const std::string& name, int rank, int world,
                  std::optional<absl::Status>* out,
                  absl::Duration timeout = absl::Seconds(10)) {
    return barriers_.Arrive(gen_, name, rank, world, clock_.Now() + timeout,
                            [out](absl::Status s) { *out = s; });
  }
  FakeClock clock_;
  BarrierManager barriers_{&clock_};
  GenerationKey gen_{"job", 3};
};

TEST_F(BarrierManagerTest, CompletesWhenAllRanksArrive) {
  std::optional<absl::Status> r[3];
  Arrive("start", 2, 3, &r[2]);
  Arrive("start", 0, 3, &r[0]);
  EXPECT_FALSE(r[0].has_value());
  EXPECT_FALSE(r[2].has_value());
  Arrive("start", 1, 3, &r[1]);
  for (auto& x : r) {
    ASSERT_TRUE(x.has_value());
    EXPECT_TRUE(x->ok());
  }
  EXPECT_EQ(barriers_.pending_arrivals(), 0u);
  EXPECT_EQ(clock_.pending_timers(), 0u);
}

TEST_F(BarrierManagerTest, SameNameCanBeUsedAgain) {
  for (int round = 0; round < 3; ++round) {
    std::optional<absl::Status> a, b;
    Arrive("epoch", 0, 2, &a);
    Arrive("epoch", 1, 2, &b);
    ASSERT_TRUE(a.has_value() && b.has_value());
    EXPECT_TRUE(a->ok() && b->ok());
  }
}

TEST_F(BarrierManagerTest, SingleRankCompletesAtOnce) {
  std::optional<absl::Status> a;
  Arrive("solo", 0, 1, &a);
  ASSERT_TRUE(a.has_value());
  EXPECT_TRUE(a->ok());
}

TEST_F(BarrierManagerTest, DropGenerationFailsWaitersWithAborted) {
  std::optional<absl::Status> a;
  Arrive("sync", 0, 2, &a);
  barriers_.DropGeneration(gen_, "worker died");
  ASSERT_TRUE(a.has_value());
  EXPECT_TRUE(absl::IsAborted(*a));
  EXPECT_EQ(clock_.pending_timers(), 0u);
}

TEST_F(BarrierManagerTest, TimesOutWithCount) {
  std::optional<absl::Status> a;
  Arrive("slow", 1, 4, &a, absl::Seconds(2));
  clock_.Advance(absl::Seconds(2));
  ASSERT_TRUE(a.has_value());
  EXPECT_TRUE(absl::IsDeadlineExceeded(*a));
  EXPECT_NE(a->message().find("1 of 4"), std::string::npos) << a->message();
}

TEST_F(BarrierManagerTest, RejectsBadArrivals) {
  std::optional<absl::Status> a, b, c, d, e;
  Arrive("x", 5, 2, &a);
  EXPECT_TRUE(absl::IsInvalidArgument(*a));
  Arrive("x", -1, 2, &b);
  EXPECT_TRUE(absl::IsInvalidArgument(*b));
  Arrive("", 0, 2, &c);
  EXPECT_TRUE(absl::IsInvalidArgument(*c));
  std::optional<absl::Status> first;
  Arrive("x", 0, 2, &first);
  Arrive("x", 0, 2, &d);
  EXPECT_TRUE(absl::IsAlreadyExists(*d));
  Arrive("x", 1, 3, &e);
  EXPECT_TRUE(absl::IsFailedPrecondition(*e));
  EXPECT_FALSE(first.has_value());
}

TEST_F(BarrierManagerTest,
       CancelledArrivalIsWithdrawnAndTheRankMayArriveAgain) {
  std::optional<absl::Status> gone, again, other;
  const uint64_t round = Arrive("sync", 0, 2, &gone);
  ASSERT_NE(round, 0u);
  barriers_.Cancel(gen_, "sync", round, 0);
  ASSERT_TRUE(gone.has_value());
  EXPECT_TRUE(absl::IsCancelled(*gone)) << *gone;
  EXPECT_EQ(barriers_.pending_arrivals(), 0u);
  EXPECT_EQ(clock_.pending_timers(), 0u);  // Its deadline went with it.
  // Not "rank 0 already waits": it arrives again and the round completes.
  EXPECT_EQ(Arrive("sync", 0, 2, &again), round + 1);
  EXPECT_EQ(Arrive("sync", 1, 2, &other), 0u);
  ASSERT_TRUE(again.has_value() && other.has_value());
  EXPECT_TRUE(again->ok() && other->ok());
  // Cancelling after the release (or twice) does nothing.
  barriers_.Cancel(gen_, "sync", round + 1, 0);
  barriers_.Cancel(gen_, "sync", round, 0);
  EXPECT_TRUE(again->ok());
}

TEST_F(BarrierManagerTest, AwaitArrivalsBetweenSeesAWithdrawal) {
  std::optional<absl::Status> a;
  const uint64_t round = Arrive("w", 0, 2, &a);
  EXPECT_FALSE(barriers_.AwaitArrivalsBetween(0, 0, absl::ZeroDuration()));
  barriers_.Cancel(gen_, "w", round, 0);
  EXPECT_TRUE(barriers_.AwaitArrivalsBetween(0, 0, absl::ZeroDuration()));
}

}  // namespace
}  // namespace ringleader
