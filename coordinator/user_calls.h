#ifndef RINGLEADER_COORDINATOR_USER_CALLS_H_
#define RINGLEADER_COORDINATOR_USER_CALLS_H_

// UserService's calls: jobs submitted, read, listed in pages, cancelled,
// deleted and watched, and the registered workers listed. The job manager
// keeps the jobs; this checks the requests and shapes the answers.

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "coordinator/job_manager.h"
#include "coordinator/worker_registry.h"
#include "ringleader/v1/user_service.pb.h"

namespace ringleader {

// Holds no state of its own. Thread-safe.
class UserCalls {
 public:
  // Opens a submitted job's rendezvous; a job it refuses fails.
  using OpenHook = std::function<absl::Status(const v1::Job& job)>;
  // Fills in what a job read now shows beyond its record: the rank its
  // ranks wait for, timed now (StallWatch::Judge).
  using ReadHook = std::function<void(v1::Job& job)>;

  UserCalls(JobManager& jobs, const WorkerRegistry& workers, OpenHook open,
            ReadHook read = nullptr)
      : jobs_(jobs),
        workers_(workers),
        open_(std::move(open)),
        read_(std::move(read)) {}

  absl::StatusOr<v1::SubmitJobResponse> SubmitJob(
      const v1::SubmitJobRequest& r);
  absl::StatusOr<v1::Job> GetJob(const v1::GetJobRequest& r);
  absl::StatusOr<v1::ListJobsResponse> ListJobs(const v1::ListJobsRequest& r);
  absl::StatusOr<v1::Job> CancelJob(const v1::CancelJobRequest& r);
  // A finished job's rendezvous, KV space and barriers went when it
  // finished: only its record is left to delete.
  absl::StatusOr<v1::DeleteJobResponse> DeleteJob(
      const v1::DeleteJobRequest& r);
  // JobManager::Watch; returns the token UnwatchJob takes.
  absl::StatusOr<uint64_t> WatchJob(const std::string& job_id,
                                    JobManager::Watcher watcher);
  void UnwatchJob(const std::string& job_id, uint64_t token);
  v1::ListWorkersResponse ListWorkers() const;

 private:
  JobManager& jobs_;
  const WorkerRegistry& workers_;
  const OpenHook open_;
  const ReadHook read_;
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_USER_CALLS_H_
