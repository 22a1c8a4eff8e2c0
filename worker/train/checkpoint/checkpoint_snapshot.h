#ifndef RINGLEADER_WORKER_TRAIN_CHECKPOINT_CHECKPOINT_SNAPSHOT_H_
#define RINGLEADER_WORKER_TRAIN_CHECKPOINT_CHECKPOINT_SNAPSHOT_H_

// What a checkpoint file holds, copied at a step boundary so that another
// thread can serialize and write it while training goes on (CheckFreq's
// split: the training thread pays a copy, not an fsync). The next optimizer
// step changes parameters, buffers and optimizer state in place, so every
// tensor is a deep copy, on the host: a GPU job's snapshot does not take
// device memory, and the writer has to bring the bytes to the host anyway.
// The learning-rate schedule's position is the step, the dropout streams are
// derived from the seed and the sample position, and the epoch's sample
// offset travels with the commit: the position covers them.

#include <torch/optim/optimizer.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "worker/model/model.h"
#include "worker/train/checkpoint/checkpoint.h"

namespace ringleader {

class CheckpointSnapshot {
 public:
  // Copies the state of `model` and `optimizer` (SGD, Adam or AdamW: the
  // kinds BuildOptimizer makes; UNIMPLEMENTED for another). Call on the
  // training thread, between steps.
  static absl::StatusOr<CheckpointSnapshot> Take(
      const Model& model, const torch::optim::Optimizer& optimizer,
      const CheckpointPosition& position);

  CheckpointSnapshot(CheckpointSnapshot&&) = default;
  CheckpointSnapshot& operator=(CheckpointSnapshot&&) = default;

  const CheckpointPosition& position() const { return position_; }
  const std::string& model_name() const { return model_name_; }
  // Into `archive`, the entries Model::Save and Optimizer::save write for
  // the state copied. May throw c10::Error.
  void SaveModel(torch::serialize::OutputArchive& archive) const;
  void SaveOptimizer(torch::serialize::OutputArchive& archive) const;
  // Bytes of tensor data held (parameters, buffers, optimizer state).
  int64_t bytes() const { return bytes_; }

 private:
  using State =
      ska::flat_hash_map<std::string,
                         std::unique_ptr<torch::optim::OptimizerParamState>>;
  using SaveFn =
      void (*)(torch::serialize::OutputArchive&, const State&,
               const std::vector<torch::optim::OptimizerParamGroup>&);

  CheckpointSnapshot() = default;

  CheckpointPosition position_;
  std::string model_name_;
  std::vector<NamedTensor> parameters_;
  std::vector<NamedTensor> buffers_;
  // The optimizer's per-parameter state (deep copies), keyed as the live
  // optimizer keys it, and its parameter groups (options copied; the
  // parameters only name the state's keys, their values are not read).
  State state_;
  std::vector<torch::optim::OptimizerParamGroup> groups_;
  SaveFn save_optimizer_ = nullptr;
  int64_t bytes_ = 0;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_CHECKPOINT_CHECKPOINT_SNAPSHOT_H_
