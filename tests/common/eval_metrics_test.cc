#include "common/eval_metrics.h"

#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader {
namespace {

MetricSums Sums(
    const std::vector<std::tuple<std::string, double, int64_t>>& entries) {
  MetricSums out;
  for (const auto& [name, sum, count] : entries) {
    v1::MetricSum* m = out.Add();
    m->set_name(name);
    m->set_sum(sum);
    m->set_count(count);
  }
  return out;
}

// name=value pairs, for readable expectations.
std::vector<std::pair<std::string, double>> Pairs(
    const std::vector<v1::Metric>& metrics) {
  std::vector<std::pair<std::string, double>> out;
  for (const v1::Metric& m : metrics) out.emplace_back(m.name(), m.value());
  return out;
}

v1::TaskSpec Task(v1::TaskKind kind) {
  v1::TaskSpec t;
  t.set_kind(kind);
  return t;
}

TEST(MetricPoolTest, PoolsSumsOverCountsInTheFirstRanksOrder) {
  MetricPool pool;
  // Rank 0 evaluated 60 samples, rank 1 40: a mean of the ranks' means
  // (0.75 and 0.5) would say 0.625; pooled it is 65 / 100.
  pool.AddRank(Sums(
      {{"accuracy", 45, 60}, {"top5_accuracy", 58, 60}, {"loss", 30, 60}}));
  pool.AddRank(Sums(
      {{"loss", 30, 40}, {"top5_accuracy", 40, 40}, {"accuracy", 20, 40}}));
  const auto got = Pairs(pool.Metrics(Task(v1::TASK_KIND_CLASSIFICATION)));
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].first, "accuracy");
  EXPECT_DOUBLE_EQ(got[0].second, 0.65);
  EXPECT_EQ(got[1].first, "top5_accuracy");
  EXPECT_DOUBLE_EQ(got[1].second, 0.98);
  EXPECT_EQ(got[2].first, "loss");
  EXPECT_DOUBLE_EQ(got[2].second, 0.6);
}

TEST(MetricPoolTest, LanguageModelDerivesPerplexityAndBitsAfterLoss) {
  MetricPool pool;
  pool.AddRank(Sums({{"loss", 1.5 * 1000, 1000}, {"accuracy", 400, 1000}}));
  pool.AddRank(Sums({{"loss", 0.5 * 1000, 1000}, {"accuracy", 200, 1000}}));
  const auto got = Pairs(pool.Metrics(Task(v1::TASK_KIND_LANGUAGE_MODEL)));
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].first, "loss");
  EXPECT_DOUBLE_EQ(got[0].second, 1.0);
  EXPECT_EQ(got[1].first, "perplexity");
  // exp of the pooled loss, not the mean of the ranks' perplexities.
  EXPECT_DOUBLE_EQ(got[1].second, std::exp(1.0));
  EXPECT_EQ(got[2].first, "bits_per_token");
  EXPECT_DOUBLE_EQ(got[2].second, 1.0 / std::log(2.0));
  EXPECT_EQ(got[3].first, "accuracy");
  EXPECT_DOUBLE_EQ(got[3].second, 0.3);
}

TEST(MetricPoolTest, OtherTasksDeriveNothing) {
  for (v1::TaskKind kind :
       {v1::TASK_KIND_UNSPECIFIED, v1::TASK_KIND_CLASSIFICATION,
        v1::TASK_KIND_REGRESSION}) {
    MetricPool pool;
    pool.AddRank(Sums({{"loss", 2, 4}}));
    const auto got = Pairs(pool.Metrics(Task(kind)));
    ASSERT_EQ(got.size(), 1u) << kind;
    EXPECT_EQ(got[0].first, "loss");
  }
}

