#ifndef RINGLEADER_COORDINATOR_GENERATION_FACTS_H_
#define RINGLEADER_COORDINATOR_GENERATION_FACTS_H_

// What the coordinator fixes and learns about each job's live generation:
// the checkpoints it is offered to resume from when it forms, the one its
// ranks chose, and the dataset sizes its ranks see. The workers plan their
// shards and compare their dataset sizes among themselves
// (docs/design-notes.md, "The coordinator is not on the training path"):
// the coordinator learns these facts from GetShard and from the queued
// reports and commits, for its range checks and its checkpoint history.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/job_manager.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader {

// How many committed checkpoints a generation is offered to resume from.
inline constexpr int kResumeCandidates = 3;

// Calls the job manager (for the offer, and to apply a resume choice) and
// nothing else. Thread-safe: one lock over every job's facts, taken before
// the job manager's.
class GenerationFacts {
 public:
  explicit GenerationFacts(JobManager& jobs) : jobs_(jobs) {}

  // Generation `number` of `job_id` formed: its facts start over, and it is
  // offered the job's last kResumeCandidates commits not marked bad (the
  // last commit alone when the history is unreadable). False, changing
  // nothing, when a newer generation's facts are in: the rendezvous runs
  // its formed hook outside its lock, so a newer generation's can run first,
  // and its resume choice must stay.
  bool Formed(const std::string& job_id, int64_t number);
  // Generation `number` of `job_id` was adopted after a coordinator restart.
  // Its ranks resumed (if at all) before the restart and ask for later
  // epochs only, which start at offset 0: it is offered nothing
  // (RecallOffer covers a choice still to apply).
  void Adopted(const std::string& job_id, int64_t number);
  // The job is over.
  void Forget(const std::string& job_id);

  // The checkpoints generation `number` is offered, newest first (empty: a
  // fresh start, an adopted generation, or not the job's generation).
  std::vector<v1::CheckpointRecord> Offer(const std::string& job_id,
                                          int64_t number) const;

  // A GetShard of `rank` of `generation` sees `dataset_size` samples in its
  // split: the first size fixes it, another is FAILED_PRECONDITION naming
  // both. For the training split it also names the checkpoint its rank
  // resumed from (ResumeChoice), and the answer is that checkpoint (none:
  // the generation starts from scratch).
  absl::StatusOr<std::optional<v1::CheckpointRecord>> NoteShardRequest(
      const std::string& job_id, int64_t generation, int32_t rank,
      bool test_split, int64_t dataset_size, int64_t resume_checkpoint_id);
  // What a progress report or commit of live `generation` says about it:
  // the training split's size (0: not said; negative: INVALID_ARGUMENT) and
  // the checkpoint it resumed from (0: not said). Facts of another
  // generation than the job's (one formed since the caller's check) are
  // ignored: the caller's call fails on its generation anyway.
  absl::Status NoteTrainingFacts(const std::string& job_id, int64_t generation,
                                 int32_t rank, int64_t train_size,
                                 int64_t resumed_checkpoint_id);
  // The training split's size as the generation's first GetShard, progress
  // report or commit that named one saw it (-1: not yet).
  int64_t TrainSize(const std::string& job_id, int64_t generation) const;

 private:
  struct Facts {
    int64_t number = 0;
    // Where the generation may resume, newest first (empty: from scratch),
    // and the index of the one its ranks loaded (-1 until a rank says).
    std::vector<v1::CheckpointRecord> resume_candidates;
    int64_t resumed = -1;
    // Dataset size per split (0: train, 1: test) as the first rank saw it.
    int64_t dataset_size[2] = {-1, -1};
  };

  // The generation's resume choice: the candidate `resume_checkpoint_id`
  // names (0: the first), fixed by the first rank that names one (in
  // GetShard, or rank 0's commits), which marks the newer candidates bad
  // and moves the job's last_checkpoint back to it, so that the
  // generation's commits follow it. Null when the generation has no
  // candidates (a fresh start, or adopted after a restart: its ranks had
  // resumed before). INVALID_ARGUMENT for an id that is no candidate,
  // FAILED_PRECONDITION when ranks name different ones.
  absl::StatusOr<const v1::CheckpointRecord*> ResumeChoiceLocked(
      Facts& facts, const std::string& job_id, int64_t generation, int32_t rank,
      int64_t resume_checkpoint_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records the size of a split that `rank` sees; the first fixes it, and
  // another one is FAILED_PRECONDITION naming both.
  static absl::Status NoteDatasetSize(Facts& facts, bool test_split,
                                      int32_t rank, int64_t dataset_size);
  // For a generation adopted after a restart, whose resume candidates were
  // not kept: takes them again from the job when no commit of the
  // generation went through yet and `resumed_checkpoint_id` is among them.
  // False when there is nothing left to apply.
  bool RecallOfferLocked(Facts& facts, const std::string& job_id,
                         int64_t resumed_checkpoint_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The offer of a generation that forms now (computed outside the lock).
  std::vector<v1::CheckpointRecord> CurrentOffer(
      const std::string& job_id) const;

  JobManager& jobs_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Facts> by_job_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_GENERATION_FACTS_H_
