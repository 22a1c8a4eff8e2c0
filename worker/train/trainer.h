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
#include "common/shard_plan.h"
#include "ringleader/v1/worker_service.pb.h"
#include "worker/comm/communicator.h"
#include "worker/coordinator_client.h"
#include "worker/data/job_data.h"
#include "worker/train/checkpoint/checkpointer.h"
#include "worker/train/checkpoint/kept_state.h"
#include "worker/train/metric_sums.h"
#include "worker/train/progress/loss_tracker.h"
#include "worker/worker_metrics.h"

namespace torch::optim {
class Optimizer;
}  // namespace torch::optim

namespace ringleader {

class BatchSource;
class BufferSync;
class Checkpointer;
class MeteredCommunicator;
class Model;
class ProgressReporter;
class ProgressSchedule;
class ProgressWindow;
class Reducer;
class Task;
class Timeline;
class TrainStep;
struct Batch;

// What one rank needs to train one generation of a job.
struct TrainerEnv {
  CoordinatorClient* client = nullptr;
  Communicator* comm = nullptr;
  const JobData* data = nullptr;
  std::string device = "cpu";  // "cpu" or "cuda:N".
  // Set by the heartbeat thread when the coordinator ends the generation.
  const std::atomic<bool>* aborted = nullptr;
  // Step time, samples/s, all-reduce bytes and time, progress; may be null.
  WorkerMetrics* metrics = nullptr;
  // The state this rank kept when the job's previous generation ended under
  // it (peer_recovery.h); replaced with this generation's when it ends
  // ABORTED. Null: nothing kept, nothing to keep (every rank of a
  // generation still takes part in the exchange).
  KeptState* kept = nullptr;
  // When this rank's worker joined the job, if this is its first
  // generation of it (InfinitePast: it was in the job before): the first
  // step reports how long it took from there.
  absl::Time joined_at = absl::InfinitePast();
  // Fault injection for tests (the worker's "Fault injection (tests)"
  // flags): runs when this rank is about to receive or send a member's kept
  // state in a recovery (peer_recovery.h); null: nothing.
  std::function<void()> before_state_broadcast;
};

// Trains one generation of a job on one rank, the way a DDP training script
// does, composed of parts with one concern each (worker/train/): the model
// built from the same seed everywhere (or the user's TorchScript), checked
// against the data (model_probe), the ranks' dataset sizes compared
// (dataset_agreement), rank 0's weights broadcast or the committed
// checkpoint loaded on every rank (checkpointer); then each epoch the
// rank's shard, planned locally (batch_source), through the step (train_step:
// buffers from rank 0, forward, the task's loss, backward with the reducer
// all-reducing buckets as they fill, optimizer), progress reports
// (progress_window), checkpoints on rank 0; at the end the test split
// evaluated (evaluator) and, on rank 0, the model exported (export/).
// Reports and commits are queued (progress_reporter, commit_queue): the
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
  absl::Status Train();
  absl::Status BuildModelAndTask();
  absl::Status SetUpReplicas();
  // From the members' memory when one keeps a state as new as the newest
  // offered checkpoint, else from that checkpoint (or a fresh start).
  absl::StatusOr<ResumePoint> Resume();
  // The samples of the epoch consumed after micro-batch `b` of a shard that
  // started at `start_offset`, every rank's counted (a prefix of the
  // epoch's permutation): where a checkpoint or a kept state resumes.
  int64_t SampleOffsetAfter(int64_t b, int64_t start_offset) const;
  // After the optimizer step that ends micro-batch `b` of `epoch`: what a
  // generation that ends now keeps (the buffers as the step left them).
  void MarkStepBoundary(int64_t epoch, int64_t b, int64_t num_batches,
                        int64_t start_offset);
  // Into env_.kept, when the generation ends under this rank.
  void Keep();
  // A newcomer's first step: how long it took from joining, logged and
  // reported.
  void NoteFirstStep();
  absl::Status RunEpoch(int64_t epoch);
  // `position`: the batch's first sample's in the epoch's permutation,
  // which seeds its dropout (a resumed run at the same world size draws the
  // same masks).
  absl::Status RunBatch(int64_t epoch, const Batch& batch, bool sync,
                        int64_t position);
  // Clipping (and the norm a report carries), the scheduled learning rate,
  // the optimizer step. A job error when the gradient norm is not finite.
  absl::Status OptimizerStep(int64_t epoch, bool report);
  absl::Status AfterStep(int64_t epoch, int64_t b, int64_t num_batches,
                         int64_t epoch_samples, int64_t start_offset,
                         bool report);
  // This rank's metric sums on its part of the test split, with rank 0's
  // buffers.
  absl::StatusOr<MetricSums> EvaluateTestSplit();
  absl::Status EndEpoch(int64_t epoch);
  absl::Status Finish();
  // "rank R state digest at step S (WHEN): HEX" (state_digest.h): the
  // tests compare the ranks' states bit for bit from these lines.
  void LogStateDigest(const char* when) const;
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
  int64_t step_ = 0;
  // The job's optimizer steps as this generation plans them (step_plan.h):
  // the progress total and the schedule's default decay horizon.
  int64_t planned_steps_ = 0;
  bool timeline_flushed_ = false;

  // Destroyed in reverse: the reducer waits for its all-reduces before the
  // timeline they record into and the communicator wrapper go.
  std::shared_ptr<Model> model_;
  std::unique_ptr<Task> task_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::unique_ptr<Timeline> timeline_;
  std::unique_ptr<MeteredCommunicator> metered_;
  std::unique_ptr<Reducer> reducer_;
  std::unique_ptr<BufferSync> buffers_;
  std::unique_ptr<BatchSource> source_;
  std::unique_ptr<TrainStep> step_runner_;
  std::unique_ptr<Checkpointer> checkpointer_;
  std::unique_ptr<ProgressReporter> reporter_;
  std::unique_ptr<ProgressSchedule> schedule_;
  std::unique_ptr<ProgressWindow> window_;
  int64_t resumed_epoch_ = 0;
  double last_epoch_loss_ = 0;
  std::unique_ptr<LossTracker> losses_;
  int64_t resumed_checkpoint_id_ = 0;
  // Where the generation resumed, for its shard plans (epoch -1: fresh).
  ShardResume shard_resume_;
  // Where a generation that ends now would be kept; set once the replicas
  // agree on a state (before that, a failed setup keeps the old KeptState).
  std::optional<KeptState> boundary_;
  // The model's buffers at the last step boundary: the next step's forward
  // changes them before its all-reduces can fail.
  std::vector<at::Tensor> boundary_buffers_;
  absl::Time step_start_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_TRAINER_H_
