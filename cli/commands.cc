#include "cli/commands.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cli/history_format.h"
#include "cli/job_format.h"
#include "cli/json_output.h"

namespace ringleader::cli {

CommandStatus RunSubmit(const CliConfig& config, CoordinatorClient& client,
                        const v1::JobSpec& spec, bool one_line_json,
                        std::ostream& out, std::string* job_id) {
  absl::StatusOr<std::string> id = client.SubmitJob(spec);
  if (!id.ok()) return FromRpcStatus(id.status());
  if (config.output == OutputFormat::kJson) {
    out << JobIdJson(*id, one_line_json) << "\n";
  } else {
    out << *id << "\n";
  }
  out.flush();
  *job_id = *id;
  return CommandStatus::Ok();
}

CommandStatus RunGet(const CliConfig& config, CoordinatorClient& client,
                     const std::string& job_id, std::ostream& out) {
  absl::StatusOr<v1::Job> job = client.GetJob(job_id);
  if (!job.ok()) return FromRpcStatus(job.status());
  if (config.output == OutputFormat::kJson) {
    out << JobJson(*job) << "\n";
  } else {
    out << FormatJobDetail(*job, absl::Now());
  }
  return CommandStatus::Ok();
}

CommandStatus RunGetHistory(const CliConfig& config, CoordinatorClient& client,
                            const std::string& job_id, std::ostream& out) {
  absl::StatusOr<v1::JobHistoryResponse> history = client.GetJobHistory(job_id);
  if (!history.ok()) return FromRpcStatus(history.status());
  if (config.output == OutputFormat::kJson) {
    out << HistoryJson(*history) << "\n";
  } else {
    out << FormatHistoryTable(*history);
  }
  return CommandStatus::Ok();
}

CommandStatus RunList(const CliConfig& config, CoordinatorClient& client,
                      const std::string& states, std::ostream& out) {
  absl::StatusOr<std::vector<v1::JobState>> filter = ParseJobStates(states);
  if (!filter.ok()) {
    return CommandStatus::Usage(std::string(filter.status().message()));
  }
  std::vector<v1::Job> jobs;
  std::string token;
  int pages = 0;
  do {
    if (++pages > kMaxListPages) {
      return CommandStatus::Operational(absl::StrCat(
          "the coordinator sent more than ", kMaxListPages, " pages of jobs"));
    }
    absl::StatusOr<v1::ListJobsResponse> resp =
        client.ListJobs(*filter, /*page_size=*/0, token);
    if (!resp.ok()) return FromRpcStatus(resp.status());
    for (v1::Job& job : *resp->mutable_jobs()) jobs.push_back(std::move(job));
    token = resp->next_page_token();
  } while (!token.empty());
  if (config.output == OutputFormat::kJson) {
    out << JobsJson(jobs) << "\n";
  } else {
    out << FormatJobsTable(jobs);
  }
  return CommandStatus::Ok();
}

CommandStatus RunCancel(const CliConfig& config, CoordinatorClient& client,
                        const std::string& job_id, std::ostream& out) {
  absl::StatusOr<v1::Job> job = client.CancelJob(job_id);
  if (!job.ok()) return FromRpcStatus(job.status());
  if (config.output == OutputFormat::kJson) {
    out << JobJson(*job) << "\n";
  } else {
    out << "job " << job->job_id() << " " << JobStateName(job->state()) << "\n";
  }
  return CommandStatus::Ok();
}

CommandStatus RunDelete(const CliConfig& config, CoordinatorClient& client,
                        const std::string& job_id, std::ostream& out) {
  if (absl::Status s = client.DeleteJob(job_id); !s.ok()) {
    return FromRpcStatus(s);
  }
  if (config.output == OutputFormat::kJson) {
    out << JobIdJson(job_id) << "\n";
  } else {
    out << "job " << job_id << " deleted\n";
  }
  return CommandStatus::Ok();
}

CommandStatus RunWorkers(const CliConfig& config, CoordinatorClient& client,
                         std::ostream& out) {
  absl::StatusOr<v1::ListWorkersResponse> resp = client.ListWorkers();
  if (!resp.ok()) return FromRpcStatus(resp.status());
  const std::vector<v1::WorkerInfo> workers(resp->workers().begin(),
                                            resp->workers().end());
  if (config.output == OutputFormat::kJson) {
    out << WorkersJson(workers) << "\n";
  } else {
    out << FormatWorkersTable(workers, absl::Now());
  }
  return CommandStatus::Ok();
}

}  // namespace ringleader::cli
