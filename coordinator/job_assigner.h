#ifndef RINGLEADER_COORDINATOR_JOB_ASSIGNER_H_
#define RINGLEADER_COORDINATOR_JOB_ASSIGNER_H_

// Which job each worker serves, and what a worker's heartbeat is told about
// it. An idle worker is offered the oldest active job with room (at most
// max_workers per job) whose generation is still training: a worker taken
// once the generation trained to its last step, or once some rank sent its
// final report, would only find the job over when it joined. A worker is
// told its assignment again until it joins; a member of the live generation
// never is (it would end its own generation by joining again). A worker
// whose job ended is released; one whose generation ended is told to rejoin.
// A worker that registered again goes back to its job (AssignAgain).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/job_manager.h"
#include "coordinator/rendezvous.h"
#include "coordinator/worker_registry.h"
#include "ringleader/v1/worker_service.pb.h"

namespace ringleader {

// Reads the job manager and the rendezvous and marks workers busy in the
// registry. Thread-safe: a job's room is decided under the assigner's lock
// (taken before the registry's), so two heartbeats never give a job more
// workers than it takes.
class JobAssigner {
 public:
  // `preempt_window`: what a member of a generation being preempted is told
  // (GenerationAbort.preempt_window_ms).
  JobAssigner(WorkerRegistry& workers, JobManager& jobs, Rendezvous& rendezvous,
              absl::Duration preempt_window = absl::Seconds(5))
      : workers_(workers),
        jobs_(jobs),
        rendezvous_(rendezvous),
        preempt_window_(preempt_window) {}

  // What a heartbeat `r` of registered worker `worker` is told about its
  // job: an assignment (to an idle worker, or again to one not joined yet),
  // an abort without rejoin (its job ended: the worker is released), an
  // abort with rejoin (the generation it reports ended), or nothing. The
  // lease is the caller's to fill in.
  v1::HeartbeatResponse Directive(const v1::WorkerInfo& worker,
                                  const v1::HeartbeatRequest& r);
  // A worker that registered again (RegisterRequest.resume_job_id) goes back
  // to `job_id` when the job runs and has room, or whatever the room when it
  // is still a member of the live generation (that generation trained to
  // the end, so a verdict against it ended nothing): then its rank, if
  // counted gone, counts again.
  void AssignAgain(const std::string& worker_id, const std::string& job_id);
  // The members of a generation adopted after a coordinator restart serve
  // its job again.
  void Adopt(const std::string& job_id,
             const std::vector<std::string>& worker_ids);
  // `worker_id` no longer serves `job_id` (it is gone).
  void Forget(const std::string& worker_id, const std::string& job_id);

  // Told of every assignment (an offer taken, an assignment again, an
  // adoption), under no lock of the assigner's: the job log admits the
  // worker (coordinator/log_store.h). Set before the first heartbeat.
  using AssignedHook = std::function<void(const std::string& job_id,
                                          const std::string& worker_id)>;
  void SetAssignedHook(AssignedHook hook) { on_assigned_ = std::move(hook); }

 private:
  enum class Take { kTaken, kNoRoom, kWorkerGone };
  // Assigns `worker_id` to `job` if the job has room and is not finishing.
  Take TakeWorker(const std::string& worker_id, const v1::Job& job);
  // Whether a rank of the job's live generation sent its final report.
  static bool Finishing(const v1::Job& job);
  // The directive for a worker assigned to `job_id`. Every heartbeat of a
  // training worker comes here: it reads the job's outline, not a copy of
  // its record (which grows with every rank's progress).
  v1::HeartbeatResponse AssignedDirective(const v1::WorkerInfo& worker,
                                          const v1::HeartbeatRequest& r);
  // The job `worker` served is over (or gone): it is released and told so.
  v1::HeartbeatResponse Release(const v1::WorkerInfo& worker,
                                const v1::HeartbeatRequest& r,
                                const absl::StatusOr<JobManager::Outline>& job);
  // An idle worker is given the oldest job that still wants workers.
  v1::HeartbeatResponse Offer(const std::string& worker_id);

  WorkerRegistry& workers_;
  JobManager& jobs_;
  Rendezvous& rendezvous_;
  const absl::Duration preempt_window_;
  AssignedHook on_assigned_;

  absl::Mutex mu_;
  // Workers each job has been given.
  absl::flat_hash_map<std::string, absl::flat_hash_set<std::string>> assigned_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_JOB_ASSIGNER_H_