TEST(MetricPoolTest, RegressionMetricsPool) {
  MetricPool pool;
  pool.AddRank(Sums({{"mse", 8, 4}, {"mae", 4, 4}}));
  pool.AddRank(Sums({{"mse", 2, 4}, {"mae", 4, 4}}));
  const auto got = Pairs(pool.Metrics(Task(v1::TASK_KIND_REGRESSION)));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], std::make_pair(std::string("mse"), 1.25));
  EXPECT_EQ(got[1], std::make_pair(std::string("mae"), 1.0));
}

TEST(MetricPoolTest, AMetricSomeRankLacksIsLeftOut) {
  MetricPool pool;
  pool.AddRank(Sums({{"accuracy", 1, 2}, {"top5_accuracy", 2, 2}}));
  pool.AddRank(Sums({{"accuracy", 1, 2}, {"loss", 1, 2}}));
  pool.AddRank(Sums({{"accuracy", 2, 2}, {"top5_accuracy", 2, 2}}));
  const auto got = Pairs(pool.Metrics(Task(v1::TASK_KIND_CLASSIFICATION)));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first, "accuracy");
  EXPECT_DOUBLE_EQ(got[0].second, 4.0 / 6.0);
}

TEST(MetricPoolTest, ZeroCountsEverywhereAreLeftOutButOneRankMayHaveNone) {
  MetricPool pool;
  // Rank 1's shard is empty (more ranks than test samples): its zero count
  // is a real answer and the metric still pools.
  pool.AddRank(Sums({{"accuracy", 3, 4}, {"loss", 0, 0}}));
  pool.AddRank(Sums({{"accuracy", 0, 0}, {"loss", 0, 0}}));
  const auto got = Pairs(pool.Metrics(Task(v1::TASK_KIND_LANGUAGE_MODEL)));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], std::make_pair(std::string("accuracy"), 0.75));
}

TEST(MetricPoolTest, ARepeatedNameCountsOnce) {
  MetricPool pool;
  pool.AddRank(Sums({{"loss", 1, 1}, {"loss", 100, 1}}));
  pool.AddRank(Sums({{"loss", 3, 1}, {"loss", 100, 1}}));
  const auto got = Pairs(pool.Metrics(Task(v1::TASK_KIND_CLASSIFICATION)));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_DOUBLE_EQ(got[0].second, 2.0);
}

TEST(MetricPoolTest, NonFiniteValuesAreLeftOut) {
  MetricPool pool;
  // exp(1000) overflows: the loss stays, perplexity goes.
  pool.AddRank(Sums({{"loss", 1000, 1}}));
  const auto got = Pairs(pool.Metrics(Task(v1::TASK_KIND_LANGUAGE_MODEL)));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].first, "loss");
  EXPECT_EQ(got[1].first, "bits_per_token");
}

TEST(MetricPoolTest, DerivedNamesARankSentAreNotAddedTwice) {
  MetricPool pool;
  pool.AddRank(Sums({{"loss", 1, 1}, {"perplexity", 5, 1}}));
  const auto got = Pairs(pool.Metrics(Task(v1::TASK_KIND_LANGUAGE_MODEL)));
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].first, "loss");
  EXPECT_EQ(got[1].first, "bits_per_token");
  EXPECT_EQ(got[2], std::make_pair(std::string("perplexity"), 5.0));
}

TEST(MetricPoolTest, HugeCountsDoNotWrap) {
  MetricPool pool;
  const int64_t big = std::numeric_limits<int64_t>::max();
  pool.AddRank(Sums({{"loss", 1, big}}));
  pool.AddRank(Sums({{"loss", 1, big}}));
  const auto got = Pairs(pool.Metrics(Task(v1::TASK_KIND_CLASSIFICATION)));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_GT(got[0].second, 0);
}

TEST(MetricPoolTest, EmptyPoolHasNoMetrics) {
  EXPECT_TRUE(MetricPool().Metrics(v1::TaskSpec()).empty());
  MetricPool pool;
  pool.AddRank(MetricSums());
  pool.AddRank(Sums({{"loss", 1, 1}}));
  EXPECT_TRUE(pool.Metrics(v1::TaskSpec()).empty());
}

