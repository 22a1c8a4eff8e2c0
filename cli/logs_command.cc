#include "cli/logs_command.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "google/protobuf/util/json_util.h"

namespace ringleader::cli {
namespace {

bool Final(v1::JobState state) {
  return state == v1::JOB_STATE_SUCCEEDED || state == v1::JOB_STATE_FAILED ||
         state == v1::JOB_STATE_CANCELLED;
}

std::string LineJson(const v1::LogLine& line) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = false;
  (void)google::protobuf::util::MessageToJsonString(line, &json, options);
  return json;
}

void Print(const CliConfig& config, const v1::GetJobLogsResponse& page,
           std::ostream& out) {
  for (const v1::LogLine& line : page.lines()) {
    out << (config.output == OutputFormat::kJson ? LineJson(line)
                                                 : FormatLogLine(line))
        << "\n";
  }
  out.flush();
}

// Follows the job's log from `first`'s cursor until the job ended and
// `linger` passed, or the coordinator stayed unreachable past `outage`.
CommandStatus Follow(const CliConfig& config, CoordinatorClient& client,
                     v1::GetJobLogsRequest request,
                     const v1::GetJobLogsResponse& first,
                     const LogsOptions& options, std::ostream& out) {
  request.set_tail(0);
  request.set_after_seq(first.last_seq());
  request.set_incarnation(first.incarnation());
  std::optional<absl::Time> ended;
  if (Final(first.state())) ended = absl::Now();
  absl::Time reached = absl::Now();
  // Bounded: the job's end, the linger after it, or the outage limit ends
  // it; a job may run for days, so no count bounds it.
  while (!ended.has_value() || absl::Now() - *ended < options.linger) {
    absl::SleepFor(options.poll);
    absl::StatusOr<v1::GetJobLogsResponse> page = client.GetJobLogs(request);
    if (!page.ok()) {
      if (!absl::IsUnavailable(page.status()) &&
          !absl::IsDeadlineExceeded(page.status())) {
        return FromRpcStatus(page.status());
      }
      if (absl::Now() - reached > options.outage) {
        return FromRpcStatus(page.status());
      }
      continue;  // A coordinator restarting: its new log comes after.
    }
    reached = absl::Now();
    Print(config, *page, out);
    request.set_after_seq(page->last_seq());
    request.set_incarnation(page->incarnation());
    if (!ended.has_value() && Final(page->state())) ended = absl::Now();
  }
  return CommandStatus::Ok();
}

}  // namespace

std::string FormatLogLine(const v1::LogLine& line) {
  const absl::Time t = absl::FromUnixMillis(line.time_ms());
  const std::string who =
      line.rank() >= 0
          ? absl::StrCat("rank ", line.rank(), " gen ", line.generation())
          : std::string("no rank");
  const char severity = line.severity().empty() ? '?' : line.severity()[0];
  return absl::StrCat(
      "[", who, " ", line.host(), "] ", std::string(1, severity),
      absl::FormatTime("%m%d %H:%M:%E3S", t, absl::UTCTimeZone()), " ",
      line.text());
}

CommandStatus RunLogs(const CliConfig& config, CoordinatorClient& client,
                      const std::string& job_id, const LogsOptions& options,
                      std::ostream& out) {
  if (options.tail < 0 || options.since < absl::ZeroDuration()) {
    return CommandStatus::Usage("--tail and --since must be >= 0");
  }
  if (options.rank.has_value() && *options.rank < 0) {
    return CommandStatus::Usage("--rank must be >= 0");
  }
  v1::GetJobLogsRequest request;
  request.set_job_id(job_id);
  if (options.rank.has_value()) request.set_rank(*options.rank);
  if (options.since > absl::ZeroDuration()) {
    request.set_since_ms(absl::ToUnixMillis(absl::Now() - options.since));
  }
  request.set_tail(options.tail);
  absl::StatusOr<v1::GetJobLogsResponse> first = client.GetJobLogs(request);
  if (!first.ok()) return FromRpcStatus(first.status());
  Print(config, *first, out);
  if (!options.follow) return CommandStatus::Ok();
  return Follow(config, client, request, *first, options, out);
}

}  // namespace ringleader::cli
