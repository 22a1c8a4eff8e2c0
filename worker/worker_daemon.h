#ifndef RINGLEADER_WORKER_WORKER_DAEMON_H_
#define RINGLEADER_WORKER_WORKER_DAEMON_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/security/credentials.h"
#include "worker/comm/communicator.h"
#include "worker/coordinator_client.h"
#include "worker/device/communicator_factory.h"
#include "worker/device/device.h"
#include "worker/logs/job_log_capture.h"
#include "worker/logs/job_log_shipper.h"
#include "worker/worker_metrics.h"

namespace ringleader {

struct JobData;
struct KeptState;

// Fault injection for tests (worker_main's "Fault injection (tests)"
// flags): deterministic failures the integration tests of recovery need.
// All off by default.
struct FaultInjection {
  // > 0: the first all-reduce of this optimizer step completes for the
  // peers but fails on this worker (LostResultCommunicator), once per
  // process: the generation ends with this rank a step behind them.
  int64_t lose_allreduce_result_at_step = 0;
  // Only while this worker has this rank (-1: whatever rank it has).
  int lose_allreduce_result_rank = -1;
  // Exit (status 3) when about to take part in a recovery from a member's
  // memory, after the kept states were exchanged: a second failure during
  // the recovery from the first.
  bool exit_during_recovery = false;
  // Act on the coordinator's word that a generation ended this much later
  // than it came: a peer's aborted collective then beats the notice, as it
  // can by milliseconds on its own.
  absl::Duration delay_end_notice = absl::ZeroDuration();
};

// Configuration of one worker process, read once from flags/environment.
struct WorkerConfig {
  std::string coordinator = "127.0.0.1:7070";
  // Of every channel to the coordinator (TLS from --tls_*); null: insecure.
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  std::string device = "cpu";
  std::string hostname;
  // Address peers use for the collectives' TCP connections.
  std::string address = "127.0.0.1";
  absl::Duration rendezvous_timeout = absl::Minutes(10);
  absl::Duration collective_timeout = absl::Seconds(60);
  // Keep the training state when a generation ends and recover the next
  // from the members' memory (worker/train/peer_recovery.h).
  bool recover_from_peers = true;
  absl::Duration unreachable_timeout = absl::Minutes(5);
  // Exit after this many jobs (0: serve forever); used by tests.
  int max_jobs = 0;
  // Where the daemon and its trainers record metrics; may be null.
  WorkerMetrics* metrics = nullptr;
  // Send the lines logged while serving a job to the coordinator's job log
  // (`ringctl logs`), queued within these bounds. The capture is a glog
  // sink: it sees every line of the process, so two daemons in one process
  // (tests) each see the other's too.
  bool ship_job_logs = true;
  // Heartbeats say the training phase (worker/timeline/phase.h).
  bool report_phases = true;
  JobLogCapture::Limits job_log_limits;
  // Called once, after registering with the coordinator and starting the
  // heartbeats (the worker's "serving": systemd's READY=1).
  std::function<void()> on_registered;
  FaultInjection faults;
};

// The worker daemon's main loop: register, heartbeat, wait for a job, join its
// rendezvous, build the communicator for the generation, train, and go back
// to idle; when the coordinator ends the generation, abort the communicator
// (so nothing waits on a dead peer) and rejoin. Thread-safe for Stop().
class WorkerDaemon {
 public:
  explicit WorkerDaemon(WorkerConfig config);
  ~WorkerDaemon();
  // Returns when stopped, after max_jobs, or with the error that ended it.
  absl::Status Run();
  // Stops now: the communicator is aborted, the step in flight abandoned.
  void Stop();
  // A scheduler's preemption (the first SIGTERM): while training, the rank
  // stops at its next step boundary (or once its blocked step is aborted),
  // tells the coordinator and leaves, rank 0 saving the last completed step
  // when the whole generation leaves; Run then returns OK. Stop() after
  // `grace`, or at a second call; at once when not training.
  void Preempt(absl::Duration grace);
  // Whether Run returned because its job was preempted (it left the job
  // with its work saved, or kept by its peers).
  bool preempted() const { return preempted_; }
  // Whether the heartbeat thread finished a beat within `within` (false
  // before registration and after it ended): systemd's watchdog check.
  bool HeartbeatAlive(absl::Duration within) const;

