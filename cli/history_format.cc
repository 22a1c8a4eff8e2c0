#include "cli/history_format.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/job_format.h"
#include "cli/table.h"
#include "google/protobuf/util/json_util.h"

namespace ringleader::cli {
namespace {

// The evaluations' metric names, in the first evaluation's order, then
// any a later one adds.
std::vector<std::string> MetricNames(const v1::JobHistoryResponse& h) {
  std::vector<std::string> names;
  for (const v1::EpochEvaluation& e : h.evaluations()) {
    for (const v1::Metric& m : e.metrics()) {
      bool known = false;
      for (const std::string& n : names) known |= n == m.name();
      if (!known) names.push_back(m.name());
    }
  }
  return names;
}

// Four significant digits; "-" where the step reported none.
std::string Number(double v) {
  return v == 0 ? "-" : absl::StrFormat("%.4g", v);
}

std::vector<std::string> PointRow(const v1::HistoryPoint& p) {
  // Epochs print 1-based, as `ringctl get` does.
  return {absl::StrCat(p.step()),
          absl::StrCat(p.epoch() + 1),
          absl::StrFormat("%.4f", p.loss()),
          Number(p.learning_rate()),
          Number(p.grad_norm()),
          FormatSamplesPerSec(p.samples_per_sec())};
}

std::vector<std::string> EvalRow(const v1::EpochEvaluation& e,
                                 const std::vector<std::string>& names) {
  std::vector<std::string> row = {"eval", absl::StrCat(e.epoch()), "", "", "",
                                  ""};
  for (const std::string& name : names) {
    std::string cell = "-";
    for (const v1::Metric& m : e.metrics()) {
      if (m.name() == name) cell = FormatMetricValue(m);
    }
    row.push_back(cell);
  }
  return row;
}

}  // namespace

std::string FormatHistoryTable(const v1::JobHistoryResponse& h) {
  const std::vector<std::string> names = MetricNames(h);
  std::vector<std::string> header = {"STEP", "EPOCH",     "LOSS",
                                     "LR",   "GRAD NORM", "SAMPLES/S"};
  for (const std::string& n : names) {
    header.push_back(absl::AsciiStrToUpper(absl::StrCat("eval ", n)));
  }
  std::vector<std::vector<std::string>> rows;
  int next_eval = 0;
  for (const v1::HistoryPoint& p : h.points()) {
    // Evaluation e (after e.epoch() epochs) goes before the first point of
    // a later epoch (0-based p.epoch() >= e.epoch()).
    while (next_eval < h.evaluations_size() &&
           h.evaluations(next_eval).epoch() <= p.epoch()) {
      rows.push_back(EvalRow(h.evaluations(next_eval++), names));
    }
    rows.push_back(PointRow(p));
  }
  while (next_eval < h.evaluations_size()) {
    rows.push_back(EvalRow(h.evaluations(next_eval++), names));
  }
  std::string out = FormatTable(header, rows);
  if (h.points().empty()) {
    absl::StrAppend(&out, "(no training report from rank 0 yet)\n");
  } else if (h.stride() > 1) {
    absl::StrAppend(&out, "(one point per ", h.stride(),
                    " reports of rank 0: the coordinator keeps at most ",
                    h.max_points(), " points per job)\n");
  }
  return out;
}

std::string HistoryJson(const v1::JobHistoryResponse& h) {
  std::string text;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  if (!google::protobuf::util::MessageToJsonString(h, &text, options).ok()) {
    return "{\"error\": \"cannot print the history as JSON\"}";
  }
  // The printer ends with a newline of its own; the caller adds one.
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

}  // namespace ringleader::cli
