#include "cli/straggler.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace ringleader::cli {
namespace {

bool Reports(const v1::RankProgress& r) {
  return !r.finished() && std::isfinite(r.step_time_ms()) &&
         r.step_time_ms() > 0;
}

}  // namespace

std::optional<double> MedianStepTimeMs(const v1::JobProgress& progress) {
  std::vector<double> times;
  for (const v1::RankProgress& r : progress.ranks()) {
    if (Reports(r)) times.push_back(r.step_time_ms());
  }
  if (times.empty()) return std::nullopt;
  std::sort(times.begin(), times.end());
  const size_t n = times.size();
  return n % 2 == 1 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
}

std::vector<Straggler> FindStragglers(const v1::JobProgress& progress,
                                      double factor) {
  std::vector<Straggler> out;
  const int reporting = static_cast<int>(
      std::count_if(progress.ranks().begin(), progress.ranks().end(), Reports));
  if (reporting < 2) return out;
  const std::optional<double> median = MedianStepTimeMs(progress);
  if (!median.has_value() || !(*median > 0)) return out;
  for (const v1::RankProgress& r : progress.ranks()) {
    if (!Reports(r) || !(r.step_time_ms() > factor * *median)) continue;
    out.push_back(
        {r.rank(), r.step_time_ms(), *median, r.step_time_ms() / *median});
  }
  std::sort(out.begin(), out.end(), [](const Straggler& a, const Straggler& b) {
    return a.rank < b.rank;
  });
  return out;
}

std::string StragglerMarker(const std::vector<Straggler>& stragglers) {
  if (stragglers.empty()) return "";
  std::vector<std::string> parts;
  for (const Straggler& s : stragglers) {
    parts.push_back(absl::StrFormat("%d (%.1fx)", s.rank, s.ratio));
  }
  return absl::StrCat(" STRAGGLER rank", stragglers.size() > 1 ? "s " : " ",
                      absl::StrJoin(parts, ", "));
}

std::string StragglerMessages(const std::vector<Straggler>& stragglers,
                              double factor) {
  std::string out;
  for (const Straggler& s : stragglers) {
    absl::StrAppend(
        &out,
        absl::StrFormat("straggler: rank %d step time %.1f ms is %.2fx "
                        "the median %.1f ms (factor %g)\n",
                        s.rank, s.step_time_ms, s.ratio, s.median_ms, factor));
  }
  return out;
}

absl::StatusOr<double> ParseStragglerFactor(absl::string_view text) {
  double f = 0;
  if (!absl::SimpleAtod(text, &f) || !std::isfinite(f) || f < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--straggler_factor must be a number >= 1 (got \"", text, "\")"));
  }
  return f;
}

}  // namespace ringleader::cli