 private:
  absl::Status RunJob(const v1::JobAssignment& assignment);
  // Trains generation `gen` of `job_id` over `comm` until it ends: OK when
  // the job finished, ABORTED when the generation ended under this rank.
  // `kept` is this rank's state across generations; `joined_at` is when the
  // job was assigned (InfinitePast after the first generation).
  absl::Status TrainGeneration(const std::string& job_id,
                               const v1::JoinRendezvousResponse& gen,
                               Communicator* comm, const JobData& data,
                               KeptState& kept, absl::Time joined_at);
  // What a refused join means for this rank: OK when the job succeeded
  // without it, else the refusal.
  absl::Status EndedWithoutThisRank(const std::string& job_id,
                                    const absl::Status& refused);
  // Fails the job with `error` (the job's own, such as unreadable data):
  // joins its generation and reports the error as this rank's.
  absl::Status FailJob(const std::string& job_id, const absl::Status& error);
  // Tells the coordinator why this rank leaves generation `gen` of
  // `job_id` after `error` (neither a rejoin nor the job's own error).
  void LeaveAfterFailure(const std::string& job_id,
                         const v1::JoinRendezvousResponse& gen,
                         const absl::Status& error);
  void OnAbort(const v1::GenerationAbort& abort);
  // TrainerEnv::await_own_preemption: first the coordinator's word on the
  // generation's end (AwaitEndNotice), then, if it is a preemption, this
  // worker's own signal within its window.
  bool AwaitOwnPreemption();
  // Waits, at most kEndNoticeWait, until the coordinator said the
  // generation ended (or this daemon was signalled).
  void AwaitEndNotice() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // FaultInjection::lose_allreduce_result_*: whether the all-reduce this
  // rank launches now is to be lost (at most once per process).
  bool LoseThisAllReduce(int rank);
  // What the communicator of generation `gen` of `job_id` is built from.
  CommunicatorRequest CommunicatorRequestFor(
      const std::string& job_id, const v1::JoinRendezvousResponse& gen);

  // A generation joined: logged (after the first, with why it came: a
  // failure spent a restart of `max_restarts`, `restarts` before it),
  // counted, and the job's log lines carry its rank from now on.
  void NoteGeneration(const v1::JoinRendezvousResponse& gen, int32_t restarts,
                      int32_t max_restarts);
  // The job's lines: captured from BeginJobLog to EndJobLog, then flushed.
  void BeginJobLog(const std::string& job_id);
  void EndJobLog();

  const WorkerConfig config_;
  const Device device_;  // config_.device, checked by Run().
  std::unique_ptr<CoordinatorClient> client_;
  // Null when config_.ship_job_logs is off. The shipper goes first.
  std::unique_ptr<JobLogCapture> log_capture_;
  std::unique_ptr<JobLogShipper> log_shipper_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> aborted_{false};
  // Set by Preempt; read by the trainer at each step boundary.
  std::atomic<bool> preempt_{false};
  std::atomic<bool> preempted_{false};
  // Until when the coordinator's notice says the generation this worker
  // trains in is being preempted (InfinitePast: no notice).
  absl::Time preempt_notice_until_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  // The coordinator said the generation this worker trains in ended.
  bool end_heard_ ABSL_GUARDED_BY(mu_) = false;
  // Ends the grace timer's wait (the daemon is going away).
  absl::Mutex grace_mu_;
  bool grace_cancelled_ ABSL_GUARDED_BY(grace_mu_) = false;
  std::thread grace_timer_;
  // Training thread only.
  bool lost_an_allreduce_ = false;
  absl::Mutex mu_;
  std::string job_id_ ABSL_GUARDED_BY(mu_);
  int64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  Communicator* comm_ ABSL_GUARDED_BY(mu_) = nullptr;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_WORKER_DAEMON_H_
