#ifndef RINGLEADER_COORDINATOR_COORDINATOR_H_
#define RINGLEADER_COORDINATOR_COORDINATOR_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/timer_queue.h"
#include "coordinator/barrier_manager.h"
#include "coordinator/bootstrap_calls.h"
#include "coordinator/caller_checks.h"
#include "coordinator/finish_line.h"
#include "coordinator/generation_events.h"
#include "coordinator/generation_facts.h"
#include "coordinator/generation_watchers.h"
#include "coordinator/heartbeat_connections.h"
#include "coordinator/history_calls.h"
#include "coordinator/job_assigner.h"
#include "coordinator/job_history.h"
#include "coordinator/job_manager.h"
#include "coordinator/join_calls.h"
#include "coordinator/kv_store.h"
#include "coordinator/lease_sweep.h"
#include "coordinator/log_calls.h"
#include "coordinator/log_store.h"
#include "coordinator/member_liveness.h"
#include "coordinator/preempt_calls.h"
#include "coordinator/preemption.h"
#include "coordinator/rendezvous.h"
#include "coordinator/stall_sweep.h"
#include "coordinator/stall_watch.h"
#include "coordinator/state_store.h"
#include "coordinator/training_calls.h"
#include "coordinator/user_calls.h"
#include "coordinator/watch_calls.h"
#include "coordinator/worker_calls.h"
#include "coordinator/worker_registry.h"
#include "ringleader/v1/state.pb.h"

namespace ringleader {

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
  // When ranks waiting in a collective are said to wait for another, and
  // how silent a member must be to be named as silent
  // (coordinator/stall_watch.h); checked every sweep_interval for watchers.
  StallWatch::Options stall;
  // Serve WatchGeneration: members hear at once that their generation
  // ended. Off, the call answers UNIMPLEMENTED, as an older coordinator's
  // does, and members learn at their next heartbeat (for comparisons).
  bool push_generation_end = true;
  // Waits (join, barrier, KV) without a timeout get this one; none waits
  // longer than max_wait.
  absl::Duration default_wait = absl::Minutes(5);
  absl::Duration max_wait = absl::Hours(1);
  size_t max_workers = 100'000;
  // A generation's preemption (coordinator/preemption.h): the window from
  // its first signalled member to a PARTIAL verdict, and how long rank 0's
  // checkpoint may take after a WHOLE one.
  Preemption::Options preemption;
  KvStore::Limits kv_limits;
  // Finished jobs kept (pruned at startup and whenever a job finishes).
  JobRetention retention;
  // What the jobs' logs may hold (coordinator/log_store.h).
  LogStore::Limits log_limits;
  // Points of training history kept per job (coordinator/job_history.h).
  int64_t history_points = kDefaultHistoryPoints;
};

// The composition root of the coordinator (after Ray's GcsServer): creates
// the managers, which keep the books and never call each other, and the
// objects that answer the calls, each over the managers it needs; wires the
// hooks between them; recovers from the store at Start (adopting the
// generations that were live) and runs the lease sweep until Stop. It
// answers no call itself: the gRPC adapters (coordinator/server/) call the
// objects below. The hooks: a worker gone leaves the liveness books, its
// job's assignment and its generation; a formed generation fixes its facts
// and is stored; an ended one is pushed to its watching members and leaves
// no stored record, KV space or barriers behind; a generation trained to its
// last step is marked so; a finished job closes its rendezvous. Blocking
// calls take a callback and hold no thread. Thread-safe.
class Coordinator {
 public:
  Coordinator(CoordinatorOptions options, StateStore* store, Clock* clock,
              TimerQueue* timers);
  ~Coordinator();

  // Recovers jobs from the store, adopts their live generations and starts
  // the lease sweep.
  absl::Status Start();
  // Stops the lease sweep and ends the open generation watches; pending
  // callbacks still complete. The owner must stop the timer queue before
  // destroying the coordinator.
  void Stop();

  // WorkerService, by family of calls. Each call is judged by its `caller`
  // (coordinator/caller.h, coordinator/caller_checks.h).
  WorkerCalls& worker_calls() { return worker_calls_; }
  JoinCalls& join_calls() { return join_calls_; }
  BootstrapCalls& bootstrap_calls() { return bootstrap_calls_; }
  TrainingCalls& training_calls() { return training_calls_; }
  WatchCalls& watch_calls() { return watch_calls_; }
  PreemptCalls& preempt_calls() { return preempt_calls_; }
  // UserService.
  UserCalls& user_calls() { return user_calls_; }
  // Both: workers append to a job's log, users read it.
  LogCalls& log_calls() { return log_calls_; }
  HistoryCalls& history_calls() { return history_calls_; }

