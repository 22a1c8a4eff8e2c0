#include "cli/watch_command.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cli/job_format.h"
#include "common/job_over.h"
#include "common/job_spec_io.h"
#include "common/waiting_for_line.h"
#include "nlohmann/json.hpp"

namespace ringleader::cli {
namespace {

constexpr char kClearToEndOfLine[] = "\x1b[K";

// Lines for the evaluations in `job` after the first `shown`, and how many
// are shown then. A final job's last evaluation is its final result, which
// the summary prints.
std::string EvaluationMessages(const v1::Job& job, int* shown) {
  const v1::JobProgress& p = job.progress();
  int end = p.evaluations_size();
  if (IsJobOver(job.state()) && p.has_final_metrics() && end > 0) --end;
  std::string out;
  for (int i = *shown; i < end; ++i) {
    absl::StrAppend(&out, "evaluated ", FormatEvaluation(p.evaluations(i)),
                    "\n");
  }
  *shown = std::max(*shown, end);
  return out;
}

// What the waiting-for line (Job.waiting_for) is about, without its times:
// a new line is printed only when this changes.
std::string WaitIdentity(const v1::Job& job) {
  if (!job.has_waiting_for()) return "";
  const v1::WaitingFor& w = job.waiting_for();
  return absl::StrCat(w.rank(), "/", w.worker_id(), "/", w.phase(), "/",
                      w.silent_ms() > 0, "/", w.wait_phase(), "/", w.step());
}

}  // namespace

std::string WatchPrinter::WaitingMessages(const v1::Job& job) {
  const std::string id = WaitIdentity(job);
  if (id == wait_shown_) return "";
  std::string out;
  if (id.empty()) {
    out = absl::StrCat("the wait for rank ", wait_rank_, " ended\n");
  } else {
    out = WaitingForLine(job) + "\n";
    wait_rank_ = job.waiting_for().rank();
  }
  wait_shown_ = id;
  return out;
}

WatchPrinter::WatchPrinter(const CliConfig& config, std::ostream& out,
                           double straggler_factor)
    : config_(config), out_(out), straggler_factor_(straggler_factor) {}

void WatchPrinter::OnJob(const v1::Job& job, absl::Time now) {
  // Only training counts: time spent waiting for workers is no step rate.
  if (job.state() == v1::JOB_STATE_RUNNING && job.progress().step() > 0) {
    rate_.Observe(job.progress().step(), now);
  }
  const bool state_changed = last_.has_value() && last_->state() != job.state();
  last_ = job;
  const std::vector<Straggler> stragglers =
      job.state() == v1::JOB_STATE_RUNNING
          ? FindStragglers(job.progress(), straggler_factor_)
          : std::vector<Straggler>();
  std::vector<int32_t> ranks;
  for (const Straggler& s : stragglers) ranks.push_back(s.rank);
  const bool stragglers_changed = ranks != straggler_ranks_;
  straggler_ranks_ = ranks;
  if (config_.output == OutputFormat::kJson) {
    if (stragglers.empty()) {
      out_ << JobToJson(job, JsonStyle::kCompact) << "\n" << std::flush;
      return;
    }
    nlohmann::json doc =
        nlohmann::json::parse(JobToJson(job, JsonStyle::kCompact));
    nlohmann::json list = nlohmann::json::array();
    for (const Straggler& s : stragglers) {
      list.push_back({{"rank", s.rank},
                      {"step_time_ms", s.step_time_ms},
                      {"median_step_time_ms", s.median_ms},
                      {"ratio", s.ratio}});
    }
    doc["stragglers"] = std::move(list);
    out_ << doc.dump() << "\n" << std::flush;
    return;
  }
  const std::string marker = StragglerMarker(stragglers);
  int width = config_.stdout_is_tty && config_.terminal_width > 1
                  ? config_.terminal_width - 1
                  : 0;
  if (width > 0) width = std::max(1, width - static_cast<int>(marker.size()));
  const std::string line =
      FormatWatchLine(job, EstimateEta(job, rate_.StepsPerSecond()), width) +
      marker;
  const std::string messages =
      EvaluationMessages(job, &evaluations_shown_) + WaitingMessages(job) +
      (stragglers_changed ? StragglerMessages(stragglers, straggler_factor_)
                          : "");
  if (!config_.stdout_is_tty) {
    // Messages are events, each printed once; the status line is paced.
    out_ << messages;
    if (pacer_.ShouldPrint(job, now)) out_ << line << "\n";
    out_ << std::flush;
    return;
  }
  if (line_open_ && state_changed) {
    out_ << "\n";
  } else if (line_open_ && !messages.empty()) {
    out_ << "\r" << kClearToEndOfLine;  // The messages go above the line.
  }
  out_ << messages;
  out_ << "\r" << line << kClearToEndOfLine << std::flush;
  line_open_ = true;
}

CommandStatus WatchPrinter::Finish(const std::string& job_id,
                                   const absl::Status& stream_status) {
  if (line_open_) out_ << "\n";
  line_open_ = false;
  if (!stream_status.ok()) {
    if (!last_.has_value()) return FromRpcStatus(stream_status);
    return CommandStatus::Operational(absl::StrCat(
        "watch of job ", job_id, " broke off: ", stream_status.message()));
  }
  if (!last_.has_value() || !IsJobOver(last_->state())) {
    return CommandStatus::Operational(absl::StrCat(
        "watch of job ", job_id, " ended before the job finished",
        last_.has_value()
            ? absl::StrCat(" (last state ", JobStateName(last_->state()), ")")
            : ""));
  }
  if (config_.output == OutputFormat::kText) {
    out_ << FormatFinalSummary(*last_);
  }
  out_.flush();
  if (last_->state() == v1::JOB_STATE_SUCCEEDED) return CommandStatus::Ok();
  return CommandStatus::Operational(absl::StrCat(
      "job ", job_id, " ", JobStateName(last_->state()),
      last_->message().empty()
          ? ""
          : absl::StrCat(": ", FormatJobMessage(last_->message()))));
}

CommandStatus RunWatch(const CliConfig& config, CoordinatorClient& client,
                       const std::string& job_id, std::ostream& out,
                       double straggler_factor) {
  WatchPrinter printer(config, out, straggler_factor);
  const absl::Status status = client.WatchJob(
      job_id,
      [&printer](const v1::Job& job) { printer.OnJob(job, absl::Now()); });
  return printer.Finish(job_id, status);
}

}  // namespace ringleader::cli
