#include "common/metrics.h"

#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringleader::metrics {
namespace {

using ::testing::HasSubstr;

TEST(FormatValueTest, SpecialAndShortest) {
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatValue(std::nan("")), "NaN");
  EXPECT_EQ(FormatValue(0), "0");
  EXPECT_EQ(FormatValue(3), "3");
  EXPECT_EQ(FormatValue(0.1), "0.1");
  EXPECT_EQ(FormatValue(-2.5), "-2.5");
  EXPECT_EQ(FormatValue(1e21), "1e+21");
  EXPECT_EQ(std::stod(FormatValue(1.0 / 3)), 1.0 / 3);
}

TEST(EscapeTest, HelpAndLabelValues) {
  EXPECT_EQ(EscapeHelp("a\\b\nc\"d"), "a\\\\b\\nc\"d");
  EXPECT_EQ(EscapeLabelValue("a\\b\nc\"d"), "a\\\\b\\nc\\\"d");
}

TEST(NameTest, Validity) {
  EXPECT_TRUE(IsValidMetricName("ringleader_jobs"));
  EXPECT_TRUE(IsValidMetricName("a:b_c9"));
  EXPECT_FALSE(IsValidMetricName("9a"));
  EXPECT_FALSE(IsValidMetricName("a-b"));
  EXPECT_FALSE(IsValidMetricName(""));
  EXPECT_TRUE(IsValidLabelName("state"));
  EXPECT_FALSE(IsValidLabelName("__name"));
  EXPECT_FALSE(IsValidLabelName("a:b"));
  EXPECT_FALSE(IsValidLabelName("1a"));
}

TEST(RegistryTest, CounterAndGaugeExposition) {
  Registry r;
  Family<Counter>& c = r.AddCounter("rl_requests_total", "Requests.\nAll.");
  Family<Gauge>& g = r.AddGauge("rl_temp", "Temp \\ degrees", {"room", "x"});
  c.Get()->Increment();
  c.Get()->Increment(2.5);
  c.Get()->Increment(-7);  // Ignored: counters only go up.
  g.WithLabels({"b\"1", "z"})->Set(-1.5);
  g.WithLabels({"a\n", "y"})->Add(2);
  g.WithLabels({"a\n", "y"})->Add(0.25);
  EXPECT_EQ(r.Render(),
            "# HELP rl_requests_total Requests.\\nAll.\n"
            "# TYPE rl_requests_total counter\n"
            "rl_requests_total 3.5\n"
            "# HELP rl_temp Temp \\\\ degrees\n"
            "# TYPE rl_temp gauge\n"
            "rl_temp{room=\"a\\n\",x=\"y\"} 2.25\n"
            "rl_temp{room=\"b\\\"1\",x=\"z\"} -1.5\n");
  EXPECT_EQ(g.WithLabels({"b\"1", "z"}), g.WithLabels({"b\"1", "z"}));
}

TEST(HistogramTest, BucketMath) {
  Histogram h({1, 2, 5});
  for (double v : {0.5, 1.0, 1.5, 2.0, 4.0, 5.0, 6.0, 100.0}) h.Observe(v);
  h.Observe(std::nan(""));  // +Inf bucket, as the Go client does.
  Histogram::Snapshot s = h.Snap();
  EXPECT_EQ(s.cumulative, (std::vector<uint64_t>{2, 4, 6, 9}));
  EXPECT_EQ(s.count, 9u);
  EXPECT_TRUE(std::isnan(s.sum));

  Histogram g({0.1, 1});
  g.Observe(0.1);  // `le` is inclusive.
  g.Observe(0.05);
  g.Observe(3);
  EXPECT_EQ(g.Snap().cumulative, (std::vector<uint64_t>{2, 2, 3}));
  EXPECT_DOUBLE_EQ(g.Snap().sum, 3.15);
}

TEST(HistogramTest, TrailingInfIsImplicit) {
  Histogram h({1, std::numeric_limits<double>::infinity()});
  EXPECT_EQ(h.bounds(), std::vector<double>{1});
}

