#ifndef RINGLEADER_COORDINATOR_COORDINATOR_H_
#define RINGLEADER_COORDINATOR_COORDINATOR_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/timer_queue.h"
#include "coordinator/barrier_manager.h"
#include "coordinator/caller.h"
#include "coordinator/finish_line.h"
#include "coordinator/generation_watchers.h"
#include "coordinator/heartbeat_connections.h"
#include "coordinator/job_manager.h"
#include "coordinator/kv_store.h"
#include "coordinator/member_liveness.h"
#include "coordinator/rendezvous.h"
#include "coordinator/state_store.h"
#include "coordinator/worker_registry.h"
#include "ringleader/v1/user_service.pb.h"
#include "ringleader/v1/worker_service.pb.h"

namespace ringleader {

// How many committed checkpoints a generation is offered to resume from.
inline constexpr int kResumeCandidates = 3;

struct CoordinatorOptions {
  absl::Duration lease = absl::Seconds(3);
  absl::Duration heartbeat_interval = absl::Seconds(1);
  // How often leases are checked: a dead worker is noticed within
  // lease + sweep_interval.
  absl::Duration sweep_interval = absl::Milliseconds(200);
  // A member of a live generation whose lease lapsed stays while its
  // peers' steps show it training; without that evidence it is gone after
  // silent_member_limit. When no member is heard at all the coordinator
  // suspects its own link and keeps the generation for
  // silent_generation_limit (coordinator/member_liveness.h).
  absl::Duration silent_member_limit = absl::Seconds(30);
  absl::Duration silent_generation_limit = absl::Minutes(5);
  // A silent member is gone at once when its heard peers all report being
  // blocked in a collective for this long (it is hung).
  absl::Duration hung_wait = absl::Seconds(1);
  // Serve WatchGeneration: members hear at once that their generation
  // ended. Off, the call answers UNIMPLEMENTED, as an older coordinator's
  // does, and members learn at their next heartbeat (for comparisons).
  bool push_generation_end = true;
  // Waits (join, barrier, KV) without a timeout get this one; none waits
  // longer than max_wait.
  absl::Duration default_wait = absl::Minutes(5);
  absl::Duration max_wait = absl::Hours(1);
  size_t max_workers = 100'000;
  KvStore::Limits kv_limits;
  // Finished jobs kept (pruned at startup and whenever a job finishes).
  JobRetention retention;
};

// The composition root of the coordinator (after Ray's GcsServer): creates the
// managers, wires their hooks (a dead worker ends its generation; an ended
// generation drops its KV space and barriers; a finished job closes its
// rendezvous), and implements each RPC over them. The gRPC adapters only
// translate messages. Blocking calls take a callback and hold no thread.
// Thread-safe.
class Coordinator {
 public:
  template <typename T>
  using Reply = std::function<void(absl::StatusOr<T>)>;
  // Withdraws a pending wait whose caller went away (its call was
  // cancelled or passed its deadline): the wait is answered CANCELLED and
  // its state freed, so the rank may arrive again. Null when nothing waits.
  using Canceller = std::function<void()>;

  Coordinator(CoordinatorOptions options, StateStore* store, Clock* clock,
              TimerQueue* timers);
  ~Coordinator();

  // Recovers jobs from the store and starts the lease sweep.
  absl::Status Start();
  // Stops the lease sweep; pending callbacks still complete. The owner must
  // stop the timer queue before destroying the coordinator.
  void Stop();

