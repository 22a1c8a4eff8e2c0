#ifndef RINGLEADER_WORKER_TRAIN_TRAINER_H_
#define RINGLEADER_WORKER_TRAIN_TRAINER_H_

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/shard_plan.h"
#include "ringleader/v1/worker_service.pb.h"
#include "worker/comm/communicator.h"
#include "worker/data/job_data.h"
#include "worker/timeline/phase.h"
#include "worker/train/batch_balancer.h"
#include "worker/train/batch_source.h"
#include "worker/train/batch_split.h"
#include "worker/train/buffer_snapshot.h"
#include "worker/train/checkpoint/checkpointer.h"
#include "worker/train/checkpoint/kept_state.h"
#include "worker/train/coordinator_link.h"
#include "worker/train/metric_sums.h"
#include "worker/train/step/replica.h"
#include "worker/worker_metrics.h"

namespace ringleader {

class LossTracker;
class MeteredCommunicator;
class ProgressReporter;
class TensorBoardWriter;
class ProgressSchedule;
class ProgressWindow;
class Timeline;
class TrainStep;

// What one rank needs to train one generation of a job.
struct TrainerEnv {
  // Progress reports, checkpoint commits and the step heartbeats carry.
  CoordinatorLink* link = nullptr;
  // How long the job's last sends (the final report, the commits still
  // queued) may take: as long as the link retries a call.
  absl::Duration send_timeout = absl::Minutes(5);
  // Step times, report pacing, a newcomer's wait; outlives the trainer.
  const Clock* clock = RealClock::Get();
  Communicator* comm = nullptr;
  const JobData* data = nullptr;
  std::string device = "cpu";  // "cpu" or "cuda:N".
  // Set by the heartbeat thread when the coordinator ends the generation.
  const std::atomic<bool>* aborted = nullptr;
  // Step time, samples/s, all-reduce bytes and time, progress; may be null.
  WorkerMetrics* metrics = nullptr;
  // The state this rank kept when the job's previous generation ended under
  // it (checkpoint/peer_recovery.h); replaced with this generation's when
  // it ends ABORTED. Null: nothing kept, nothing to keep (every rank of a
  // generation still takes part in the exchange).
  KeptState* kept = nullptr;
  // When this rank's worker joined the job, if this is its first
  // generation of it (InfinitePast: it was in the job before): the first
  // step reports how long it took from there.
  absl::Time joined_at = absl::InfinitePast();
  // Set by the worker's signal thread (a preemption): the rank stops at its
  // next step boundary, or once its step in flight is aborted, and leaves
  // (trainer_preempt.cc). Null: never.
  const std::atomic<bool>* preempt = nullptr;
  // When training was aborted: if the coordinator said the generation is
  // being preempted, waits until its window ends for this worker's own
  // signal and says whether it came (the scheduler signals every process
  // at about the same moment, but the notice can beat a signal by
  // milliseconds). Null: never waits.
  std::function<bool()> await_own_preemption;
  // Fault injection for tests (the worker's "Fault injection (tests)"
  // flags): runs when this rank is about to receive or send a member's kept
  // state in a recovery (checkpoint/peer_recovery.h); null: nothing.
  std::function<void()> before_state_broadcast;
  // What this rank is doing, for its heartbeats (set at the timeline's span
  // points); null: nowhere.
  PhaseClock* phases = nullptr;
};

// Trains one generation of a job on one rank, the way a DDP training script
// does: a short loop over parts with one concern each. Setting up: the
// replica (step/replica.h: the model from the job's seed or the user's
// TorchScript, probed against the data, its optimizer), the ranks' dataset
// sizes compared (dataset_agreement), the state recovered from a member's
// memory or the committed checkpoint (checkpoint/), the step built
// (step/train_step.h: it owns the reducer) and rank 0's state broadcast.
// Then each epoch the rank's shard, planned locally (batch_source), micro-
// batch by micro-batch through the step; at each step boundary the state
// marked for a generation that ends there, progress reported (progress/)
// and checkpoints saved on rank 0 (checkpoint/checkpointer.h); at the end
// the test split evaluated (evaluator) and, on rank 0, the model exported.
// Reports and commits are queued and sent from threads of their own: the
// coordinator is not on the training path, and an outage of it costs
// training at most one kCommitAnswerWait pause.
//
// Returns OK when the job is done on this rank, ABORTED when the generation
// ended under it (the caller rejoins), a job error (job_error.h), already
// reported to the coordinator, when the job's own model or data is at
// fault, another error otherwise. Not thread-safe: one trainer per
// generation, on one thread.
class Trainer {
 public:
  Trainer(TrainerEnv env, std::string job_id,
          v1::JoinRendezvousResponse generation);
  ~Trainer();
  absl::Status Run();

 private:
  // Where training stands after an optimizer step: what a checkpoint taken
  // there records and what a generation that ends there keeps.
  struct Boundary {
    CheckpointPosition position;
    // The samples of position.epoch consumed (every rank's).
    int64_t epoch_sample_offset = 0;
  };