TEST(CheckMetricSumsTest, AcceptsWhatWorkersSend) {
  EXPECT_TRUE(CheckMetricSums("test_metrics", MetricSums()).ok());
  EXPECT_TRUE(
      CheckMetricSums("test_metrics", Sums({{"loss", 12.5, 100},
                                            {"accuracy", 91, 100},
                                            {"top10_accuracy", 99, 100},
                                            {"mse", 0, 0},
                                            {std::string(32, 'a'), -3, 1}}))
          .ok());
}

TEST(CheckMetricSumsTest, RefusesEachBadEntryNamingIt) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    MetricSums sums;
    std::string message;
  };
  MetricSums seventeen;
  for (int i = 0; i < 17; ++i) {
    *seventeen.Add() = Sums({{"m" + std::to_string(i), 1, 1}})[0];
  }
  const std::vector<Case> cases = {
      {seventeen, "progress report: eval_metrics has 17 entries; at most 16"},
      {Sums({{"", 1, 1}}),
       "progress report: eval_metrics[0].name must be 1..32 characters of "
       "[a-z0-9_] (got \"\")"},
      {Sums({{"loss", 1, 1}, {"Top5", 1, 1}}),
       "progress report: eval_metrics[1].name must be 1..32 characters of "
       "[a-z0-9_] (got \"Top5\")"},
      {Sums({{std::string(33, 'a'), 1, 1}}),
       "progress report: eval_metrics[0].name must be 1..32 characters of "
       "[a-z0-9_] (got \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\")"},
      {Sums({{"a\nb", 1, 1}}),
       "progress report: eval_metrics[0].name must be 1..32 characters of "
       "[a-z0-9_] (got \"a\\nb\")"},
      {Sums({{"loss", 1, 1}, {"acc", 1, 1}, {"loss", 2, 1}}),
       "progress report: eval_metrics[2].name \"loss\" repeats "
       "eval_metrics[0]"},
      {Sums({{"loss", nan, 1}}),
       "progress report: eval_metrics[0] (\"loss\") sum must be finite (got "
       "nan)"},
      {Sums({{"loss", -inf, 1}}),
       "progress report: eval_metrics[0] (\"loss\") sum must be finite (got "
       "-inf)"},
      {Sums({{"mse", 1, -1}}),
       "progress report: eval_metrics[0] (\"mse\") count must be in [0, "
       "1125899906842624] (got -1)"},
      {Sums({{"mse", 1, kMaxReportedCount + 1}}),
       "progress report: eval_metrics[0] (\"mse\") count must be in [0, "
       "1125899906842624] (got 1125899906842625)"},
  };
  EXPECT_TRUE(
      CheckMetricSums("eval_metrics", Sums({{"mse", 1, kMaxReportedCount}}))
          .ok());
  for (const Case& c : cases) {
    const absl::Status s = CheckMetricSums("eval_metrics", c.sums);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_EQ(s.message(), c.message);
  }
}

TEST(IsAccuracyMetricTest, AccuracyAndTopK) {
  EXPECT_TRUE(IsAccuracyMetric("accuracy"));
  EXPECT_TRUE(IsAccuracyMetric("top5_accuracy"));
  EXPECT_TRUE(IsAccuracyMetric("top10_accuracy"));
  EXPECT_FALSE(IsAccuracyMetric("loss"));
  EXPECT_FALSE(IsAccuracyMetric("perplexity"));
  EXPECT_FALSE(IsAccuracyMetric("accuracy_gap"));
}

TEST(SaturatingAddTest, StopsAtInt64MaxInsteadOfWrapping) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(SaturatingAdd(2, 3), 5);
  EXPECT_EQ(SaturatingAdd(kMax - 1, 1), kMax);
  EXPECT_EQ(SaturatingAdd(kMax - 1, 2), kMax);
  EXPECT_EQ(SaturatingAdd(kMax, kMax), kMax);
}

}  // namespace
}  // namespace ringleader
