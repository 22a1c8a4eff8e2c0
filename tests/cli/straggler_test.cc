#include "cli/straggler.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"

namespace ringleader::cli {
namespace {

v1::JobProgress Progress(const std::vector<double>& step_times_ms) {
  v1::JobProgress p;
  for (size_t i = 0; i < step_times_ms.size(); ++i) {
    v1::RankProgress* r = p.add_ranks();
    r->set_rank(static_cast<int32_t>(i));
    r->set_step_time_ms(step_times_ms[i]);
  }
  return p;
}

std::vector<int32_t> Ranks(const std::vector<Straggler>& s) {
  std::vector<int32_t> out;
  for (const Straggler& x : s) out.push_back(x.rank);
  return out;
}

TEST(StragglerTest, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(*MedianStepTimeMs(Progress({30, 10, 20})), 20);
  EXPECT_DOUBLE_EQ(*MedianStepTimeMs(Progress({40, 10, 20, 30})), 25);
  EXPECT_DOUBLE_EQ(*MedianStepTimeMs(Progress({7})), 7);
  EXPECT_FALSE(MedianStepTimeMs(Progress({})).has_value());
}

TEST(StragglerTest, MedianLeavesOutZerosNonFiniteAndFinishedRanks) {
  v1::JobProgress p =
      Progress({0, 10, -5, std::numeric_limits<double>::quiet_NaN(), 30, 1000});
  p.mutable_ranks(5)->set_finished(true);
  EXPECT_DOUBLE_EQ(*MedianStepTimeMs(p), 20);  // Of {10, 30}.
  EXPECT_FALSE(MedianStepTimeMs(Progress({0, 0})).has_value());
}

TEST(StragglerTest, OddRanksFlagsTheSlowOne) {
  const std::vector<Straggler> s =
      FindStragglers(Progress({100, 101, 320, 99, 100}), 1.5);
  ASSERT_EQ(Ranks(s), std::vector<int32_t>{2});
  EXPECT_DOUBLE_EQ(s[0].step_time_ms, 320);
  EXPECT_DOUBLE_EQ(s[0].median_ms, 100);
  EXPECT_DOUBLE_EQ(s[0].ratio, 3.2);
}

TEST(StragglerTest, EvenRanksUseTheMeanOfTheMiddleTwo) {
  // Median (100 + 110) / 2 = 105: 158 > 157.5 is flagged, 157 is not.
  EXPECT_EQ(Ranks(FindStragglers(Progress({100, 110, 158, 90}), 1.5)),
            std::vector<int32_t>{2});
  EXPECT_TRUE(FindStragglers(Progress({100, 110, 157, 90}), 1.5).empty());
}

TEST(StragglerTest, ExactlyTheFactorIsNotAStraggler) {
  EXPECT_TRUE(FindStragglers(Progress({100, 100, 150}), 1.5).empty());
  EXPECT_EQ(Ranks(FindStragglers(Progress({100, 100, 150.01}), 1.5)),
            std::vector<int32_t>{2});
}

TEST(StragglerTest, SeveralStragglersInRankOrder) {
  EXPECT_EQ(Ranks(FindStragglers(Progress({500, 100, 100, 100, 400}), 2)),
            (std::vector<int32_t>{0, 4}));
}

TEST(StragglerTest, OneRankOrNoTimesFlagsNothing) {
  EXPECT_TRUE(FindStragglers(Progress({1000}), 1.5).empty());
  EXPECT_TRUE(FindStragglers(Progress({}), 1.5).empty());
  EXPECT_TRUE(FindStragglers(Progress({0, 0, 0}), 1.5).empty());
  // A rank not reporting yet (0) is neither counted nor flagged.
  EXPECT_TRUE(FindStragglers(Progress({0, 100}), 1.5).empty());
  EXPECT_EQ(Ranks(FindStragglers(Progress({0, 100, 100, 400}), 1.5)),
            std::vector<int32_t>{3});
}

TEST(StragglerTest, MarkerAndMessages) {
  const std::vector<Straggler> s =
      FindStragglers(Progress({100, 100, 310, 100, 250}), 1.5);
  EXPECT_EQ(StragglerMarker(s), " STRAGGLER ranks 2 (3.1x), 4 (2.5x)");
  EXPECT_EQ(StragglerMessages(s, 1.5),
            "straggler: rank 2 step time 310.0 ms is 3.10x the median 100.0 "
            "ms (factor 1.5)\n"
            "straggler: rank 4 step time 250.0 ms is 2.50x the median 100.0 "
            "ms (factor 1.5)\n");
  EXPECT_EQ(StragglerMarker({s[0]}), " STRAGGLER rank 2 (3.1x)");
  EXPECT_EQ(StragglerMarker({}), "");
  EXPECT_EQ(StragglerMessages({}, 1.5), "");
}

TEST(StragglerTest, ParseFactor) {
  EXPECT_DOUBLE_EQ(*ParseStragglerFactor("1.5"), 1.5);
  EXPECT_DOUBLE_EQ(*ParseStragglerFactor("1"), 1);
  for (const char* bad : {"0.9", "-2", "abc", "", "inf", "nan"}) {
    SCOPED_TRACE(bad);
    const absl::StatusOr<double> f = ParseStragglerFactor(bad);
    ASSERT_FALSE(f.ok());
    EXPECT_NE(f.status().message().find("--straggler_factor"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace ringleader::cli
