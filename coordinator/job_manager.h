#ifndef RINGLEADER_COORDINATOR_JOB_MANAGER_H_
#define RINGLEADER_COORDINATOR_JOB_MANAGER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "coordinator/job_listing.h"
#include "coordinator/progress_aggregator.h"
#include "coordinator/state_store.h"
#include "ringleader/v1/history.pb.h"
#include "ringleader/v1/job.pb.h"
#include "ringleader/v1/worker_service.pb.h"

namespace ringleader {

// How many finished jobs the coordinator keeps; the oldest finished (by the
// time they finished) go first. Live jobs are never pruned.
struct JobRetention {
  // Keep at most this many finished jobs; 0: no limit.
  int64_t max_finished = 0;
  // Forget a finished job this long after it finished; infinite: never.
  absl::Duration max_age = absl::InfiniteDuration();
};

// One page of ListPage.
struct JobPage {
  std::vector<v1::Job> jobs;    // Summaries (JobSummary).
  std::string next_page_token;  // Empty after the last page.
};

// Jobs and their state machine:
//   PENDING -> RENDEZVOUS -> RUNNING -> (RESTARTING -> RENDEZVOUS ...)
//   -> SUCCEEDED | FAILED | CANCELLED; RUNNING -> PREEMPTED -> RENDEZVOUS
//   when every worker was preempted (PREEMPTED is not terminal).
// The restart budget counts per job. Every state change is written to the
// StateStore before it is visible, and watchers get a snapshot after each
// change. The manager never calls other managers; the coordinator wires the
// finished hook. Thread-safe; hooks and watchers run without the lock.
class JobManager {
 public:
  // `version` increases with every change of the job: a watcher that may see
  // snapshots out of order keeps the highest.
  using Watcher = std::function<void(const v1::Job&, uint64_t version)>;
  using FinishedHook = std::function<void(const v1::Job&)>;
  // A training report of rank 0 made a history point
  // (ProgressAggregator::Point).
  using HistoryHook =
      std::function<void(const std::string& job_id, v1::HistoryPoint point)>;
  // A job was deleted (DeleteJob, or pruned by the retention).
  using DeletedHook = std::function<void(const std::string& job_id)>;

  JobManager(StateStore* store, Clock* clock, JobRetention retention = {});

  // Loads jobs from the store (after a restart), prunes the finished ones
  // beyond the retention, and returns the live ones.
  // A RUNNING job whose generation is in `adoptable` (job id -> generation
  // number, as stored) keeps running: the coordinator adopts that
  // generation. Other live jobs come back RESTARTING: their workers rejoin.
  absl::StatusOr<std::vector<v1::Job>> Recover(
      const absl::flat_hash_map<std::string, int64_t>& adoptable = {});
  void SetFinishedHook(FinishedHook hook) { on_finished_ = std::move(hook); }
  // Set both before the first call, as the finished hook.
  void SetHistoryHook(HistoryHook hook) { on_history_point_ = std::move(hook); }
  void SetDeletedHook(DeletedHook hook) { on_deleted_ = std::move(hook); }

