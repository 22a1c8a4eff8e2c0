// The worker-log parsers that integration tests read worker logs with.
#include "tests/integration/worker_logs.h"

#include "gtest/gtest.h"

namespace ringleader::testing {
namespace {

TEST(WorkerLogsTest, GlogTimeReadsTheLinePrefixInLocalTime) {
  const auto t = GlogTime(
      "W20261204 09:55:06.988044 14895 coordinator_client.cc:195] heartbeat");
  ASSERT_TRUE(t.has_value());
  const absl::CivilSecond want(2026, 12, 4, 9, 55, 6);
  EXPECT_EQ(absl::ToCivilSecond(*t, absl::LocalTimeZone()), want);
  EXPECT_EQ(*t - absl::FromCivil(want, absl::LocalTimeZone()),
            absl::Microseconds(988044));
  EXPECT_FALSE(GlogTime("ringleader-worker: bad flag").has_value());
  EXPECT_FALSE(GlogTime("I2026").has_value());
}

TEST(WorkerLogsTest, RankAndSampleLines) {
  const std::string log =
      "I20261204 09:55:00.963542 1 worker_daemon.cc:137] generation 1: rank 2 "
      "of 3\n"
      "I20261204 09:55:01.000001 1 trainer.cc:249] samples generation=1 "
      "rank=2 epoch=0 step=1 ids=4,5\n"
      "I20261204 09:55:17.557781 1 worker_daemon.cc:137] generation 3: rank 0 "
      "of 2\n";
  const std::vector<RankLine> ranks = ParseRankLines(log);
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[0].generation, 1);
  EXPECT_EQ(ranks[0].rank, 2);
  EXPECT_EQ(ranks[0].world_size, 3);
  EXPECT_EQ(ranks[1].generation, 3);
  EXPECT_EQ(ranks[1].world_size, 2);
  const std::vector<SampleLine> samples = ParseSampleLines(log);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].step, 1);
  EXPECT_EQ(samples[0].ids, (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(samples[0].time,
            absl::FromCivil(absl::CivilSecond(2026, 12, 4, 9, 55, 1),
                            absl::LocalTimeZone()) +
                absl::Microseconds(1));
}

}  // namespace
}  // namespace ringleader::testing
