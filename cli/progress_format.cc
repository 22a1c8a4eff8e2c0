#include "cli/progress_format.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/job_format.h"
#include "common/job_over.h"

namespace ringleader::cli {

std::string ProgressBar(double fraction, int width) {
  width = std::max(width, 1);
  if (!(fraction > 0)) fraction = 0;  // Also NaN.
  fraction = std::min(fraction, 1.0);
  const int filled = static_cast<int>(std::floor(fraction * width));
  return absl::StrCat("[", std::string(filled, '#'),
                      std::string(width - filled, '-'), "]");
}

std::string FormatPercent(int64_t step, int64_t total) {
  double pct = total > 0 ? 100.0 * static_cast<double>(step) / total : 0;
  pct = std::clamp(pct, 0.0, 100.0);
  return absl::StrFormat("%5.1f%%", pct);
}

void StepRateTracker::Observe(int64_t step, absl::Time at) {
  if (!seen_.empty() && step < seen_.back().first) seen_.clear();
  seen_.emplace_back(step, at);
  while (seen_.size() > std::max<size_t>(window_, 2)) seen_.pop_front();
}

double StepRateTracker::StepsPerSecond() const {
  if (seen_.size() < 2) return 0;
  const auto& [first_step, first_at] = seen_.front();
  const auto& [last_step, last_at] = seen_.back();
  const double secs = absl::ToDoubleSeconds(last_at - first_at);
  if (!(secs > 0) || last_step <= first_step) return 0;
  return static_cast<double>(last_step - first_step) / secs;
}

// 0..4: how many quarters of the planned steps are done.
int LogLinePacer::QuarterOf(const v1::Job& job) {
  const int64_t total = job.progress().total_steps();
  if (total <= 0) return 0;
  return static_cast<int>(std::min<int64_t>(
      4, std::max<int64_t>(0, job.progress().step()) * 4 / total));
}

bool LogLinePacer::ShouldPrint(const v1::Job& job, absl::Time now) {
  const int64_t step = job.progress().step();
  const int quarter = QuarterOf(job);
  bool due = !printed_any_ || job.state() != state_;
  if (!due && step != step_) {
    due = now - printed_at_ >= min_interval_ || now < printed_at_ ||
          quarter > quarter_;
  }
  if (!due) return false;
  printed_any_ = true;
  state_ = job.state();
  step_ = step;
  quarter_ = quarter;
  printed_at_ = now;
  return true;
}

std::optional<absl::Duration> EstimateEta(const v1::Job& job,
                                          double observed_steps_per_sec) {
  const v1::JobProgress& p = job.progress();
  if (p.total_steps() <= 0) return std::nullopt;
  const int64_t remaining = p.total_steps() - p.step();
  if (remaining <= 0) return absl::ZeroDuration();
  const double samples_per_step =
      static_cast<double>(job.spec().batch_size()) *
      std::max(job.spec().gradient_accumulation_steps(), 1) * job.world_size();
  double seconds = -1;
  if (p.samples_per_sec() > 0 && samples_per_step > 0) {
    seconds = remaining * samples_per_step / p.samples_per_sec();
  } else if (observed_steps_per_sec > 0) {
    seconds = remaining / observed_steps_per_sec;
  }
  if (!(seconds >= 0) || !std::isfinite(seconds)) return std::nullopt;
  return absl::Seconds(std::ceil(seconds));
}

std::string FormatWatchLine(const v1::Job& job,
                            std::optional<absl::Duration> eta, int max_width,
                            int bar_width) {
  const v1::JobProgress& p = job.progress();
  std::vector<std::string> parts;
  parts.push_back(JobStateName(job.state()));
  if (job.generation() > 0) {
    parts.push_back(absl::StrCat("gen ", job.generation()));
    parts.push_back(absl::StrCat("world ", job.world_size()));
  }
  const bool started = p.step() > 0 || p.total_steps() > 0;
  if (started) {
    parts.push_back(absl::StrCat("epoch ", FormatEpoch(job)));
    if (p.total_steps() > 0) {
      parts.push_back(ProgressBar(
          static_cast<double>(p.step()) / p.total_steps(), bar_width));
      parts.push_back(FormatPercent(p.step(), p.total_steps()));
    }
    parts.push_back(FormatStepTotal(p));
  }
  if (p.step() > 0) parts.push_back(absl::StrCat("loss ", FormatLoss(p)));
  if (p.grad_norm() != 0) {
    parts.push_back(absl::StrCat("grad norm ", FormatGradNorm(p)));
  }
  if (p.samples_per_sec() > 0) {
    parts.push_back(
        absl::StrCat(FormatSamplesPerSec(p.samples_per_sec()), " samples/s"));
  }
  if (eta.has_value() && !IsJobOver(job.state())) {
    parts.push_back(absl::StrCat("ETA ", HumanDuration(*eta)));
  }
  // Why it restarts, or waits for workers after a preemption.
  if (!IsJobOver(job.state()) && !job.message().empty() &&
      (job.state() == v1::JOB_STATE_RESTARTING ||
       job.state() == v1::JOB_STATE_PREEMPTED)) {
    parts.push_back(absl::StrCat("(", FormatJobMessage(job.message()), ")"));
  }
  std::string line = absl::StrJoin(parts, " ");
  if (max_width > 0 && line.size() > static_cast<size_t>(max_width)) {
    line.resize(max_width);
  }
  return line;
}

std::string FormatFinalSummary(const v1::Job& job) {
  std::string out =
      absl::StrCat("job ", job.job_id(), " ", JobStateName(job.state()));
  if (!job.message().empty()) {
    absl::StrAppend(&out, ": ", FormatJobMessage(job.message()));
  }
  out += "\n";
  const v1::JobProgress& p = job.progress();
  if (p.has_final_metrics()) {
    absl::StrAppend(&out, "final ", FormatFinalMetrics(p), "\n");
  }
  return out;
}

}  // namespace ringleader::cli
