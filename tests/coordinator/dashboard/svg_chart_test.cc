#include "coordinator/dashboard/svg_chart.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringleader::dashboard {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

ChartOptions Options() {
  ChartOptions o;
  o.id = "chart-loss";
  o.title = "loss";
  return o;
}

TEST(SvgChartTest, AChartWithoutPointsSaysSo) {
  const std::string svg = RenderLineChart(Options(), {{"loss", {}}});
  EXPECT_THAT(svg, HasSubstr("no points yet"));
  EXPECT_THAT(svg, HasSubstr("data-points=\"0\""));
  EXPECT_THAT(svg, Not(HasSubstr("<polyline")));
  EXPECT_THAT(RenderLineChart(Options(), {}), HasSubstr("no points yet"));
}

TEST(SvgChartTest, OnePointIsADotInsideTheChart) {
  const std::string svg = RenderLineChart(Options(), {{"loss", {{5, 0.5}}}});
  EXPECT_THAT(svg, HasSubstr("<circle class=\"series\" data-series=\"loss\" "
                             "data-points=\"1\""));
  EXPECT_THAT(svg, Not(HasSubstr("<polyline")));
  EXPECT_THAT(svg, Not(HasSubstr("nan")));
  EXPECT_THAT(svg, Not(HasSubstr("inf")));
}

TEST(SvgChartTest, ALineHasOneCoordinatePairPerPoint) {
  const std::string svg =
      RenderLineChart(Options(), {{"loss", {{1, 2.0}, {2, 1.5}, {3, 1.0}}}});
  EXPECT_THAT(svg, HasSubstr("<polyline class=\"series\" data-series=\"loss\" "
                             "data-points=\"3\""));
  // Left margin 40 (the least: labels "2" and "1"), right edge 520 - 10:
  // x = 1 at 40, x = 3 at 510; the highest loss at the top margin (8), the
  // lowest at 200 - 30.
  EXPECT_THAT(svg, HasSubstr("points=\"40.0,8.0 275.0,89.0 510.0,170.0 \""));
}

// Issue 49: "6.486e+04" lost its first digit at the left edge. A count is
// written as one, and the plot starts right of its widest label: 7 px a
// character (Chromium's digits at 11 px are about 6.1) and 6 more.
TEST(SvgChartTest, TheYLabelsFitLeftOfThePlot) {
  const std::string svg = RenderLineChart(
      Options(), {{"samples/s", {{1, 61234.0}, {2, 64860.4}, {3, 1234567.0}}}});
  EXPECT_THAT(svg, Not(HasSubstr("e+")));
  EXPECT_THAT(svg, HasSubstr(">1,234,567</text>"));
  // "1,234,567": 9 characters, 69 px: the axis at 69, the label ending at 65.
  EXPECT_THAT(svg, HasSubstr("<path d=\"M69 8 V170 H510\""));
  EXPECT_THAT(svg, HasSubstr("<text x=\"65\" y=\"18\" text-anchor=\"end\""));
}

TEST(SvgChartTest, NonFinitePointsAreSkipped) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::string svg = RenderLineChart(
      Options(),
      {{"loss",
        {{1, 2.0}, {2, nan}, {3, inf}, {4, -inf}, {nan, 1}, {5, 1.0}}}});
  EXPECT_THAT(svg, HasSubstr("data-points=\"2\""));
  EXPECT_THAT(svg, Not(HasSubstr("nan")));
  EXPECT_THAT(svg, Not(HasSubstr("inf")));
  EXPECT_THAT(RenderLineChart(Options(), {{"loss", {{1, nan}}}}),
              HasSubstr("no points yet"));
}

TEST(SvgChartTest, PointsAreBoundedKeepingTheFirstAndTheLast) {
  std::vector<std::pair<double, double>> many;
  for (int i = 0; i < 5000; ++i) many.emplace_back(i, i * 0.5);
  const std::vector<std::pair<double, double>> drawn =
      DrawablePoints(many, 100);
  ASSERT_EQ(drawn.size(), 100u);
  EXPECT_EQ(drawn.front().first, 0);
  EXPECT_EQ(drawn.back().first, 4999);
  for (size_t i = 1; i < drawn.size(); ++i) {
    EXPECT_LT(drawn[i - 1].first, drawn[i].first);
  }
  ChartOptions o = Options();
  o.max_points = 1000;
  EXPECT_THAT(RenderLineChart(o, {{"loss", many}}),
              HasSubstr("data-points=\"1000\""));
  EXPECT_EQ(DrawablePoints(many, 1),
            (std::vector<std::pair<double, double>>{{4999, 4999 * 0.5}}));
}

TEST(SvgChartTest, NamesAndTitlesAreEscaped) {
  ChartOptions o = Options();
  o.title = "<script>alert(1)</script>";
  const std::string svg =
      RenderLineChart(o, {{"\"><script>alert(2)</script>", {{1, 1}, {2, 2}}}});
  EXPECT_THAT(svg, Not(HasSubstr("<script")));
  EXPECT_THAT(svg, HasSubstr("&lt;script&gt;alert(1)"));
  EXPECT_THAT(svg, HasSubstr("data-series=\"&quot;&gt;&lt;script&gt;"));
}

TEST(SvgChartTest, EachSeriesIsDrawnWithALegend) {
  const std::string svg = RenderLineChart(
      Options(), {{"rank 0", {{1, 1}, {2, 2}}}, {"rank 1", {{1, 3}, {2, 4}}}});
  EXPECT_THAT(svg, HasSubstr("data-series=\"rank 0\""));
  EXPECT_THAT(svg, HasSubstr("data-series=\"rank 1\""));
  EXPECT_THAT(svg, HasSubstr("class=\"legend\""));
}

}  // namespace
}  // namespace ringleader::dashboard
