#include "coordinator/dashboard/job_page.h"

#include "absl/strings/str_cat.h"
#include "common/job_over.h"
#include "coordinator/dashboard/html.h"
#include "coordinator/dashboard/job_charts.h"
#include "coordinator/dashboard/job_sections.h"
#include "coordinator/dashboard/state_names.h"

namespace ringleader::dashboard {

std::string RenderJobPage(const JobPageData& data) {
  const v1::Job& job = data.job;
  const v1::JobHistoryResponse& h = data.history;
  std::string body =
      absl::StrCat("<h1>Job ", Escape(job.job_id()), "</h1>", JobSummary(job),
                   "<h2>Training</h2><p class=\"muted\">", h.points_size(),
                   " points (at most ", h.max_points(), " kept; one every ",
                   h.stride(), " reports of rank 0).</p>", TrainingCharts(h));
  const std::string evaluations = EvaluationCharts(h);
  if (!evaluations.empty()) {
    absl::StrAppend(&body, "<h2>Evaluation</h2>", evaluations);
  }
  absl::StrAppend(&body, "<h2>Ranks</h2>", RanksTable(job),
                  "<h2>Generations</h2>", GenerationTable(data.generations),
                  "<h2>Last log lines</h2>", LogSection(data.logs));
  // A finished job's page no longer changes: it stops reloading.
  return Page(absl::StrCat("Job ", job.job_id()), body,
              IsJobOver(job.state()) ? 0 : 2);
}

}  // namespace ringleader::dashboard