  // WorkerService. Each call is judged by its `caller` (coordinator/
  // caller.h): Register records its certificate identity; a call naming a
  // worker (Heartbeat, JoinRendezvous, Leave) must carry that worker's
  // credential; a call naming a rank, the credential of the worker holding
  // it in the live generation; a generation's KV calls, a member's.
  // UNAUTHENTICATED without a valid credential, PERMISSION_DENIED for a
  // worker that does not hold what it names.
  absl::StatusOr<v1::RegisterResponse> Register(const Caller& caller,
                                                const v1::RegisterRequest& r);
  absl::StatusOr<v1::HeartbeatResponse> Heartbeat(
      const Caller& caller, const v1::HeartbeatRequest& r);
  // The waits return their Canceller.
  Canceller JoinRendezvous(const Caller& caller,
                           const v1::JoinRendezvousRequest& r,
                           Reply<v1::JoinRendezvousResponse> done);
  absl::Status KvSet(const Caller& caller, const v1::KvSetRequest& r);
  absl::StatusOr<v1::KvGetResponse> KvGet(const Caller& caller,
                                          const v1::KvGetRequest& r);
  Canceller KvWait(const Caller& caller, const v1::KvWaitRequest& r,
                   Reply<v1::KvWaitResponse> done);
  absl::StatusOr<v1::KvAddResponse> KvAdd(const Caller& caller,
                                          const v1::KvAddRequest& r);
  absl::Status PublishNcclId(const Caller& caller,
                             const v1::PublishNcclIdRequest& r);
  Canceller FetchNcclId(const Caller& caller, const v1::FetchNcclIdRequest& r,
                        Reply<v1::FetchNcclIdResponse> done);
  Canceller Barrier(const Caller& caller, const v1::BarrierRequest& r,
                    std::function<void(absl::Status)> done);
  absl::StatusOr<v1::ShardAssignment> GetShard(const Caller& caller,
                                               const v1::GetShardRequest& r);
  absl::Status ReportProgress(const Caller& caller,
                              const v1::ReportProgressRequest& r);
  absl::StatusOr<v1::CommitCheckpointResponse> CommitCheckpoint(
      const Caller& caller, const v1::CommitCheckpointRequest& r);
  absl::Status Leave(const Caller& caller, const v1::LeaveRequest& r);
  // Answers `answer` once, when the named generation ends (at once if it
  // has ended), or with the error that refuses the watch; the Canceller
  // withdraws it (its call went away).
  Canceller WatchGeneration(const Caller& caller,
                            const v1::WatchGenerationRequest& r,
                            GenerationWatchers::Answer answer);
  // The stream of a watch that WatchGeneration accepted went away before
  // the coordinator ended it: the worker's process exited (a kill -9 closes
  // its connections at once; a partition does not, and is left to the
  // lease). The worker is gone as if it had left: its generation ends now
  // (one that trained to its last step goes on without it), or, if it has
  // ended, the next one stops waiting for it, and its place in the job is
  // free for a replacement. A worker that finished its job, one whose
  // heartbeats within its lease did not all come over the stream's
  // connection (none did: a partition, a stopped process; another did: it
  // replaced its channel after a partition, and the old connection's reset
  // is no death), or a coordinator that is stopping, ends nothing.
  void WatchBroken(const Caller& caller, const v1::WatchGenerationRequest& r);

  // UserService.
  absl::StatusOr<v1::SubmitJobResponse> SubmitJob(
      const v1::SubmitJobRequest& r);
  absl::StatusOr<v1::Job> GetJob(const v1::GetJobRequest& r);
  absl::StatusOr<v1::ListJobsResponse> ListJobs(const v1::ListJobsRequest& r);
  absl::StatusOr<v1::Job> CancelJob(const v1::CancelJobRequest& r);
  absl::StatusOr<v1::DeleteJobResponse> DeleteJob(
      const v1::DeleteJobRequest& r);
  absl::StatusOr<uint64_t> WatchJob(const std::string& job_id,
                                    JobManager::Watcher watcher);
  void UnwatchJob(const std::string& job_id, uint64_t token);
  v1::ListWorkersResponse ListWorkers();

  // For tests and metrics.
  JobManager& jobs() { return jobs_; }
  Rendezvous& rendezvous() { return rendezvous_; }
  KvStore& kv() { return kv_; }
  BarrierManager& barriers() { return barriers_; }
  WorkerRegistry& workers() { return workers_; }
  GenerationWatchers& generation_watchers() { return watchers_; }
  // Runs one lease sweep now (the timer calls it periodically).
  void SweepLeases();

