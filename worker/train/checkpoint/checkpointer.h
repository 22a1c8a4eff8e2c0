#ifndef RINGLEADER_WORKER_TRAIN_CHECKPOINT_CHECKPOINTER_H_
#define RINGLEADER_WORKER_TRAIN_CHECKPOINT_CHECKPOINTER_H_

// A generation's checkpoints: where it resumes from (the same committed
// checkpoint on every rank) and, on rank 0, saving (written by a background
// thread from a snapshot of the state), committing (queued: training goes on
// while the coordinator is away) and pruning as it trains.

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ringleader/v1/worker_service.pb.h"
#include "worker/comm/communicator.h"
#include "worker/model/model.h"
#include "worker/train/checkpoint/checkpoint.h"
#include "worker/train/checkpoint/checkpoint_writer.h"
#include "worker/train/checkpoint/commit_queue.h"

namespace torch::optim {
class Optimizer;
}  // namespace torch::optim

namespace ringleader {

struct ResumePoint {
  CheckpointPosition position;  // Epoch 0, step 0 for a fresh start.
  int64_t checkpoint_id = 0;    // 0: none.
  // The committed samples of position.epoch (the checkpoint's record).
  int64_t epoch_sample_offset = 0;
};

// Loads the first readable of the generation's offered checkpoints (newest
// first) into `model` and `optimizer`, and checks with an all-reduce of
// one-hot votes (on `device`: the communicator may be NCCL) that every rank
// chose the same. A fresh start when none is offered. A job error when no
// rank can read any or ranks disagree; ABORTED when the vote's collective
// fails; another error for an I/O failure that is not the checkpoint's.
absl::StatusOr<ResumePoint> ResumeFromOffered(
    const v1::JoinRendezvousResponse& generation, Model& model,
    torch::optim::Optimizer& optimizer, Communicator& comm,
    const c10::Device& device);

// How long Save waits for a commit's answer before training goes on. The
// coordinator answers a commit in milliseconds when it is up (one SQLite
// transaction), so in normal operation the answer is seen at the checkpoint
// itself: a commit at which the coordinator ends the generation for a
// scale-up stops training right there, and nothing is retrained. 2 s is
// twice the default heartbeat interval: a coordinator that has not answered
// by then is unreachable or stopped (its heartbeats fail too), and waiting
// longer only stalls training. Only the first commit of an outage waits (the
// later ones queue behind it), so an outage costs training one such pause.
inline constexpr absl::Duration kCommitAnswerWait = absl::Seconds(2);

// Rank 0's checkpoints: snapshotted by the training thread and written by a
// CheckpointWriter (or, with JobSpec.checkpoint_synchronous, written by the
// training thread), committed through a CommitQueue in order, the files of
// older commits pruned once a newer commit was acknowledged. Not
// thread-safe (the queue and the writer are).
//
// A scale-up at a checkpoint: the coordinator ends a generation for waiting
// workers at a commit, and the ranks stop there, losing nothing. A commit
// written in the background reaches the coordinator after the ranks trained
// on, so it is marked trained_past: the coordinator does not end the
// generation at it (the steps since would be thrown away) but answers
// scale_up_pending, and the next checkpoint is written on the training
// thread and its answer awaited, as every checkpoint was before: the ranks
// stop exactly there. A newcomer waits one checkpoint interval longer; in
// exchange, no checkpoint without a newcomer blocks training for its write.
class Checkpointer {
 public:
  // `send` commits one checkpoint (CoordinatorClient::CommitCheckpoint).
  // `resumed_checkpoint_id` (0: a fresh start) and `train_size` travel with
  // each commit: the coordinator learns from them where the generation
  // resumed and how big its training split is.
  Checkpointer(CommitQueue::Send send, std::string job_id,
               const v1::JoinRendezvousResponse& generation, Model* model,
               torch::optim::Optimizer* optimizer,
               int64_t resumed_checkpoint_id, int64_t train_size);
  // Waits for the write in flight; logs what checkpoints cost training.
  ~Checkpointer();

  // Whether this rank writes checkpoints: rank 0 of a job with a directory.
  bool enabled() const { return enabled_; }

  // Checkpoints the state at `position`, with the epoch's sample offset.
  // In the background (the default): waits for the previous checkpoint's
  // write if it is still going (so at most one snapshot is held: the memory
  // bound is one extra copy of the state), copies the state and returns;
  // the writer writes the file and then queues its commit. Synchronously
  // (checkpoint_synchronous, or a scale-up pending): writes the file here
  // and queues its commit, waiting up to kCommitAnswerWait for the answer
  // when no older commit is still on its way. Returns Verdict(): ABORTED
  // when the coordinator ended the generation at this checkpoint (or an
  // earlier one) for a scale-up, where nothing is lost, a commit's refusal,
  // a failed write's error; OK when the commit is accepted or on its way.
  absl::Status Save(const CheckpointPosition& position, int64_t offset);
  // The last checkpoint of a generation that stops (a preemption): written
  // on the calling thread, committed, and waited for up to `timeout`
  // (every earlier commit too); OK once the coordinator accepted it.
  absl::Status SaveFinal(const CheckpointPosition& position, int64_t offset,
                         absl::Duration timeout);
  // What the writes and answers so far say: the trainer checks it at each
  // step, so that a write that failed or an answer that came late stops it.
  absl::Status Verdict() const;
  // Waits up to `timeout` until the write in flight ended and every commit
  // was answered (before the job's final report); the verdict, or
  // DEADLINE_EXCEEDED.
  absl::Status Drain(absl::Duration timeout);
  // Whether an answer said workers wait to join: the next save is written
  // on the training thread, where the generation ends for them.
  bool scale_up_pending() const { return scale_up_pending_.load(); }

 private:
  absl::Status SaveNow(const CheckpointPosition& position, int64_t offset);
  absl::Status SaveInBackground(const CheckpointPosition& position,
                                int64_t offset);
  v1::CommitCheckpointRequest Commit(const CheckpointPosition& position,
                                     int64_t offset, bool trained_past) const;
  // Runs on the queue's thread after each acknowledged commit.
  void Committed(const v1::CommitCheckpointRequest& committed,
                 const v1::CommitCheckpointResponse& answer);
  // Deletes files of commits older than the last kKeepCheckpoints
  // acknowledged ones (PruneCheckpointFiles): never a file whose commit is
  // still queued or being written, since those have larger steps than
  // `committed`.
  void Prune(const v1::CommitCheckpointRequest& committed) const;

  const std::string job_id_;
  const v1::JobSpec spec_;
  const int64_t generation_;
  const bool enabled_;
  Model* const model_;
  torch::optim::Optimizer* const optimizer_;
  const int64_t resumed_checkpoint_id_;
  const int64_t train_size_;
  // An answer said workers wait to join: the next save is synchronous.
  std::atomic<bool> scale_up_pending_{false};
  // What checkpoints cost the training thread (logged at the end).
  int64_t saves_ = 0;
  absl::Duration blocked_;
  // Null when not enabled. The queue's thread stops last: the writer's
  // thread queues commits into it, and stops first.
  std::unique_ptr<CommitQueue> queue_;
  std::unique_ptr<CheckpointWriter> writer_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_CHECKPOINT_CHECKPOINTER_H_