  // Applies defaults, validates (INVALID_ARGUMENT naming the field), stores.
  absl::StatusOr<v1::Job> Submit(v1::JobSpec spec);
  absl::StatusOr<v1::Job> Get(const std::string& job_id) const;
  // A job's state and largest size, without copying its record (which
  // holds every rank's progress): for calls every worker makes often.
  struct Outline {
    v1::JobState state = v1::JOB_STATE_UNSPECIFIED;
    int32_t max_workers = 0;
  };
  absl::StatusOr<Outline> OutlineOf(const std::string& job_id) const;
  // Whether the job's record names `worker_id` as one of its ranks (false
  // for no such job): a record that survives a coordinator restart.
  bool RanksName(const std::string& job_id, const std::string& worker_id) const;
  // Jobs in creation order (JobKey), filtered by state when `states` is not
  // empty.
  std::vector<v1::Job> List(const std::vector<v1::JobState>& states) const;
  // At most `page_size` summaries (EffectivePageSize) in List's order, after
  // the job `page_token` names (empty: from the first). INVALID_ARGUMENT for
  // a negative size or a bad token (DecodePageToken).
  absl::StatusOr<JobPage> ListPage(const std::vector<v1::JobState>& states,
                                   int32_t page_size,
                                   const std::string& page_token) const;
  // Not terminal, in creation order.
  std::vector<v1::Job> Active() const;
  absl::StatusOr<v1::Job> Cancel(const std::string& job_id);
  absl::Status Fail(const std::string& job_id, const std::string& message);
  // Forgets a finished job, in the store and here. FAILED_PRECONDITION while
  // it is live, NOT_FOUND if there is no such job.
  absl::Status Delete(const std::string& job_id);
  // Deletes the finished jobs beyond the retention; how many. Runs at
  // Recover and after every job that finishes.
  absl::StatusOr<int> Prune();
  // Restarts spent by the jobs deleted since this process started: what
  // a restart counter that sums over List() must add to never go down.
  int64_t DeletedJobRestarts() const;

  // Rendezvous events. The rendezvous runs its hooks without its lock, on
  // whichever thread changed it, so they may arrive in any order: each
  // event is applied by its generation number, not by its arrival. The job
  // is RUNNING generation g only if g formed and no end of g or a newer
  // generation arrived; an event about a generation older than the one the
  // job runs changes no state (a failure still counts a restart).
  absl::Status OnJoin(const std::string& job_id);
  absl::Status OnGenerationFormed(const std::string& job_id, int64_t generation,
                                  int32_t world_size);
  // Counts a restart; fails the job once the budget is spent.
  absl::Status OnGenerationEnded(const std::string& job_id, int64_t generation,
                                 const std::string& reason);
  // A generation ended for a membership change (a scale-up): the job
  // restarts at the bigger size without spending its restart budget.
  absl::Status OnGenerationResized(const std::string& job_id,
                                   int64_t generation,
                                   const std::string& reason);

  // A generation ended for a preemption (coordinator/preemption.h): with
  // `whole`, every member left and the job is PREEMPTED until workers come
  // back; otherwise the job restarts without the members that left. Neither
  // spends the restart budget.
  absl::Status OnGenerationPreempted(const std::string& job_id,
                                     int64_t generation,
                                     const std::string& reason, bool whole);

  // A rank's report. The job succeeds when every rank sent its final one.
  // InvalidArgument for a negative or non-finite value, or metric sums that
  // break CheckMetricSums (common/eval_metrics.h), before anything changes.
  absl::Status ReportProgress(const v1::ReportProgressRequest& report,
                              const std::string& worker_id);
  // Rank `rank` of `generation`, which trained to its last step, left
  // without its final report (Rendezvous' gone hook): the job finishes
  // without it, SUCCEEDED once every other rank reported or is gone too,
  // its final metrics pooled over the ranks that reported. Nothing changes
  // unless the job runs that generation.
  absl::Status RankGone(const std::string& job_id, int64_t generation,
                        int32_t rank, const std::string& worker_id,
                        const std::string& reason);
  // Rank `rank` of `generation`, counted gone, is back (its process
  // registered again): the job waits for its final report again.
  absl::Status RankBack(const std::string& job_id, int64_t generation,
                        int32_t rank);
  // True if `worker_id` has sent its final report for the job's current
  // generation: it may go away without ending the generation.
  bool WorkerFinished(const std::string& job_id,
                      const std::string& worker_id) const;
  // The worker whose final report for `rank` of `generation` the job
  // counted (it is that generation's job, and the rank finished), or, once
  // the job SUCCEEDED without that rank's report, the worker it was gone
  // with; NOT_FOUND otherwise. Lets a final report sent again after the
  // job finished be answered as the first one was, and one that comes too
  // late to count be answered as settled.
  absl::StatusOr<std::string> FinalReporter(const std::string& job_id,
                                            int64_t generation,
                                            int32_t rank) const;
  // Records `record` as the job's last checkpoint. The same step and path as
  // the last one again (a retry whose answer was lost) is that record, not
  // a second one; an older step than the last is FAILED_PRECONDITION.
  absl::StatusOr<v1::CheckpointRecord> CommitCheckpoint(
      const std::string& job_id, v1::CheckpointRecord record);
  // Where a new generation may resume: up to `limit` committed checkpoints,
  // newest first, from the job's last_checkpoint back, bad ones excluded
  // (empty when the job starts from scratch).
  absl::StatusOr<std::vector<v1::CheckpointRecord>> ResumeCandidates(
      const std::string& job_id, int limit) const;
  // Every rank of a generation resumed from `chosen`, skipping the newer
  // `unreadable` ones: those are marked bad, and the job's last_checkpoint
  // goes back to `chosen` so that the generation's commits follow it.
  absl::Status ResumedFrom(const std::string& job_id,
                           const v1::CheckpointRecord& chosen,
                           const std::vector<v1::CheckpointRecord>& unreadable);

