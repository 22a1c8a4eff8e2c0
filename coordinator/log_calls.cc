#include "coordinator/log_calls.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/quote_for_error.h"
#include "coordinator/request_ids.h"

namespace ringleader {
namespace {

// `ranks`: the job's max_workers (a line naming a larger rank is not the
// job's).
absl::Status CheckLines(const v1::AppendLogsRequest& r, int32_t ranks) {
  if (r.lines_size() > kMaxLogLinesPerCall) {
    return absl::InvalidArgumentError(
        absl::StrCat("AppendLogs carries ", r.lines_size(), " lines; at most ",
                     kMaxLogLinesPerCall, " per call"));
  }
  if (r.dropped() < 0) {
    return absl::InvalidArgumentError("AppendLogs: dropped must be >= 0");
  }
  int64_t bytes = 0;
  for (const v1::LogLine& line : r.lines()) {
    bytes += static_cast<int64_t>(line.text().size());
    if (line.rank() < -1 || line.rank() >= ranks || line.generation() < 0 ||
        line.time_ms() < 0 || line.severity().size() > 16) {
      return absl::InvalidArgumentError(absl::StrCat(
          "AppendLogs: a line with rank ", line.rank(), ", generation ",
          line.generation(), ", time ", line.time_ms(), " and severity ",
          QuoteForError(line.severity()), " (rank in [-1, ", ranks,
          "), generation >= 0, time >= 0, severity <= 16 bytes)"));
    }
  }
  if (bytes > kMaxLogBytesPerCall) {
    return absl::InvalidArgumentError(
        absl::StrCat("AppendLogs carries ", bytes, " bytes of text; at most ",
                     kMaxLogBytesPerCall, " per call"));
  }
  return absl::OkStatus();
}

// Cuts a line past kMaxLogLineBytes, on a UTF-8 character boundary.
void CutLongLine(v1::LogLine& line) {
  std::string* text = line.mutable_text();
  if (text->size() <= kMaxLogLineBytes) return;
  size_t end = kMaxLogLineBytes - 3;
  while (end > 0 && (static_cast<unsigned char>((*text)[end]) & 0xC0) == 0x80)
    --end;
  text->resize(end);
  text->append("...");
}

}  // namespace

absl::StatusOr<std::string> LogCalls::AdmittedHost(const std::string& worker_id,
                                                   const std::string& job_id) {
  absl::StatusOr<v1::WorkerInfo> info = workers_.Get(worker_id);
  if (!info.ok()) return info.status();
  if (!store_.Admitted(job_id, worker_id)) {
    // The job's record names its ranks across a coordinator restart, as
    // the registry's assignment of a finished job does not.
    if (info->job_id() != job_id && !jobs_.RanksName(job_id, worker_id)) {
      return absl::FailedPreconditionError(
          absl::StrCat("worker ", QuoteForError(worker_id),
                       " was never assigned job ", QuoteForError(job_id)));
    }
    store_.Admit(job_id, worker_id);
  }
  return info->hostname();
}

absl::StatusOr<v1::AppendLogsResponse> LogCalls::AppendLogs(
    const Caller& caller, const v1::AppendLogsRequest& r) {
  if (absl::Status s = RequireJobId(r.job_id()); !s.ok()) return s;
  if (absl::Status s = checks_.CheckWorker(caller, r.worker_id()); !s.ok())
    return s;
  // A deleted job takes its log with it: nothing more is kept for it.
  absl::StatusOr<JobManager::Outline> job = jobs_.OutlineOf(r.job_id());
  if (!job.ok()) return job.status();
  if (absl::Status s = CheckLines(r, job->max_workers); !s.ok()) return s;
  absl::StatusOr<std::string> host = AdmittedHost(r.worker_id(), r.job_id());
  if (!host.ok()) return host.status();
  std::vector<v1::LogLine> lines(r.lines().begin(), r.lines().end());
  for (v1::LogLine& line : lines) CutLongLine(line);
  store_.Append(r.job_id(), r.worker_id(), *host, std::move(lines),
                r.dropped());
  return v1::AppendLogsResponse();
}

absl::StatusOr<v1::GetJobLogsResponse> LogCalls::GetJobLogs(
    const v1::GetJobLogsRequest& r) const {
  if (absl::Status s = RequireJobId(r.job_id()); !s.ok()) return s;
  if (r.tail() < 0 || r.since_ms() < 0 || r.after_seq() < 0) {
    return absl::InvalidArgumentError(
        "GetJobLogs: tail, since_ms and after_seq must be >= 0");
  }
  absl::StatusOr<JobManager::Outline> job = jobs_.OutlineOf(r.job_id());
  if (!job.ok()) return job.status();
  LogStore::Query query;
  if (r.has_rank()) query.rank = r.rank();
  query.since_ms = r.since_ms();
  query.tail = r.tail();
  // A cursor from another coordinator process means nothing here.
  query.after_seq = r.incarnation() == incarnation_ ? r.after_seq() : 0;
  LogStore::Page page = store_.Read(r.job_id(), query);
  v1::GetJobLogsResponse out;
  if (page.omitted > 0) {
    v1::LogLine* note = out.add_lines();
    note->set_rank(-1);
    note->set_severity("WARNING");
    note->set_text(absl::StrCat("[ringleader: ", page.omitted,
                                " earlier lines left out of this answer; ask "
                                "for fewer with --tail or --since]"));
    if (!page.lines.empty()) note->set_time_ms(page.lines.front().time_ms());
  }
  for (v1::LogLine& line : page.lines) *out.add_lines() = std::move(line);
  out.set_last_seq(page.last_seq);
  out.set_incarnation(incarnation_);
  out.set_state(job->state);
  return out;
}

}  // namespace ringleader
