#ifndef RINGLEADER_COORDINATOR_DASHBOARD_SVG_CHART_H_
#define RINGLEADER_COORDINATOR_DASHBOARD_SVG_CHART_H_

// A line chart as inline SVG, drawn on the server: no script, no chart
// library, no request leaving the page. Pure; thread-safe.

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace ringleader::dashboard {

struct ChartSeries {
  std::string name;                               // Escaped when drawn.
  std::vector<std::pair<double, double>> points;  // (x, y), x ascending.
};

struct ChartOptions {
  std::string id;     // The figure's id ("chart-loss"); [a-z0-9-] only.
  std::string title;  // Escaped when drawn.
  std::string x_label = "step";
  int width = 520;
  int height = 200;
  // Points drawn per series at most: more are thinned evenly, the first and
  // the last kept. JobHistory already bounds a job's series; this bounds
  // the page whatever it is given.
  size_t max_points = 1000;
};

// A <figure> holding the chart. Each series is a <polyline> (a <circle>
// for a single point) with data-series (its name) and data-points (the
// points drawn): what tests and the browser test count. Points whose x or
// y is not finite (NaN, inf) are skipped; a chart with no point left says
// "no points yet".
std::string RenderLineChart(const ChartOptions& options,
                            const std::vector<ChartSeries>& series);

// The finite points of `points`, thinned evenly to at most `max_points`
// (first and last kept; max_points < 2 keeps the last).
std::vector<std::pair<double, double>> DrawablePoints(
    const std::vector<std::pair<double, double>>& points, size_t max_points);

}  // namespace ringleader::dashboard

#endif  // RINGLEADER_COORDINATOR_DASHBOARD_SVG_CHART_H_