  absl::Status Train();
  // This generation's timeline (disabled without JobSpec.timeline_dir),
  // whose spans also set env_.phases.
  void MakeTimeline();
  absl::Status BuildReplica();
  // Everything the ranks agree on before the first step: the data, the
  // state they resume from, rank 0's parameters and buffers.
  absl::Status SetUpReplicas();
  // From the members' memory when one keeps a state as new as the newest
  // offered checkpoint, else from that checkpoint (or a fresh start).
  absl::StatusOr<ResumePoint> Resume();
  // The step over the (metered) communicator, from the resumed position.
  absl::Status CreateStep(const ResumePoint& resumed);
  // The checkpointer and the progress reporter, which send through
  // env_.link, and what the reports are made of.
  // A job error when rank 0 cannot create its TensorBoard event file.
  absl::Status StartSenders();

  absl::Status RunEpoch(int64_t epoch);
  // Micro-batch `b` of the epoch through the step: whether it completed an
  // optimizer step.
  absl::StatusOr<bool> RunMicroBatch(int64_t epoch, const BatchSource::Epoch& e,
                                     int64_t b);
  // With balanced batches: the ranks' agreement after micro-batch `b`, and
  // a new split into this epoch's schedule.
  absl::Status Rebalance(const BatchSource::Epoch& e, int64_t b);
  // Applies the step micro-batch `b` completed, and what follows a step:
  // the boundary marked, the step counted and reported, a checkpoint.
  absl::Status FinishStep(int64_t epoch, const BatchSource::Epoch& e,
                          int64_t b);
  // Metrics and the progress window; a report when `report`.
  absl::Status RecordStep(int64_t epoch, bool report);
  // What a generation that ends now keeps: `at`, and the buffers as the
  // step left them.
  void MarkBoundary(const Boundary& at);
  // Into env_.kept, when the generation ends under this rank.
  void Keep();
  // A newcomer's first step: how long it took from joining, logged and
  // reported.
  void NoteFirstStep();
  // This rank's metric sums on its part of the test split, with rank 0's
  // buffers.
  absl::StatusOr<MetricSums> EvaluateTestSplit();
  absl::Status EndEpoch(int64_t epoch);
  absl::Status Finish();

  // Whether this rank's worker was signalled to stop.
  bool PreemptRequested() const;
  // Whether to stop at this step boundary for it: requested, not the
  // epoch's last step (`last_of_epoch`: its checkpoint and evaluation come
  // first) and training not over (the last step's ranks finish: their
  // evaluation needs them all).
  bool StopsForPreemption(bool last_of_epoch) const;
  // After training stopped with `s` while a preemption was requested:
  // tells the coordinator this rank leaves at its last completed step,
  // and on a WHOLE verdict rank 0 saves and commits that step. Preempted()
  // (the worker exits), or the error that left the coordinator untold.
  absl::Status LeaveForPreemption(const absl::Status& s);
  // The buffers back to the last step boundary (the step in flight's
  // forward changed them).
  void RestoreBoundaryBuffers();

  // "rank R state digest at step S (WHEN): HEX" (state_digest.h): the
  // tests compare the ranks' states bit for bit from these lines.
  void LogStateDigest(const char* when, int64_t step) const;
  // Why training cannot go on now (the generation ended, a late commit
  // answer); OK to go on.
  absl::Status Interrupted() const;
  absl::Status Aborted() const;
  // `s` from a collective: ABORTED (rejoin) either way.
  absl::Status Broken(const absl::Status& s) const;
  void FlushTimeline();

  const TrainerEnv env_;
  // env_.joined_at until the first step noted it.
  absl::Time joined_at_;
  const std::string job_id_;
  const v1::JoinRendezvousResponse gen_;
  const c10::Device device_;
  // The job's optimizer steps as this generation plans them (step_plan.h):
  // the progress total and the schedule's default decay horizon.
  int64_t planned_steps_ = 0;
  ResumePoint resumed_;
  // Where the generation resumed, for its shard plans (epoch -1: fresh).
  ShardResume shard_resume_;
  bool timeline_flushed_ = false;
  double last_epoch_loss_ = 0;

  // Destroyed in reverse: the step's reducer waits for its all-reduces
  // before the timeline they record into and the communicator wrapper go.
  Replica replica_;
  std::unique_ptr<Timeline> timeline_;
  std::unique_ptr<MeteredCommunicator> metered_;
  std::unique_ptr<TrainStep> step_;
  std::unique_ptr<BatchSource> source_;
  // DdpSpec.balance_batches on CPU ranks, world > 1: the split of each
  // global batch, and this epoch's schedule of it (which its loader reads).
  std::unique_ptr<BatchBalancer> balancer_;
  std::unique_ptr<BatchSplitSchedule> split_;
  std::unique_ptr<Checkpointer> checkpointer_;
  // Before the reporter, whose thread writes to it: destroyed after it.
  std::unique_ptr<TensorBoardWriter> tensorboard_;
  std::unique_ptr<ProgressReporter> reporter_;
  std::unique_ptr<ProgressSchedule> schedule_;
  std::unique_ptr<ProgressWindow> window_;
  std::unique_ptr<LossTracker> losses_;
  // Where a generation that ends now would be kept; set once the replicas
  // agree on a state (before that, a failed setup keeps the old KeptState).
  std::optional<KeptState> boundary_;
  // The model's buffers at the last step boundary: the next step's forward
  // changes them before its all-reduces can fail.
  // Set with boundary_.
  std::unique_ptr<BufferSnapshot> boundary_buffers_;
  absl::Time step_started_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_TRAINER_H_
