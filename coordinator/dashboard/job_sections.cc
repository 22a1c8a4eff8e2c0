#include "coordinator/dashboard/job_sections.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/waiting_for_line.h"
#include "coordinator/dashboard/html.h"
#include "coordinator/dashboard/state_names.h"

namespace ringleader::dashboard {
namespace {

std::string Row(const std::string& name, const std::string& value_html) {
  return absl::StrCat("<tr><th>", name, "</th><td>", value_html, "</td></tr>");
}

// The epoch in progress, counted from 1 of the spec's, as `ringctl` shows
// it (JobProgress.epoch counts from 0): "2 of 2" at a 2-epoch job's end.
std::string EpochOf(const v1::Job& job) {
  const v1::JobProgress& p = job.progress();
  if (p.step() == 0 && p.epoch() == 0) return "-";
  const int64_t epochs = job.spec().epochs();
  return absl::StrCat(
      epochs > 0 ? std::min<int64_t>(p.epoch() + 1, epochs) : p.epoch() + 1,
      " of ", epochs);
}

std::string EscapedList(const std::vector<std::string>& items) {
  return items.empty() ? "-" : Escape(absl::StrJoin(items, ", "));
}

// What happened, in words, for the generation table's last column.
std::string EventDetail(const GenerationEvent& e) {
  switch (e.kind) {
    case GenerationEvent::Kind::kFormed:
    case GenerationEvent::Kind::kAdopted: {
      std::string out =
          absl::StrCat(e.members.size(), " ranks: ", EscapedList(e.members));
      if (!e.joined.empty()) {
        absl::StrAppend(&out, "<br>joined: ", EscapedList(e.joined));
      }
      if (!e.left.empty()) {
        absl::StrAppend(&out, "<br>left: ", EscapedList(e.left));
      }
      if (e.recovery) {
        absl::StrAppend(&out, "<br><b>recovery</b>: ",
                        e.steps_lost < 0
                            ? std::string("steps lost not known yet")
                            : absl::StrCat(e.steps_lost, " steps lost"));
      }
      return out;
    }
    case GenerationEvent::Kind::kEnded:
    case GenerationEvent::Kind::kResized:
    case GenerationEvent::Kind::kPreempted:
      return absl::StrCat(Escape(e.reason),
                          e.reached_step >= 0
                              ? absl::StrCat(" (at step ", e.reached_step, ")")
                              : "");
  }
  return "";
}

}  // namespace

std::string JobSummary(const v1::Job& job) {
  const v1::JobProgress& p = job.progress();
  std::string out;
  const std::string waiting = WaitingForLine(job);
  if (!waiting.empty()) {
    absl::StrAppend(&out, "<div class=\"waiting\" id=\"waiting-for\">",
                    Escape(waiting), "</div>");
  }
  absl::StrAppend(
      &out, "<table id=\"summary\">",
      Row("state", absl::StrCat("<span id=\"job-state\">",
                                JobStateSpan(job.state()), "</span>")),
      Row("name", Escape(job.spec().name())),
      Row("generation", absl::StrCat(job.generation())),
      Row("world size", absl::StrCat(job.world_size())),
      Row("restarts",
          absl::StrCat(job.restarts(), " of ", job.spec().max_restarts())),
      Row("epoch", EpochOf(job)),
      Row("step",
          absl::StrCat(FormatNumber(p.step()),
                       p.total_steps() > 0
                           ? absl::StrCat(" of ", FormatNumber(p.total_steps()))
                           : "")),
      Row("loss", FormatNumber(p.loss())),
      Row("samples/s", FormatNumber(p.samples_per_sec())));
  if (p.has_final_metrics()) {
    out += Row("test accuracy", FormatNumber(p.test_accuracy()));
  }
  if (!job.message().empty()) out += Row("message", Escape(job.message()));
  absl::StrAppend(&out, Row("created", FormatUnixMillis(job.create_time_ms())),
                  Row("updated", FormatUnixMillis(job.update_time_ms())),
                  "</table>");
  return out;
}

std::string RanksTable(const v1::Job& job) {
  if (job.progress().ranks_size() == 0) return "<p>No rank has reported.</p>";
  std::string out =
      "<table id=\"ranks\"><tr><th>rank</th><th>worker</th><th>step</th>"
      "<th>loss</th><th>samples/s</th><th>step time (ms)</th>"
      "<th>reported</th></tr>";
  for (const v1::RankProgress& r : job.progress().ranks()) {
    absl::StrAppend(
        &out, "<tr><td class=\"num\">", r.rank(), "</td><td>",
        Escape(r.worker_id()), "</td><td class=\"num\">", r.step(),
        "</td><td class=\"num\">", FormatNumber(r.loss()),
        "</td><td class=\"num\">", FormatNumber(r.samples_per_sec()),
        "</td><td class=\"num\">", FormatNumber(r.step_time_ms()), "</td><td>",
        FormatUnixMillis(r.report_time_ms()), "</td></tr>");
  }
  return out + "</table>";
}

std::string GenerationTable(const GenerationEvents::Snapshot& generations) {
  if (generations.events.empty()) {
    return "<p>No generation seen by this coordinator process yet.</p>";
  }
  std::string out;
  if (generations.dropped > 0) {
    absl::StrAppend(&out, "<p class=\"muted\">", generations.dropped,
                    " older events not kept.</p>");
  }
  out +=
      "<table id=\"generations\"><tr><th>time</th><th>generation</th>"
      "<th>event</th><th>detail</th></tr>";
  for (const GenerationEvent& e : generations.events) {
    absl::StrAppend(&out, "<tr><td>", FormatUtc(e.time),
                    "</td><td class=\"num\">", e.generation, "</td><td>",
                    GenerationEventKindName(e.kind), "</td><td>",
                    EventDetail(e), "</td></tr>");
  }
  return out + "</table>";
}

std::string LogSection(
    const std::map<int32_t, std::vector<v1::LogLine>>& logs) {
  if (logs.empty()) return "<p>No log lines.</p>";
  std::string out;
  for (const auto& [rank, lines] : logs) {
    absl::StrAppend(
        &out, "<h3>",
        rank < 0 ? std::string("before a rank") : absl::StrCat("rank ", rank),
        "</h3><pre class=\"log\" id=\"log-rank-", rank, "\">");
    for (const v1::LogLine& l : lines) {
      absl::StrAppend(&out, Escape(FormatUnixMillis(l.time_ms())), " ",
                      Escape(l.severity()), " [gen ", l.generation(), " ",
                      Escape(l.host()), "] ", Escape(l.text()), "\n");
    }
    out += "</pre>";
  }
  return out;
}

}  // namespace ringleader::dashboard
