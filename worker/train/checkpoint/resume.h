#ifndef RINGLEADER_WORKER_TRAIN_CHECKPOINT_RESUME_H_
#define RINGLEADER_WORKER_TRAIN_CHECKPOINT_RESUME_H_

// Where a generation resumes from, decided on every rank: the coordinator
// offers the last few committed checkpoints newest first; each rank loads
// the first it can read; the ranks sum one-hot votes of their choice through
// the communicator and go on only if they all chose the same one. Also the
// checkpoint file names rank 0 writes, and the pruning of old ones.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader {

// How many checkpoint files rank 0 keeps (the coordinator offers as many).
inline constexpr int kKeepCheckpoints = 3;

// `dir`/`name`-step`step`.ckpt.
std::string CheckpointPath(const std::string& dir, const std::string& name,
                           int64_t step);

// True for a load failure that belongs to one checkpoint (torn, truncated,
// corrupt, missing, not a file, does not fit the model), after which the
// previous checkpoint is worth trying. Other errors (I/O, permissions) are
// not the checkpoint's fault and end the attempt.
bool IsUnreadableCheckpoint(const absl::Status& s);

struct ResumeChoice {
  // Index into the candidates of the checkpoint loaded; -1: none readable.
  int index = -1;
  // "path: why" for each candidate tried and skipped, newest first.
  std::vector<std::string> skipped;
};

// Tries `candidates` in order with `load` (which loads one into the model and
// optimizer) until one succeeds. An error that IsUnreadableCheckpoint() is
// recorded and the next one tried; any other error is returned.
absl::StatusOr<ResumeChoice> ChooseCheckpoint(
    const std::vector<v1::CheckpointRecord>& candidates,
    const std::function<absl::Status(const v1::CheckpointRecord&)>& load);

// This rank's vote: candidates.size() + 1 counters, a 1 at the chosen index
// (the last slot for "none readable"), summed over ranks by an all-reduce.
std::vector<int64_t> ResumeVote(int index, size_t num_candidates);

// The index every rank chose, from the summed votes. FAILED_PRECONDITION
// with a message naming the checkpoints when no rank could read any, or when
// ranks chose differently (they see different files: the checkpoint
// directory must be shared); INTERNAL when the votes do not add up to
// `world_size`.
absl::StatusOr<int> AgreedCheckpoint(
    const std::vector<int64_t>& summed_votes, int world_size,
    const std::vector<v1::CheckpointRecord>& candidates,
    const ResumeChoice& mine);

// After a commit at `committed_step`: deletes the files of job `name` in
// `dir` (`CheckpointPath` names) with steps <= committed_step except the
// `keep` largest. Newer files (left by a generation that resumed from an
// earlier checkpoint) are not touched. Returns the first deletion error;
// deleting nothing is OK.
absl::Status PruneCheckpointFiles(const std::string& dir,
                                  const std::string& name,
                                  int64_t committed_step, int keep);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_CHECKPOINT_RESUME_H_
