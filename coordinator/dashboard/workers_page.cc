#include "coordinator/dashboard/workers_page.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "coordinator/dashboard/html.h"
#include "coordinator/dashboard/state_names.h"

namespace ringleader::dashboard {
namespace {

std::string Ago(int64_t ms, absl::Time now) {
  if (ms <= 0) return "-";
  return absl::StrFormat("%.1f s ago",
                         absl::ToDoubleSeconds(now - absl::FromUnixMillis(ms)));
}

std::string WorkerRow(const v1::WorkerInfo& w, absl::Time now) {
  return absl::StrCat(
      "<tr><td>", Escape(w.worker_id()), "</td><td>", Escape(w.hostname()),
      "</td><td>", Escape(w.device()), "</td><td class=\"num\">", w.pid(),
      "</td><td>", Escape(w.address()), "</td><td>", WorkerStateText(w.state()),
      "</td><td>", w.job_id().empty() ? "-" : JobLink(w.job_id()), "</td><td>",
      Ago(w.last_heartbeat_ms(), now), "</td><td>",
      FormatUnixMillis(w.registered_ms()), "</td></tr>");
}

}  // namespace

std::string RenderWorkersPage(const v1::ListWorkersResponse& workers,
                              absl::Time now) {
  std::string body = absl::StrCat("<h1>Workers</h1><p class=\"muted\">",
                                  workers.workers_size(), " registered.</p>");
  if (workers.workers_size() == 0) {
    return Page("Workers", body + "<p>No workers.</p>", 5);
  }
  body +=
      "<table id=\"workers\"><tr><th>worker</th><th>host</th><th>device</th>"
      "<th>pid</th><th>address</th><th>state</th><th>job</th>"
      "<th>last heartbeat</th><th>registered</th></tr>";
  for (const v1::WorkerInfo& w : workers.workers()) body += WorkerRow(w, now);
  body += "</table>";
  return Page("Workers", body, 5);
}

}  // namespace ringleader::dashboard
