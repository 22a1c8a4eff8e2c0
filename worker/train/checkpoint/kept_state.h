#ifndef RINGLEADER_WORKER_TRAIN_CHECKPOINT_KEPT_STATE_H_
#define RINGLEADER_WORKER_TRAIN_CHECKPOINT_KEPT_STATE_H_

// What a rank keeps of its training when a generation ends under it: the
// state after its last completed optimizer step, for the job's next
// generation to recover from instead of a checkpoint file
// (peer_recovery.h). Every rank of a data-parallel generation holds the
// same parameters and optimizer state after each step, so any survivor
// that completed the newest step can bring every other member there.

#include <cstdint>
#include <string>

#include "worker/train/checkpoint/checkpoint.h"

namespace ringleader {

struct KeptState {
  std::string job_id;  // Empty: nothing kept.
  // The epoch to continue in and the optimizer steps done; at an epoch's
  // end, the next epoch.
  CheckpointPosition position;
  // The samples of position.epoch already applied (a prefix of the epoch's
  // permutation, as a checkpoint commit records it).
  int64_t epoch_sample_offset = 0;
  std::string payload;  // SerializeCheckpoint's archive.

  bool HoldsJob(const std::string& job) const {
    return !job_id.empty() && job_id == job && !payload.empty();
  }
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_CHECKPOINT_KEPT_STATE_H_
