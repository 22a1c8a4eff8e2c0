#ifndef RINGLEADER_WORKER_COORDINATOR_CLIENT_H_
#define RINGLEADER_WORKER_COORDINATOR_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/worker_credential.h"
#include "grpcpp/grpcpp.h"
#include "ringleader/v1/worker_service.grpc.pb.h"
#include "worker/comm/collective_wait.h"
#include "worker/generation_watch.h"
#include "worker/timeline/phase.h"

namespace ringleader {

// The worker daemon's side of WorkerService. Registers (retrying with capped
// exponential backoff while the coordinator is unreachable), heartbeats from
// its own thread, re-registers when its lease was lost (for example after a
// coordinator restart), and hands directives to the daemon: assignments are
// queued for WaitForAssignment, generation aborts go to the abort hook at once
// (it aborts the communicator so no collective keeps waiting for a dead peer).
// Every RPC has a deadline; the job's calls are retried while the
// coordinator is down or restarting (see Retrying). Thread-safe.
class CoordinatorClient {
 public:
  struct Options {
    std::string hostname;
    std::string device = "cpu";
    int pid = 0;
    // RegisterRequest.process_id: random, one per process.
    std::string process_id;
    std::string address = "127.0.0.1";
    absl::Duration rpc_timeout = absl::Seconds(10);
    // Give up (the daemon exits, systemd restarts it) after this long
    // without reaching the coordinator.
    absl::Duration unreachable_timeout = absl::Minutes(5);
    absl::Duration max_backoff = absl::Seconds(5);
    // Makes a new channel to the coordinator. Set, it replaces the channel
    // after a few heartbeats in a row found the coordinator unreachable: a
    // channel that failed to connect retries only after seconds of
    // re-resolution backoff, and a restarted coordinator that adopted our
    // generation expects us within a lease.
    std::function<std::shared_ptr<grpc::Channel>()> new_channel;
    // Joins say the worker keeps its training state across generations
    // (JoinRendezvousRequest.keeps_state).
    bool keeps_state = false;
  };
  using AbortHook = std::function<void(const v1::GenerationAbort&)>;

  CoordinatorClient(std::shared_ptr<grpc::Channel> channel, Options options);
  ~CoordinatorClient();

  absl::Status Register();
  // Starts the heartbeat thread, and the thread that holds a
  // WatchGeneration stream open while the worker is in a generation
  // (GenerationWatch): both hand generation ends to `on_abort` (after
  // Register).
  void StartHeartbeats(AbortHook on_abort);
  void StopHeartbeats();
  // What heartbeats say the worker is doing, and the generation watched.
  // `keep_watch`: the watch of the generation left stays open until the
  // coordinator ends it. A worker about to rejoin keeps it: the
  // coordinator reads a watch its worker closed first as the process gone
  // (WatchCalls::WatchBroken), and the rejoin ends it anyway.
  void SetCurrent(const std::string& job_id, int64_t generation,
                  bool keep_watch = false);
  // The last optimizer step completed in the current generation: heartbeats
  // carry it as evidence that the worker trains (MemberLiveness).
  void SetStep(int64_t step) { step_ = step; }
  int64_t step() const { return step_; }
  // Times the worker's waits in collectives (WaitTimedCommunicator):
  // heartbeats carry how long the current one has lasted.
  CollectiveWaitClock* collective_wait() { return &collective_wait_; }
  // What the worker is doing (set at the trainer's timeline spans):
  // heartbeats carry its phase, how long it has been in it, its step and
  // bucket, and the recent step time.
  PhaseClock* phases() { return &phases_; }
  // The next assignment; DEADLINE_EXCEEDED after `timeout`; UNAVAILABLE once
  // the coordinator stayed unreachable past unreachable_timeout. From then
  // until SetCurrent("", 0) the worker serves that job, and assignments
  // that heartbeats bring meanwhile are dropped: they were answers to a
  // heartbeat sent before the worker joined (the coordinator says an
  // assignment again until the worker joins), and kept, they would send it
  // back into the job it just finished.
  absl::StatusOr<v1::JobAssignment> WaitForAssignment(absl::Duration timeout);

  absl::StatusOr<v1::JoinRendezvousResponse> Join(const std::string& job_id,
                                                  absl::Duration timeout);
  absl::Status Barrier(const std::string& job_id, int64_t generation,
                       int32_t rank, const std::string& name,
                       absl::Duration timeout);
  // NCCL bootstrap: rank 0 publishes its ncclUniqueId, the other ranks wait
  // up to `timeout` for it.
  absl::Status PublishNcclId(const std::string& job_id, int64_t generation,
                             int64_t comm_index, const std::string& unique_id);
  absl::StatusOr<std::string> FetchNcclId(const std::string& job_id,
                                          int64_t generation, int32_t rank,
                                          int64_t comm_index,
                                          absl::Duration timeout);
  absl::StatusOr<v1::ShardAssignment> GetShard(const v1::GetShardRequest& r);
  // A progress report and a checkpoint commit are answered idempotently (one
  // sent again after its answer was lost gets the first answer), so they
  // are retried through an outage (RetryingThroughOutage). `cancel` (may be
  // null): set by an owner that goes away, it ends the retries after the
  // try in flight.
  absl::Status ReportProgress(const v1::ReportProgressRequest& r,
                              const std::atomic<bool>* cancel = nullptr);
  absl::StatusOr<v1::CommitCheckpointResponse> CommitCheckpoint(
      const v1::CommitCheckpointRequest& r,
      const std::atomic<bool>* cancel = nullptr);
  absl::Status Leave(const std::string& reason);
  // WorkerService.AppendLogs as this worker, once (the log shipper keeps
  // what failed for its next round); `r.worker_id` is filled in.
  absl::Status AppendLogs(v1::AppendLogsRequest& r);
  // WorkerService.Preempt, waiting up to `timeout` for the verdict, tried
  // again while the coordinator is unreachable (restarting) within it.
  absl::StatusOr<v1::PreemptResponse> Preempt(const v1::PreemptRequest& r,
                                              absl::Duration timeout);

