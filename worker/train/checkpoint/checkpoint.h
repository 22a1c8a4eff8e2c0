#ifndef RINGLEADER_WORKER_TRAIN_CHECKPOINT_CHECKPOINT_H_
#define RINGLEADER_WORKER_TRAIN_CHECKPOINT_CHECKPOINT_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "worker/model/model.h"

namespace torch::optim {
class Optimizer;
}  // namespace torch::optim

namespace ringleader {

// Where training stands when a checkpoint is taken: the epoch to continue in
// and the optimizer steps done. (The sample offset inside the epoch is
// recorded with the coordinator's commit.)
struct CheckpointPosition {
  int64_t epoch = 0;
  int64_t step = 0;
};

// A checkpoint: model and optimizer state plus the position, as a LibTorch
// archive inside the CRC envelope of checkpoint_file.h (atomic write, torn
// files detected).
absl::Status SaveCheckpoint(const std::string& path, const Model& model,
                            torch::optim::Optimizer& optimizer,
                            const CheckpointPosition& position);
class CheckpointSnapshot;
// The same file from a snapshot of the state (checkpoint_snapshot.h), on any
// thread: what a background write calls.
absl::Status SaveCheckpoint(const std::string& path,
                            const CheckpointSnapshot& snapshot);
// The archive SaveCheckpoint writes, in memory (a survivor's state sent to
// its peers when a generation ends: worker/train/peer_recovery.h).
absl::StatusOr<std::string> SerializeCheckpoint(
    const Model& model, torch::optim::Optimizer& optimizer,
    const CheckpointPosition& position);
// Loads an archive from SerializeCheckpoint; `what` names it in errors.
// DATA_LOSS when it does not fit the model.
absl::StatusOr<CheckpointPosition> LoadCheckpointPayload(
    absl::string_view payload, absl::string_view what, Model& model,
    torch::optim::Optimizer* optimizer);
// Loads into `model` and, unless null, `optimizer`. DATA_LOSS for a torn
// file or one that does not fit the model.
absl::StatusOr<CheckpointPosition> LoadCheckpoint(
    const std::string& path, Model& model, torch::optim::Optimizer* optimizer);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_CHECKPOINT_CHECKPOINT_H_
