// The split of a global batch over ranks of unequal speed: proportional,
// complete, the even split when the ranks are alike, and changed only
// ahead of what the loaders cut.
#include "worker/train/batch_split.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

using ::testing::ElementsAre;

int64_t Sum(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{0});
}

TEST(SplitByRatesTest, SharesInProportionToTheRates) {
  EXPECT_THAT(SplitByRates(128, {300, 100}), ElementsAre(96, 32));
  EXPECT_THAT(SplitByRates(128, {1, 1}), ElementsAre(64, 64));
  EXPECT_THAT(SplitByRates(90, {1, 2, 3}), ElementsAre(15, 30, 45));
}

TEST(SplitByRatesTest, AlwaysSumsToTheTotalAndGivesEveryRankOne) {
  for (int64_t total : {3, 7, 64, 129, 1000}) {
    const std::vector<int64_t> c = SplitByRates(total, {1000, 1, 3.3});
    EXPECT_EQ(Sum(c), total) << total;
    EXPECT_GE(*std::min_element(c.begin(), c.end()), 1) << total;
  }
  // Fewer samples than ranks: some get none, the sum still holds.
  EXPECT_EQ(Sum(SplitByRates(2, {1, 1, 1})), 2);
}

TEST(SplitByRatesTest, LeftoverSamplesGoToTheLargestRemaindersThenLowRanks) {
  // 13/3 each: 4, 4, 4 and the one left to rank 0.
  EXPECT_THAT(SplitByRates(12, {1, 1, 1}), ElementsAre(4, 4, 4));
  EXPECT_THAT(SplitByRates(13, {1, 1, 1}), ElementsAre(5, 4, 4));
  // 4.55 and 5.45: rank 0's remainder is the larger.
  EXPECT_THAT(SplitByRates(10, {1, 1.2}), ElementsAre(5, 5));
  // 4.17 and 5.83: rank 1's.
  EXPECT_THAT(SplitByRates(10, {1, 1.4}), ElementsAre(4, 6));
}

TEST(SplitByRatesTest, NoRankGetsUnderTheLeastAndTheOthersShareTheRest) {
  EXPECT_THAT(SplitByRates(64, {100, 1}, 16), ElementsAre(48, 16));
  // Rank 2 is held at 10; ranks 0 and 1 share 50 as 3 to 1.
  EXPECT_THAT(SplitByRates(60, {300, 100, 1}, 10), ElementsAre(38, 12, 10));
  // The least is capped at an even split.
  EXPECT_THAT(SplitByRates(8, {100, 1}, 6), ElementsAre(4, 4));
}

TEST(SplitByRatesTest, AnUnknownRateCountsAsTheSlowest) {
  // Weights 1, 1, 3: 1.6, 1.6, 4.8; the two left by remainder.
  EXPECT_THAT(SplitByRates(8, {0, 1, 3}), ElementsAre(2, 1, 5));
  EXPECT_THAT(SplitByRates(8, {0, 0}), ElementsAre(4, 4));
}

TEST(RankPositionsTest, EqualCountsAreTheEvenSplitsStride) {
  EXPECT_THAT(RankPositions({3, 3}, 0), ElementsAre(0, 2, 4));
  EXPECT_THAT(RankPositions({3, 3}, 1), ElementsAre(1, 3, 5));
}

TEST(RankPositionsTest, UnequalCountsCoverTheBatchOnce) {
  const std::vector<int64_t> counts = {5, 2, 3};
  std::vector<int64_t> all;
  for (int r = 0; r < 3; ++r) {
    const std::vector<int64_t> p = RankPositions(counts, r);
    EXPECT_EQ(static_cast<int64_t>(p.size()), counts[r]) << r;
    all.insert(all.end(), p.begin(), p.end());
  }
  std::sort(all.begin(), all.end());
  std::vector<int64_t> want(10);
  std::iota(want.begin(), want.end(), 0);
  EXPECT_EQ(all, want);
  // Strided as far as the least count, then the tail in rank order.
  EXPECT_THAT(RankPositions(counts, 0), ElementsAre(0, 3, 6, 7, 8));
  EXPECT_THAT(RankPositions(counts, 1), ElementsAre(1, 4));
  EXPECT_THAT(RankPositions(counts, 2), ElementsAre(2, 5, 9));
}

TEST(SlowestRankTimeTest, IsTheSlowestRanksShareOverItsRate) {
  EXPECT_DOUBLE_EQ(SlowestRankTime({64, 64}, {200, 100}), 0.64);
  EXPECT_DOUBLE_EQ(SlowestRankTime({85, 43}, {200, 100}), 0.43);
}

TEST(BatchSplitScheduleTest, ChangesApplyFromTheirBatchOn) {
  BatchSplitSchedule s({4, 4});
  EXPECT_THAT(s.CountsFor(0), ElementsAre(4, 4));
  s.Set(3, {5, 3});
  EXPECT_THAT(s.CountsFor(2), ElementsAre(4, 4));
  EXPECT_THAT(s.CountsFor(3), ElementsAre(5, 3));
  s.Set(6, {6, 2});
  EXPECT_THAT(s.CountsFor(5), ElementsAre(5, 3));
  EXPECT_THAT(s.CountsFor(9), ElementsAre(6, 2));
}

TEST(BatchSplitScheduleDeathTest, AChangeUnderABatchAlreadyCutIsABug) {
  BatchSplitSchedule s({4, 4});
  s.CountsFor(5);
  EXPECT_DEATH(s.Set(5, {5, 3}), "already cut");
}

}  // namespace
}  // namespace ringleader
