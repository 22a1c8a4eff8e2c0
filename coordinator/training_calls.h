#ifndef RINGLEADER_COORDINATOR_TRAINING_CALLS_H_
#define RINGLEADER_COORDINATOR_TRAINING_CALLS_H_

// What a generation's ranks tell the coordinator while they train: their
// progress (the final report among it), rank 0's checkpoint commits, and
// GetShard, which the workers no longer need (they plan their shards
// themselves with the same function, common/shard_plan.h) but tools still
// call. Each is checked against the worker holding the rank and against the
// job's bounds (coordinator/report_checks.h). A commit is also where a
// generation with room grows for the workers waiting to join it.
//
// Reports and commits are queued by the workers through a coordinator
// outage and sent again when an answer was lost: a final report that
// counted, sent again, gets the same answer even once the job is over
// (docs/design-notes.md, "The coordinator is not on the training path").

#include "coordinator/caller.h"
#include "coordinator/caller_checks.h"
#include "coordinator/generation_facts.h"
#include "coordinator/hooks.h"
#include "coordinator/job_manager.h"
#include "coordinator/rendezvous.h"
#include "coordinator/worker_registry.h"
#include "ringleader/v1/worker_service.pb.h"

namespace ringleader {

// Holds no state of its own. Thread-safe.
class TrainingCalls {
 public:
  // `step_heard` learns each step a rank reports.
  TrainingCalls(const CallerChecks& checks, const WorkerRegistry& workers,
                JobManager& jobs, Rendezvous& rendezvous,
                GenerationFacts& facts, StepHook step_heard)
      : checks_(checks),
        workers_(workers),
        jobs_(jobs),
        rendezvous_(rendezvous),
        facts_(facts),
        step_heard_(std::move(step_heard)) {}

  absl::StatusOr<v1::ShardAssignment> GetShard(const Caller& caller,
                                               const v1::GetShardRequest& r);
  // A report with fatal_error fails the job with it. A final report moves
  // the generation to Rendezvous::Stage::kFinishing before it is recorded:
  // from then on nothing ends it.
  absl::Status ReportProgress(const Caller& caller,
                              const v1::ReportProgressRequest& r);
  // Rank 0 only. The same step and path again (a retry whose answer was
  // lost) is the first record.
  absl::StatusOr<v1::CommitCheckpointResponse> CommitCheckpoint(
      const Caller& caller, const v1::CommitCheckpointRequest& r);

 private:
  // True when the job settled `r` (a final report) already: the caller is
  // the worker whose final report for that rank of that generation the job
  // counted, or the one that rank's worker was when the job finished
  // without it (it was judged gone; its report came too late to count).
  bool FinalReportSettled(const Caller& caller,
                          const v1::ReportProgressRequest& r) const;
  // Notes the facts `r` carries about its generation (GenerationFacts::
  // NoteTrainingFacts), then holds its numbers to the job's bounds with
  // `check`, which needs the training split's size the facts give.
  template <typename Request>
  absl::Status NoteAndCheck(const Request& r, int64_t resumed_checkpoint_id,
                            absl::Status (*check)(const v1::JobSpec&, int64_t,
                                                  const Request&));
  // Records the commit once its caller and numbers are checked.
  absl::StatusOr<v1::CheckpointRecord> Commit(
      const Caller& caller, const v1::CommitCheckpointRequest& r);
  // After a commit of epoch `epoch`: ends the generation for the workers
  // waiting to join it (or says one waits, for a commit written in the
  // background, which the ranks trained past).
  void GrowAtCommit(const v1::CommitCheckpointRequest& r, int64_t epoch,
                    v1::CommitCheckpointResponse& out);

  const CallerChecks& checks_;
  const WorkerRegistry& workers_;
  JobManager& jobs_;
  Rendezvous& rendezvous_;
  GenerationFacts& facts_;
  const StepHook step_heard_;
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_TRAINING_CALLS_H_
