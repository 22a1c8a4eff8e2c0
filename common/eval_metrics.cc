#include "common/eval_metrics.h"

#include <cmath>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/quote_for_error.h"

namespace ringleader {
namespace {

bool IsMetricName(absl::string_view name) {
  if (name.empty() || name.size() > kMaxMetricNameBytes) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
      return false;
    }
  }
  return true;
}

}  // namespace

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_add_overflow(a, b, &out)) {
    return std::numeric_limits<int64_t>::max();
  }
  return out;
}

absl::Status CheckMetricSums(absl::string_view field, const MetricSums& sums) {
  if (sums.size() > kMaxMetricSums) {
    return absl::InvalidArgumentError(
        absl::StrCat("progress report: ", field, " has ", sums.size(),
                     " entries; at most ", kMaxMetricSums));
  }
  for (int i = 0; i < sums.size(); ++i) {
    const v1::MetricSum& m = sums[i];
    const std::string where = absl::StrCat(field, "[", i, "]");
    if (!IsMetricName(m.name())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "progress report: ", where, ".name must be 1..", kMaxMetricNameBytes,
          " characters of [a-z0-9_] (got ", QuoteForError(m.name()), ")"));
    }
    for (int j = 0; j < i; ++j) {
      if (sums[j].name() == m.name()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "progress report: ", where, ".name ", QuoteForError(m.name()),
            " repeats ", field, "[", j, "]"));
      }
    }
    if (!std::isfinite(m.sum())) {
      return absl::InvalidArgumentError(
          absl::StrCat("progress report: ", where, " (\"", m.name(),
                       "\") sum must be finite (got ", m.sum(), ")"));
    }
    if (m.count() < 0 || m.count() > kMaxReportedCount) {
      return absl::InvalidArgumentError(
          absl::StrCat("progress report: ", where, " (",
                       QuoteForError(m.name()), ") count must be in [0, ",
                       kMaxReportedCount, "] (got ", m.count(), ")"));
    }
  }
  return absl::OkStatus();
}

bool IsAccuracyMetric(absl::string_view name) {
  return name == "accuracy" || absl::EndsWith(name, "_accuracy");
}

void MetricPool::AddRank(const MetricSums& sums) {
  const bool first = ranks_ == 0;
  ++ranks_;
  // Which totals this rank has added to, so a repeated name counts once.
  std::vector<bool> seen(totals_.size(), false);
  for (const v1::MetricSum& m : sums) {
    size_t i = 0;
    while (i < totals_.size() && totals_[i].name != m.name()) ++i;
    if (i == totals_.size()) {
      // Only the first rank names metrics: one that an earlier rank lacks
      // can never be complete.
      if (!first) continue;
      totals_.push_back(Total{m.name()});
      seen.push_back(false);
    }
    if (seen[i]) continue;
    seen[i] = true;
    Total& t = totals_[i];
    t.sum += m.sum();
    t.count = SaturatingAdd(t.count, m.count());
    ++t.ranks;
  }
}

std::vector<v1::Metric> MetricPool::Metrics(const v1::TaskSpec& task) const {
  std::vector<v1::Metric> out;
  auto add = [&out](absl::string_view name, double value) {
    if (!std::isfinite(value)) return;
    v1::Metric& m = out.emplace_back();
    m.set_name(std::string(name));
    m.set_value(value);
  };
  auto sent = [this](absl::string_view name) {
    for (const Total& t : totals_) {
      if (t.name == name) return true;
    }
    return false;
  };
  const bool language_model = task.kind() == v1::TASK_KIND_LANGUAGE_MODEL;
  for (const Total& t : totals_) {
    if (t.ranks < ranks_ || t.count <= 0) continue;
    const double value = t.sum / static_cast<double>(t.count);
    add(t.name, value);
    if (language_model && t.name == "loss" && std::isfinite(value)) {
      // Loss is in nats per token (natural log, as cross-entropy computes).
      if (!sent("perplexity")) add("perplexity", std::exp(value));
      if (!sent("bits_per_token")) add("bits_per_token", value / std::log(2.0));
    }
  }
  return out;
}

}  // namespace ringleader
