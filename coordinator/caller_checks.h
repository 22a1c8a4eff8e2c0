#ifndef RINGLEADER_COORDINATOR_CALLER_CHECKS_H_
#define RINGLEADER_COORDINATOR_CALLER_CHECKS_H_

// Whether a WorkerService call may act for what it names, judged by its
// caller (coordinator/caller.h) against the registry and the live
// generations: a worker's own calls carry its credential, a generation's
// calls come from its members, a rank's from the worker holding it. And
// whether what it names is live at all: a generation that ended is ABORTED
// whoever asks, so the member checks come first.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "coordinator/caller.h"
#include "coordinator/job_manager.h"
#include "coordinator/rendezvous.h"
#include "coordinator/request_ids.h"
#include "coordinator/worker_registry.h"

namespace ringleader {

// Reads the managers only; holds no state. Thread-safe.
class CallerChecks {
 public:
  CallerChecks(const WorkerRegistry& workers, const Rendezvous& rendezvous,
               const JobManager& jobs)
      : workers_(workers), rendezvous_(rendezvous), jobs_(jobs) {}

  // The caller is `worker_id`: UNAUTHENTICATED without its credential or
  // with a wrong one; NOT_FOUND for a worker the registry does not know,
  // which tells a worker whose lease expired to register again.
  absl::Status CheckWorker(const Caller& caller,
                           const std::string& worker_id) const;
  // `generation` of `job_id` is live and has `rank` (Rendezvous::
  // CheckMember's codes; a job with no rendezvous, because it ended or never
  // ran, is FAILED_PRECONDITION naming its state, and an unknown one
  // NOT_FOUND).
  absl::Status CheckMember(const std::string& job_id, int64_t generation,
                           int32_t rank) const;
  // CheckMember, then: the caller is the worker holding `rank`
  // (PERMISSION_DENIED for another worker's credential).
  absl::Status CheckRank(const Caller& caller, const std::string& job_id,
                         int64_t generation, int32_t rank) const;
  // CheckMember, then: the caller is one of the generation's members.
  absl::Status CheckGeneration(const Caller& caller, const std::string& job_id,
                               int64_t generation) const;

 private:
  absl::Status CheckRankHolder(const Caller& caller, const std::string& job_id,
                               int64_t generation, int32_t rank) const;
  absl::Status CheckGenerationCaller(const Caller& caller,
                                     const std::string& job_id,
                                     int64_t generation) const;

  const WorkerRegistry& workers_;
  const Rendezvous& rendezvous_;
  const JobManager& jobs_;
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_CALLER_CHECKS_H_
