#include "coordinator/dashboard/svg_chart.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "coordinator/dashboard/html.h"

namespace ringleader::dashboard {
namespace {

// Colour-blind-safe (Okabe-Ito), in series order.
constexpr const char* kColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                    "#E69F00", "#56B4E9", "#000000", "#F0E442"};
// Room for the y axis' labels: about 7 px a character at 11 px (Chromium's
// default sans-serif runs 6.1 px for digits), 6 px to spare; at least 40.
constexpr int kCharPx = 7;
constexpr int kMinMarginLeft = 40;

constexpr int kMarginRight = 10;
constexpr int kMarginTop = 8;
constexpr int kMarginBottom = 30;

struct Range {
  double lo = 0;
  double hi = 0;
};

// A range that is never empty, so that one point or a flat line is drawn
// in the middle.
Range Padded(double lo, double hi) {
  if (hi > lo) return {lo, hi};
  const double pad = lo == 0 ? 1 : std::abs(lo) * 0.05;
  return {lo - pad, hi + pad};
}

struct Frame {
  Range x, y;
  int width, height;
  int left;  // The plot's left edge: the widest y label fits beside it.
  double PlotX(double v) const {
    return left + (v - x.lo) / (x.hi - x.lo) * (width - left - kMarginRight);
  }
  double PlotY(double v) const {
    return height - kMarginBottom -
           (v - y.lo) / (y.hi - y.lo) * (height - kMarginTop - kMarginBottom);
  }
};

Frame FrameOf(const std::vector<std::vector<std::pair<double, double>>>& all,
              const ChartOptions& options) {
  double x_lo = INFINITY, x_hi = -INFINITY, y_lo = INFINITY, y_hi = -INFINITY;
  for (const auto& points : all) {
    for (const auto& [x, y] : points) {
      x_lo = std::min(x_lo, x);
      x_hi = std::max(x_hi, x);
      y_lo = std::min(y_lo, y);
      y_hi = std::max(y_hi, y);
    }
  }
  const Range y = Padded(y_lo, y_hi);
  const size_t widest =
      std::max(FormatNumber(y.lo).size(), FormatNumber(y.hi).size());
  const int left =
      std::max(kMinMarginLeft, static_cast<int>(widest) * kCharPx + 6);
  return {Padded(x_lo, x_hi), y, options.width, options.height, left};
}

std::string Axes(const Frame& f, const std::string& x_label) {
  const int bottom = f.height - kMarginBottom;
  const int right = f.width - kMarginRight;
  return absl::StrFormat(
      "<path d=\"M%d %d V%d H%d\" stroke=\"#999\" fill=\"none\"/>"
      "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"11\">%s</text>"
      "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"11\">%s</text>"
      "<text x=\"%d\" y=\"%d\" font-size=\"11\">%s</text>"
      "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"11\">%s</text>"
      "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"11\" "
      "fill=\"#777\">%s</text>",
      f.left, kMarginTop, bottom, right, f.left - 4, kMarginTop + 10,
      FormatNumber(f.y.hi), f.left - 4, bottom, FormatNumber(f.y.lo), f.left,
      bottom + 14, FormatNumber(f.x.lo), right, bottom + 14,
      FormatNumber(f.x.hi), (f.left + right) / 2, bottom + 26, Escape(x_label));
}

std::string SeriesShape(const Frame& f, const std::string& name,
                        const std::vector<std::pair<double, double>>& points,
                        const char* colour) {
  const std::string attrs =
      absl::StrCat("class=\"series\" data-series=\"", Escape(name),
                   "\" data-points=\"", points.size(), "\"");
  if (points.size() == 1) {
    return absl::StrFormat(
        "<circle %s cx=\"%.1f\" cy=\"%.1f\" r=\"3\" "
        "fill=\"%s\"/>",
        attrs, f.PlotX(points[0].first), f.PlotY(points[0].second), colour);
  }
  std::string coords;
  for (const auto& [x, y] : points) {
    absl::StrAppendFormat(&coords, "%.1f,%.1f ", f.PlotX(x), f.PlotY(y));
  }
  return absl::StrFormat(
      "<polyline %s points=\"%s\" fill=\"none\" stroke=\"%s\" "
      "stroke-width=\"1.5\"/>",
      attrs, coords, colour);
}

}  // namespace

std::vector<std::pair<double, double>> DrawablePoints(
    const std::vector<std::pair<double, double>>& points, size_t max_points) {
  std::vector<std::pair<double, double>> finite;
  for (const auto& p : points) {
    if (std::isfinite(p.first) && std::isfinite(p.second)) finite.push_back(p);
  }
  if (finite.size() <= max_points) return finite;
  if (max_points < 2) return {finite.back()};
  std::vector<std::pair<double, double>> out;
  out.reserve(max_points);
  const size_t n = finite.size();
  // Index i of max_points, spread over [0, n-1]: the first and last kept.
  for (size_t i = 0; i < max_points; ++i) {
    out.push_back(finite[i * (n - 1) / (max_points - 1)]);
  }
  return out;
}

std::string RenderLineChart(const ChartOptions& options,
                            const std::vector<ChartSeries>& series) {
  std::vector<std::vector<std::pair<double, double>>> drawable;
  size_t total = 0;
  for (const ChartSeries& s : series) {
    drawable.push_back(DrawablePoints(s.points, options.max_points));
    total += drawable.back().size();
  }
  std::string out = absl::StrFormat(
      "<figure class=\"chart\" id=\"%s\"><figcaption>%s</figcaption>"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
      "viewBox=\"0 0 %d %d\" role=\"img\">",
      Escape(options.id), Escape(options.title), options.width, options.height,
      options.width, options.height);
  if (total == 0) {
    absl::StrAppendFormat(
        &out,
        "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" "
        "fill=\"#777\" data-points=\"0\">no points yet</text>",
        options.width / 2, options.height / 2);
    return absl::StrCat(out, "</svg></figure>");
  }
  const Frame frame = FrameOf(drawable, options);
  out += Axes(frame, options.x_label);
  std::string legend;
  for (size_t i = 0; i < series.size(); ++i) {
    const char* colour = kColours[i % std::size(kColours)];
    if (!drawable[i].empty()) {
      out += SeriesShape(frame, series[i].name, drawable[i], colour);
    }
    absl::StrAppend(&legend, "<span style=\"color:", colour, "\">&#9632; ",
                    Escape(series[i].name), "</span>");
  }
  return absl::StrCat(out, "</svg><div class=\"legend\">", legend,
                      "</div></figure>");
}

}  // namespace ringleader::dashboard
