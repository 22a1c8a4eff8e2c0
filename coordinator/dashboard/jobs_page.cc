#include "coordinator/dashboard/jobs_page.h"

#include "absl/strings/str_cat.h"
#include "coordinator/dashboard/html.h"
#include "coordinator/dashboard/state_names.h"

namespace ringleader::dashboard {
namespace {

std::string JobRow(const v1::Job& job) {
  const v1::JobProgress& p = job.progress();
  const std::string steps = p.total_steps() > 0
                                ? absl::StrCat(p.step(), " / ", p.total_steps())
                                : absl::StrCat(p.step());
  return absl::StrCat(
      "<tr><td>", JobLink(job.job_id()), "</td><td>", Escape(job.spec().name()),
      "</td><td>", JobStateSpan(job.state()), "</td><td class=\"num\">",
      job.generation(), "</td><td class=\"num\">", job.world_size(),
      "</td><td class=\"num\">", job.restarts(), "</td><td class=\"num\">",
      steps, "</td><td class=\"num\">", FormatNumber(p.loss()),
      "</td><td class=\"num\">", FormatNumber(p.samples_per_sec()), "</td><td>",
      FormatUnixMillis(job.create_time_ms()), "</td><td>",
      FormatUnixMillis(job.update_time_ms()), "</td></tr>");
}

}  // namespace

std::string RenderJobsPage(const std::vector<v1::Job>& jobs, int64_t omitted) {
  std::string body = absl::StrCat("<h1>Jobs</h1><p class=\"muted\">",
                                  jobs.size(), " shown, newest first");
  if (omitted > 0) absl::StrAppend(&body, "; ", omitted, " older not shown");
  body += ".</p>";
  if (jobs.empty()) {
    return Page("Jobs", body + "<p>No jobs.</p>", 5);
  }
  body +=
      "<table id=\"jobs\"><tr><th>job</th><th>name</th><th>state</th>"
      "<th>generation</th><th>world</th><th>restarts</th><th>step</th>"
      "<th>loss</th><th>samples/s</th><th>created</th><th>updated</th></tr>";
  for (auto it = jobs.rbegin(); it != jobs.rend(); ++it) body += JobRow(*it);
  body += "</table>";
  return Page("Jobs", body, 5);
}

}  // namespace ringleader::dashboard