  // When the heartbeat thread last finished a beat, whatever its outcome
  // (InfiniteFuture() before StartHeartbeats, InfinitePast() once the thread
  // ended): the daemon's liveness for systemd's watchdog.
  absl::Time LastHeartbeatLoop() const;

  std::string worker_id() const;
  // The worker's id and token; every call after Register carries them.
  WorkerCredential credential() const;
  std::shared_ptr<grpc::Channel> channel() const;
  const Options& options() const { return options_; }

 private:
  // A context with `timeout` and the worker's credential (once registered).
  std::unique_ptr<grpc::ClientContext> Ctx(absl::Duration timeout) const;
  // Runs `attempt` until it succeeds or `retry` rejects its error, backing
  // off up to max_backoff, for at most unreachable_timeout.
  absl::Status WithBackoff(
      absl::FunctionRef<absl::Status()> attempt,
      absl::FunctionRef<bool(const absl::Status&)> retry) const;
  // Runs `rpc` (a fresh context with `timeout` each try) again while the
  // coordinator is unreachable (UNAVAILABLE: down or restarting), backing
  // off up to max_backoff, for at most unreachable_timeout. Only calls that
  // the coordinator treats as idempotent go through it.
  absl::Status Retrying(
      absl::string_view what, absl::Duration timeout,
      absl::FunctionRef<grpc::Status(grpc::ClientContext*)> rpc) const;
  // Like Retrying, and also while the coordinator does not answer in time
  // (DEADLINE_EXCEEDED: stopped, overloaded, or behind a partition that
  // drops packets, where a call never sees UNAVAILABLE), until `cancel` (may
  // be null) is set. Only for calls whose retry the coordinator answers as
  // it answered the first try: a try that timed out may have been applied.
  absl::Status RetryingThroughOutage(
      absl::string_view what, absl::Duration timeout,
      absl::FunctionRef<grpc::Status(grpc::ClientContext*)> rpc,
      const std::atomic<bool>* cancel) const;
  void HeartbeatLoop();
  // HeartbeatLoop's answers: an answered beat takes a new assignment or
  // passes an abort on; a lost lease (NOT_FOUND) registers again and ends
  // the generation the stale id was in.
  void OnBeatAnswered(const v1::HeartbeatResponse& resp)
      ABSL_LOCKS_EXCLUDED(mu_);
  void OnLeaseLost(const absl::Status& s, const std::string& stale_id)
      ABSL_LOCKS_EXCLUDED(mu_);
  // `resume_job_id`: the job to be assigned again (RegisterRequest).
  absl::Status RegisterOnce(const std::string& resume_job_id = "");
  // Registers again if the coordinator no longer knows `stale_id` (its lease
  // ran out past the silent limits, or a restarted coordinator kept no
  // record), asking to go back to `job_id`. The registration carries the
  // stale credential, so a coordinator that can still verify it gives the
  // process its id back. Idempotent across the heartbeat thread and a
  // caller that found out first: only the one that still holds `stale_id`
  // registers.
  absl::Status RegisterAgain(const std::string& stale_id,
                             const std::string& job_id);
  // Runs `call` (a job call that authenticates as this worker); when it
  // fails because the coordinator no longer knows the worker, registers
  // again (asking to go back to `job_id`) and runs it once more with the
  // new credential, at most twice. `what` names the call in the log.
  absl::Status AsRegistered(absl::string_view what, const std::string& job_id,
                            absl::FunctionRef<absl::Status()> call);
  // A heartbeat of `worker_id` saying what the worker does now.
  v1::HeartbeatRequest BeatRequest(const std::string& worker_id) const;
  // Whether the coordinator knows `worker_id` (a heartbeat answers
  // NOT_FOUND only for an unknown worker).
  bool Unknown(const std::string& worker_id);

  std::shared_ptr<v1::WorkerService::Stub> Stub() const;
  void ReplaceChannel();

  mutable absl::Mutex channel_mu_;
  std::shared_ptr<grpc::Channel> channel_ ABSL_GUARDED_BY(channel_mu_);
  std::shared_ptr<v1::WorkerService::Stub> stub_ ABSL_GUARDED_BY(channel_mu_);
  const Options options_;

  mutable absl::Mutex mu_;
  std::string worker_id_ ABSL_GUARDED_BY(mu_);
  std::string worker_token_ ABSL_GUARDED_BY(mu_);
  absl::Duration heartbeat_interval_ ABSL_GUARDED_BY(mu_) = absl::Seconds(1);
  std::string job_id_ ABSL_GUARDED_BY(mu_);
  int64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<v1::JobAssignment> assignment_ ABSL_GUARDED_BY(mu_);
  // The job taken from WaitForAssignment until the worker is idle again.
  std::string serving_job_ ABSL_GUARDED_BY(mu_);
  bool unreachable_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  AbortHook on_abort_;
  std::atomic<int64_t> last_beat_ns_{INT64_MAX};  // absl::ToUnixNanos
  std::atomic<int64_t> step_{0};
  CollectiveWaitClock collective_wait_;
  PhaseClock phases_;        // Idle until SetCurrent names a job.
  absl::Mutex register_mu_;  // Serializes RegisterAgain.
  std::thread heartbeat_thread_;
  // Set by StartHeartbeats, before any SetCurrent that needs it.
  std::unique_ptr<GenerationWatch> watch_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_COORDINATOR_CLIENT_H_