  // Ranks of the job wait for `waiting_for` (null: no longer): its
  // watchers see it. Kept in memory only (a restarted coordinator learns it
  // again from the heartbeats); a finished job shows none.
  absl::Status SetWaitingFor(const std::string& job_id,
                             const v1::WaitingFor* waiting_for);

  // Calls `watcher` now and after each change of the job; returns a token.
  absl::StatusOr<uint64_t> Watch(const std::string& job_id, Watcher watcher);
  void Unwatch(const std::string& job_id, uint64_t token);

 private:
  struct Entry {
    v1::Job job;
    ProgressAggregator progress;
    std::map<uint64_t, Watcher> watchers;
    uint64_t version = 0;
    // The highest generation whose end was applied. The rendezvous runs its
    // hooks outside its lock, so a generation's end can arrive before its
    // formation: the late formation must not make the job RUNNING.
    int64_t ended_through = 0;
  };
  // What to run after a change, outside the lock.
  struct Notice {
    v1::Job snapshot;
    uint64_t version = 0;
    std::vector<Watcher> watchers;
    bool finished = false;
  };

  absl::StatusOr<Entry*> FindLocked(const std::string& job_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Moves the job to `to` if the state machine allows it and persists it.
  absl::Status TransitionLocked(Entry& e, v1::JobState to,
                                const std::string& message)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status PersistLocked(Entry& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Notice NoticeLocked(Entry& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Deliver(const Notice& notice);
  // After a report or a gone rank: SUCCEEDED once every rank of the
  // generation finished or is gone (saying which are missing), else
  // persisted when `persist`. Whether the job changed.
  absl::StatusOr<bool> SettleLocked(Entry& e, bool persist)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes a finished job from the store, then from memory; its id waits
  // in deleted_ for TellDeleted.
  absl::Status DeleteLocked(const std::string& job_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Runs the deleted hook for the jobs deleted since the last call, without
  // the lock.
  void TellDeleted() ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<int> PruneLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Finds the job and runs `change` on it under mu_ (so it may call the
  // *Locked helpers). `change` says whether it changed the job; if so, the
  // job's watchers and the finished hook see the result outside the lock.
  // `after`, when given, gets the job as it is afterwards.
  absl::Status Update(const std::string& job_id,
                      absl::FunctionRef<absl::StatusOr<bool>(Entry&)> change,
                      v1::Job* after = nullptr);
  // For `change`: a change that ends in `s` (a transition or persisting it).
  static absl::StatusOr<bool> Changed(const absl::Status& s) {
    if (!s.ok()) return s;
    return true;
  }

  StateStore* const store_;
  Clock* const clock_;
  const JobRetention retention_;
  FinishedHook on_finished_;
  HistoryHook on_history_point_;
  DeletedHook on_deleted_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> jobs_ ABSL_GUARDED_BY(mu_);
  // Every job's key: listing order.
  std::set<JobKey> order_ ABSL_GUARDED_BY(mu_);
  uint64_t next_token_ ABSL_GUARDED_BY(mu_) = 1;
  int64_t deleted_restarts_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> deleted_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_JOB_MANAGER_H_
