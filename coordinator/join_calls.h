#ifndef RINGLEADER_COORDINATOR_JOIN_CALLS_H_
#define RINGLEADER_COORDINATOR_JOIN_CALLS_H_

// JoinRendezvous: a worker assigned to a job waits for the job's next
// generation, and is answered with its rank, the job's spec and where the
// generation may resume. A newcomer to a job whose live generation has room
// grows it at once when a member keeps its training state (memory
// recovery: the newcomer receives the state from a peer, and no work is
// lost); otherwise the generation grows at its next checkpoint commit
// (TrainingCalls::CommitCheckpoint).

#include "common/clock.h"
#include "coordinator/caller.h"
#include "coordinator/caller_checks.h"
#include "coordinator/generation_facts.h"
#include "coordinator/job_manager.h"
#include "coordinator/rendezvous.h"
#include "coordinator/waits.h"
#include "coordinator/worker_registry.h"
#include "ringleader/v1/worker_service.pb.h"

namespace ringleader {

// Holds no state of its own. Thread-safe.
class JoinCalls {
 public:
  JoinCalls(const CallerChecks& checks, const WorkerRegistry& workers,
            JobManager& jobs, Rendezvous& rendezvous,
            const GenerationFacts& facts, const Clock* clock, WaitLimits limits)
      : checks_(checks),
        workers_(workers),
        jobs_(jobs),
        rendezvous_(rendezvous),
        facts_(facts),
        clock_(clock),
        limits_(limits) {}

  // FAILED_PRECONDITION for a worker not assigned to the job (it waits for
  // an assignment in a heartbeat) or a job that ended.
  Canceller JoinRendezvous(const Caller& caller,
                           const v1::JoinRendezvousRequest& r,
                           Reply<v1::JoinRendezvousResponse> done);

 private:
  // The worker the join is for, once the request, its caller and its
  // assignment are checked.
  absl::StatusOr<v1::WorkerInfo> CheckJoin(const Caller& caller,
                                           const v1::JoinRendezvousRequest& r);
  // The answer of a join of `worker_id` to `job_id` once `gen` formed.
  absl::StatusOr<v1::JoinRendezvousResponse> Answer(
      const std::string& job_id, const std::string& worker_id,
      bool include_members, const Rendezvous::Generation& gen) const;
  // A worker waits to join the live generation of `job_id`: grows it now if
  // a member keeps its state and training is not over.
  void GrowForNewcomer(const std::string& job_id);

  const CallerChecks& checks_;
  const WorkerRegistry& workers_;
  JobManager& jobs_;
  Rendezvous& rendezvous_;
  const GenerationFacts& facts_;
  const Clock* const clock_;
  const WaitLimits limits_;
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_JOIN_CALLS_H_
