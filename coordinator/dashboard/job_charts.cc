#include "coordinator/dashboard/job_charts.h"

#include <functional>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "coordinator/dashboard/svg_chart.h"

namespace ringleader::dashboard {
namespace {

using Field = std::function<double(const v1::HistoryPoint&)>;
using RankField = std::function<double(const v1::RankSample&)>;

std::string JobChart(const v1::JobHistoryResponse& h, const std::string& id,
                     const std::string& title, const Field& field) {
  ChartSeries s{title, {}};
  for (const v1::HistoryPoint& p : h.points()) {
    s.points.emplace_back(static_cast<double>(p.step()), field(p));
  }
  ChartOptions o;
  o.id = id;
  o.title = title;
  return RenderLineChart(o, {s});
}

// One series per rank, in rank order.
std::string RankChart(const v1::JobHistoryResponse& h, const std::string& id,
                      const std::string& title, const RankField& field) {
  std::map<int32_t, ChartSeries> by_rank;
  for (const v1::HistoryPoint& p : h.points()) {
    for (const v1::RankSample& r : p.ranks()) {
      ChartSeries& s = by_rank[r.rank()];
      s.name = absl::StrCat("rank ", r.rank());
      s.points.emplace_back(static_cast<double>(p.step()), field(r));
    }
  }
  std::vector<ChartSeries> series;
  for (auto& [rank, s] : by_rank) series.push_back(std::move(s));
  ChartOptions o;
  o.id = id;
  o.title = title;
  return RenderLineChart(o, series);
}

}  // namespace

std::string TrainingCharts(const v1::JobHistoryResponse& h) {
  return absl::StrCat(
      "<div class=\"charts\">",
      JobChart(h, "chart-loss", "loss",
               [](const v1::HistoryPoint& p) { return p.loss(); }),
      JobChart(h, "chart-learning-rate", "learning rate",
               [](const v1::HistoryPoint& p) { return p.learning_rate(); }),
      JobChart(h, "chart-grad-norm", "gradient norm",
               [](const v1::HistoryPoint& p) { return p.grad_norm(); }),
      JobChart(h, "chart-samples-per-sec", "samples/s (all ranks)",
               [](const v1::HistoryPoint& p) { return p.samples_per_sec(); }),
      RankChart(h, "chart-step-time", "step time per rank (ms)",
                [](const v1::RankSample& r) { return r.step_time_ms(); }),
      RankChart(h, "chart-data-wait", "data-wait share per rank",
                [](const v1::RankSample& r) { return r.data_wait_share(); }),
      "</div>");
}

std::string EvaluationCharts(const v1::JobHistoryResponse& h) {
  if (h.evaluations_size() == 0) return "";
  // Metric name -> its series, in the order the first evaluation names them.
  std::vector<std::string> order;
  std::map<std::string, ChartSeries> by_name;
  auto add = [&](const std::string& name, double epoch, double value) {
    auto [it, fresh] = by_name.try_emplace(name, ChartSeries{name, {}});
    if (fresh) order.push_back(name);
    it->second.points.emplace_back(epoch, value);
  };
  for (const v1::EpochEvaluation& e : h.evaluations()) {
    const double epoch = static_cast<double>(e.epoch());
    if (e.metrics_size() == 0) add("accuracy", epoch, e.test_accuracy());
    for (const v1::Metric& m : e.metrics()) add(m.name(), epoch, m.value());
  }
  std::string out = "<div class=\"charts\">";
  for (size_t i = 0; i < order.size(); ++i) {
    ChartOptions o;
    o.id = absl::StrCat("chart-eval-", i);
    o.title = absl::StrCat("evaluation: ", order[i]);
    o.x_label = "epoch";
    out += RenderLineChart(o, {by_name[order[i]]});
  }
  return out + "</div>";
}

}  // namespace ringleader::dashboard
