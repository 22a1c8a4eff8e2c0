#ifndef RINGLEADER_COORDINATOR_LOG_CALLS_H_
#define RINGLEADER_COORDINATOR_LOG_CALLS_H_

// A job's log, both ends: workers append the lines they logged while
// serving a job (WorkerService.AppendLogs), users read them
// (UserService.GetJobLogs). The lines live in the LogStore; this checks who
// appends and what, and shapes the answers.

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "coordinator/caller.h"
#include "coordinator/caller_checks.h"
#include "coordinator/job_manager.h"
#include "coordinator/log_store.h"
#include "coordinator/worker_registry.h"
#include "ringleader/v1/logs.pb.h"

namespace ringleader {

// What one AppendLogs call may carry.
inline constexpr int kMaxLogLinesPerCall = 1000;
inline constexpr int64_t kMaxLogBytesPerCall = 1024 * 1024;
// A longer line is cut to this many bytes (the worker cuts them first).
inline constexpr size_t kMaxLogLineBytes = 4096;

// Holds no state but the store's. Thread-safe.
class LogCalls {
 public:
  // `incarnation` names this coordinator process (GetJobLogsResponse).
  LogCalls(const CallerChecks& checks, const WorkerRegistry& workers,
           const JobManager& jobs, LogStore& store, std::string incarnation)
      : checks_(checks),
        workers_(workers),
        jobs_(jobs),
        store_(store),
        incarnation_(std::move(incarnation)) {}

  // The caller must be the named worker, assigned the job now, or before
  // (LogStore::Admit), or named by the job's progress as one of its ranks
  // (after a coordinator restart); NOT_FOUND for a job that is gone.
  absl::StatusOr<v1::AppendLogsResponse> AppendLogs(
      const Caller& caller, const v1::AppendLogsRequest& r);
  absl::StatusOr<v1::GetJobLogsResponse> GetJobLogs(
      const v1::GetJobLogsRequest& r) const;

  const std::string& incarnation() const { return incarnation_; }

 private:
  // The worker's host, once it may append to the job's log.
  absl::StatusOr<std::string> AdmittedHost(const std::string& worker_id,
                                           const std::string& job_id);

  const CallerChecks& checks_;
  const WorkerRegistry& workers_;
  const JobManager& jobs_;
  LogStore& store_;
  const std::string incarnation_;
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_LOG_CALLS_H_