TEST(HistogramTest, BucketHelpers) {
  EXPECT_EQ(ExponentialBuckets(0.001, 10, 4),
            (std::vector<double>{0.001, 0.01, 0.1, 1}));
  EXPECT_EQ(LinearBuckets(1, 2, 3), (std::vector<double>{1, 3, 5}));
}

TEST(HistogramTest, Exposition) {
  Registry r;
  Family<Histogram>& f =
      r.AddHistogram("rl_latency_seconds", "Latency.", {0.5, 1}, {"op"});
  f.WithLabels({"join"})->Observe(0.25);
  f.WithLabels({"join"})->Observe(0.75);
  f.WithLabels({"join"})->Observe(2);
  r.AddHistogram("rl_empty_seconds", "No observations.", {1}).Get();
  EXPECT_EQ(r.Render(),
            "# HELP rl_latency_seconds Latency.\n"
            "# TYPE rl_latency_seconds histogram\n"
            "rl_latency_seconds_bucket{op=\"join\",le=\"0.5\"} 1\n"
            "rl_latency_seconds_bucket{op=\"join\",le=\"1\"} 2\n"
            "rl_latency_seconds_bucket{op=\"join\",le=\"+Inf\"} 3\n"
            "rl_latency_seconds_sum{op=\"join\"} 3\n"
            "rl_latency_seconds_count{op=\"join\"} 3\n"
            "# HELP rl_empty_seconds No observations.\n"
            "# TYPE rl_empty_seconds histogram\n"
            "rl_empty_seconds_bucket{le=\"1\"} 0\n"
            "rl_empty_seconds_bucket{le=\"+Inf\"} 0\n"
            "rl_empty_seconds_sum 0\n"
            "rl_empty_seconds_count 0\n");
}

TEST(RegistryTest, CallbackRunsAtEveryScrape) {
  Registry r;
  int scrapes = 0;
  r.AddCallback("rl_jobs", "Jobs by state.", Type::kGauge, {"state"}, [&] {
    ++scrapes;
    return std::vector<CallbackFamily::Sample>{{{"running"}, 2.0 * scrapes},
                                               {{"pending"}, 1}};
  });
  EXPECT_EQ(r.Render(),
            "# HELP rl_jobs Jobs by state.\n"
            "# TYPE rl_jobs gauge\n"
            "rl_jobs{state=\"pending\"} 1\n"
            "rl_jobs{state=\"running\"} 2\n");
  EXPECT_THAT(r.Render(), HasSubstr("rl_jobs{state=\"running\"} 4\n"));
}

TEST(RegistryTest, ConcurrentUpdatesAreNotLost) {
  Registry r;
  Counter* c = r.AddCounter("rl_c_total", "c").Get();
  Histogram* h = r.AddHistogram("rl_h", "h", {0.5}).Get();
  constexpr int kThreads = 8, kEach = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        c->Increment();
        h->Observe(t % 2 == 0 ? 0.25 : 1.0);
        if (i % 1000 == 0) r.Render();  // Scrapes race with updates.
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(c->Value(), kThreads * kEach);
  Histogram::Snapshot s = h->Snap();
  EXPECT_EQ(s.count, uint64_t{kThreads} * kEach);
  EXPECT_EQ(s.cumulative[0], uint64_t{kThreads / 2} * kEach);
  EXPECT_DOUBLE_EQ(s.sum, kThreads / 2 * kEach * 1.25);
}

TEST(RegistryDeathTest, MisuseAborts) {
  EXPECT_DEATH(
      {
        Registry r;
        r.AddCounter("rl_x", "x");
        r.AddGauge("rl_x", "x");
      },
      "registered twice");
  EXPECT_DEATH(
      {
        Registry r;
        r.AddGauge("rl_y", "y", {"a"}).WithLabels({"1", "2"});
      },
      "takes 1 label values, got 2");
  EXPECT_DEATH(
      {
        Registry r;
        r.AddHistogram("rl_z", "z", {1}, {"le"});
      },
      "invalid label name");
  EXPECT_DEATH(Histogram({2, 1}), "strictly increasing");
  EXPECT_DEATH(
      {
        Registry r;
        r.AddCounter("bad-name", "x");
      },
      "invalid metric name");
}

}  // namespace
}  // namespace ringleader::metrics
