#ifndef RINGLEADER_WORKER_TRAIN_CHECKPOINTER_H_
#define RINGLEADER_WORKER_TRAIN_CHECKPOINTER_H_

// A generation's checkpoints: where it resumes from (the same committed
// checkpoint on every rank) and, on rank 0, saving, committing and pruning
// as it trains.

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ringleader/v1/worker_service.pb.h"
#include "worker/comm/communicator.h"
#include "worker/coordinator_client.h"
#include "worker/model/model.h"
#include "worker/train/checkpoint.h"

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

// Not thread-safe.
class Checkpointer {
 public:
  Checkpointer(CoordinatorClient* client, std::string job_id,
               const v1::JoinRendezvousResponse& generation, Model* model,
               torch::optim::Optimizer* optimizer);

  // Whether this rank writes checkpoints: rank 0 of a job with a directory.
  bool enabled() const { return enabled_; }

  // Saves at `position` (atomically), commits it with the epoch's sample
  // offset, then prunes files older than the last kKeepCheckpoints
  // commits. ABORTED when the coordinator ended the generation at this
  // checkpoint for a scale-up: stop here, where nothing is lost.
  absl::Status Save(const CheckpointPosition& position, int64_t offset);

 private:
  CoordinatorClient* const client_;
  const std::string job_id_;
  const v1::JobSpec spec_;
  const int64_t generation_;
  const bool enabled_;
  Model* const model_;
  torch::optim::Optimizer* const optimizer_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_CHECKPOINTER_H_