  // For tests and metrics.
  JobManager& jobs() { return jobs_; }
  JobHistory& history() { return history_; }
  Rendezvous& rendezvous() { return rendezvous_; }
  KvStore& kv() { return kv_; }
  BarrierManager& barriers() { return barriers_; }
  WorkerRegistry& workers() { return workers_; }
  GenerationWatchers& generation_watchers() { return watchers_; }
  Preemption& preemption() { return preemption_; }
  LogStore& logs() { return logs_; }
  // Each job's generations formed, ended, resized and preempted (the
  // dashboard's job page).
  const GenerationEvents& generation_events() const {
    return generation_events_;
  }
  // Whether a job still has work in flight that a draining coordinator
  // waits for: a generation being preempted, or one running or forming
  // (whose members may be about to be preempted).
  bool HasLiveWork() const;
  // Sweep() runs one lease sweep now (the timer runs it periodically).
  LeaseSweep& lease_sweep() { return lease_sweep_; }
  StallWatch& stalls() { return stalls_; }
  StallSweep& stall_sweep() { return stall_sweep_; }

 private:
  // Start: the stored generations of the jobs that are still live are
  // adopted (or dropped), those of other jobs deleted.
  absl::Status Recover();
  // After a restart: the stored generation of a RUNNING job is made live
  // again, its members registered under their old ids; for other jobs, or
  // when it cannot be adopted, its record goes (its members rejoin).
  void AdoptOrDrop(const v1::Job& job, const v1::GenerationRecord& record);
  absl::Status AdoptGeneration(const v1::GenerationRecord& record);
  absl::Status OpenRendezvous(const v1::Job& job);

  // The hooks. The call handlers and the lease sweep reach the first two
  // through these.
  WorkerGoneHook GoneHook();
  StepHook StepHeardHook();
  void OnWorkerGone(const v1::WorkerInfo& worker, const std::string& reason);
  void OnStepHeard(const std::string& job_id, int64_t generation,
                   const std::string& worker_id, int64_t step,
                   int64_t total_steps);
  void OnGenerationFormed(const std::string& job_id,
                          const Rendezvous::Generation& gen);
  void OnGenerationEnded(const std::string& job_id, int64_t generation,
                         const std::string& reason);
  // A scale-up ended the generation: no restart is counted.
  void OnGenerationResized(const std::string& job_id, int64_t generation,
                           const std::string& reason);
  // A held generation ended as its preemption decided: no restart counted.
  void OnGenerationPreempted(const std::string& job_id, int64_t generation,
                             const std::string& reason, bool whole);
  Preemption::Hooks PreemptionHooks();
  // A round stayed below min_workers past its timeout: the job fails.
  void OnRendezvousTimedOut(const std::string& job_id, const std::string& why);
  // A member of a generation that trained to its last step left without
  // its final report: the job finishes without it.
  void OnRankGone(const std::string& job_id, int64_t generation, int32_t rank,
                  const std::string& worker_id, const std::string& reason);
  void OnJobFinished(const v1::Job& job);
  // A job read now (GetJob) shows the rank its ranks wait for, timed now.
  void ShowWaitingFor(v1::Job& job) const;

  // What the end of generation `generation` (`how`: "ended", "resized")
  // leaves behind: its watching members are told first (their notice must
  // not wait for the store's writes: a heartbeat answered meanwhile would
  // beat it by those milliseconds), then its stored record (so a restarted
  // coordinator never adopts it), its KV space and its barriers go (their
  // waiters fail with the reason).
  void EndGeneration(const std::string& job_id, int64_t generation,
                     const std::string& how, const std::string& reason);
  // Writes the generation's members to the store, so that a restarted
  // coordinator can adopt it.
  void SaveGeneration(const std::string& job_id,
                      const Rendezvous::Generation& gen);
  // Deletes a stored generation record (-1: every one of the job's).
  void DeleteStoredGeneration(const std::string& job_id, int64_t generation);

  const CoordinatorOptions options_;
  StateStore* const store_;
  Clock* const clock_;
  // The managers.
  WorkerRegistry workers_;
  JobManager jobs_;
  JobHistory history_;
  Rendezvous rendezvous_;
  KvStore kv_;
  BarrierManager barriers_;
  MemberLiveness liveness_;
  StallWatch stalls_;
  FinishLine finish_line_;
  GenerationEvents generation_events_;
  // Judges a broken watch stream (WatchCalls::WatchBroken).
  HeartbeatConnections connections_;
  GenerationWatchers watchers_;
  // Decisions across managers, each under its own lock where it keeps state.
  CallerChecks checks_;
  JobAssigner assigner_;
  GenerationFacts facts_;
  // The calls.
  WorkerCalls worker_calls_;
  JoinCalls join_calls_;
  BootstrapCalls bootstrap_calls_;
  TrainingCalls training_calls_;
  WatchCalls watch_calls_;
  UserCalls user_calls_;
  // The jobs' logs, and the calls that append and read them.
  LogStore logs_;
  LogCalls log_calls_;
  HistoryCalls history_calls_;
  // Preemption windows and verdicts, and the call that reaches them.
  Preemption preemption_;
  PreemptCalls preempt_calls_;
  LeaseSweep lease_sweep_;
  StallSweep stall_sweep_;
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_COORDINATOR_H_