 private:
  Canceller CancelKvWait(const GenerationKey& gen, KvStore::WaitId id);
  // What the coordinator fixes when a generation forms.
  struct GenerationInfo {
    int64_t number = 0;
    // Where the generation may resume, newest first (empty: from scratch),
    // and the index of the one its ranks loaded (-1 until a rank says).
    std::vector<v1::CheckpointRecord> resume_candidates;
    int resumed = -1;
    // Dataset size per split (0: train, 1: test) as the first rank saw it.
    int64_t dataset_size[2] = {-1, -1};
  };

  absl::Time Deadline(int64_t timeout_ms) const;
  absl::Status OpenRendezvous(const v1::Job& job);
  // A worker waits to join the live generation of `job_id`: if a member
  // keeps its state (memory recovery), the generation grows now, losing no
  // work (the newcomer receives the state from a peer); otherwise at its
  // next checkpoint commit.
  void GrowForNewcomer(const std::string& job_id);
  // Tells the managers that a worker is gone.
  void OnWorkerGone(const v1::WorkerInfo& worker, const std::string& reason);
  void OnGenerationFormed(const std::string& job_id,
                          const Rendezvous::Generation& gen);
  // What a generation that is over leaves behind: its stored record (so a
  // restarted coordinator never adopts it), its KV space and its barriers
  // (their waiters fail with `why`).
  void DropGeneration(const std::string& job_id, int64_t generation,
                      const std::string& why);
  void OnGenerationEnded(const std::string& job_id, int64_t generation,
                         const std::string& reason);
  // A scale-up ended the generation: no restart is counted.
  void OnGenerationResized(const std::string& job_id, int64_t generation,
                           const std::string& reason);
  // Tells the generation's watching members (WatchGeneration) it ended.
  void PushGenerationEnd(const std::string& job_id, int64_t generation,
                         const std::string& reason);
  void OnJobFinished(const v1::Job& job);
  // Writes the generation's members to the store, so that a restarted
  // coordinator can adopt it.
  void SaveGeneration(const std::string& job_id,
                      const Rendezvous::Generation& gen);
  // After a restart: makes the stored generation of a RUNNING job live
  // again, with its members registered under their old ids.
  absl::Status AdoptGeneration(const v1::GenerationRecord& record);
  // Checks that `generation` is live and `rank` belongs to it.
  absl::Status CheckMember(const std::string& job_id, int64_t generation,
                           int32_t rank);
  // The caller checks (coordinator_callers.cc): the caller is `worker_id`;
  // it is the worker holding `rank` of live `generation`; it is one of the
  // generation's members. After CheckMember (a generation that ended is
  // ABORTED whoever asks).
  absl::Status CheckWorkerCaller(const Caller& caller,
                                 const std::string& worker_id);
  absl::Status CheckRankHolder(const Caller& caller, const std::string& job_id,
                               int64_t generation, int32_t rank);
  absl::Status CheckGenerationCaller(const Caller& caller,
                                     const std::string& job_id,
                                     int64_t generation);
  // CheckMember, then CheckRankHolder.
  absl::Status CheckRank(const Caller& caller, const std::string& job_id,
                         int64_t generation, int32_t rank);
  // CheckMember, then CheckGenerationCaller.
  absl::Status CheckGeneration(const Caller& caller, const std::string& job_id,
                               int64_t generation);
  // The training split's size as the generation's first GetShard, progress
  // report or commit that named one saw it (-1: not yet).
  int64_t TrainSize(const std::string& job_id, int64_t generation);
  // Whether a rank of the job's live generation sent its final report.
  static bool Finishing(const v1::Job& job);
  // Assigns a worker that registered again to the job it was in, when the
  // job runs and has room (RegisterRequest.resume_job_id).
  void AssignAgain(const std::string& worker_id, const std::string& job_id);
  enum class Take { kTaken, kNoRoom, kWorkerGone };
  // Assigns `worker_id` to `job` if the job has room and is not finishing.
  Take TakeWorker(const std::string& worker_id, const v1::Job& job);
  // The generation's resume choice: the candidate `resume_checkpoint_id`
  // names (0: the first), fixed by the first rank that names one (in
  // GetShard, or rank 0's commits), which marks the newer candidates bad
  // and moves the job's last_checkpoint back to it, so that the
  // generation's commits follow it. Null when the generation has no
  // candidates (a fresh start, or adopted after a restart: its ranks had
  // resumed before). INVALID_ARGUMENT for an id that is no candidate,
  // FAILED_PRECONDITION when ranks name different ones.
  absl::StatusOr<const v1::CheckpointRecord*> ResumeChoiceLocked(
      GenerationInfo& info, const std::string& job_id, int64_t generation,
      int32_t rank, int64_t resume_checkpoint_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records the size of a split that `rank` sees; the first fixes it, and
  // another one is FAILED_PRECONDITION naming both.
  absl::Status NoteDatasetSizeLocked(GenerationInfo& info, bool test_split,
                                     int32_t rank, int64_t dataset_size)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // For a generation adopted after a restart, whose resume candidates were
  // not kept: takes them again from the job when no commit of the
  // generation went through yet and `resumed_checkpoint_id` is among them.
  // False when there is nothing left to apply.
  bool RecallOfferLocked(GenerationInfo& info, const std::string& job_id,
                         int64_t resumed_checkpoint_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // What a progress report or commit of live `generation` says about it:
  // the training split's size (0: not said) and the checkpoint it resumed
  // from (0: not said). The workers plan their shards and check their
  // dataset sizes among themselves; the coordinator learns these facts from
  // the queued calls, for its range checks and its checkpoint history.
  absl::Status NoteTrainingFacts(const std::string& job_id, int64_t generation,
                                 int32_t rank, int64_t train_size,
                                 int64_t resumed_checkpoint_id);
  // True when the job settled `r` (a final report) already: the caller is
  // the worker whose final report for that rank of that generation the job
  // counted, or the one that rank's worker was when the job finished
  // without it (it was judged gone; its report came too late to count).
  bool FinalReportSettled(const Caller& caller,
                          const v1::ReportProgressRequest& r);
  // What a heartbeat or report of `worker_id` in live `generation` of
  // `job_id` says of how far the generation trained: at `step` (of
  // `total_steps`, 0: not said). The generation is kTrained once every
  // member reached the last step.
  void NoteStep(const std::string& job_id, int64_t generation,
                const std::string& worker_id, int64_t step,
                int64_t total_steps = 0);
  // The directive for a heartbeat of `worker`.
  v1::HeartbeatResponse Directive(const v1::WorkerInfo& worker,
                                  const v1::HeartbeatRequest& r);
  void ScheduleSweep();

  const CoordinatorOptions options_;
  StateStore* const store_;
  Clock* const clock_;
  TimerQueue* const timers_;
  WorkerRegistry workers_;
  JobManager jobs_;
  Rendezvous rendezvous_;
  KvStore kv_;
  BarrierManager barriers_;
  MemberLiveness liveness_;
  FinishLine finish_line_;
  // Judges a broken watch stream (WatchBroken).
  HeartbeatConnections connections_;
  GenerationWatchers watchers_;

  absl::Mutex mu_;
  // Workers each job has been given (assignment is decided under mu_).
  absl::flat_hash_map<std::string, absl::flat_hash_set<std::string>> assigned_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, GenerationInfo> generations_
      ABSL_GUARDED_BY(mu_);
  bool sweeping_ ABSL_GUARDED_BY(mu_) = false;
  TimerQueue::TimerId sweep_timer_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_COORDINATOR_H_
