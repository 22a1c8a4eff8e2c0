#ifndef RINGLEADER_COORDINATOR_STATE_STORE_H_
#define RINGLEADER_COORDINATOR_STATE_STORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "ringleader/v1/history.pb.h"
#include "ringleader/v1/job.pb.h"
#include "ringleader/v1/state.pb.h"

struct sqlite3;

namespace ringleader {

// Durable coordinator state in SQLite: jobs (with their generation and state)
// and committed checkpoints, so a restarted coordinator (even after kill -9)
// carries on. WAL mode: a commit survives a process crash. Thread-safe.
class StateStore {
 public:
  // `path` is a file, or ":memory:" for tests that need no durability.
  static absl::StatusOr<std::unique_ptr<StateStore>> Open(
      const std::string& path);
  ~StateStore();
  StateStore(const StateStore&) = delete;
  StateStore& operator=(const StateStore&) = delete;

  // Inserts or replaces the job (keyed by job_id).
  absl::Status SaveJob(const v1::Job& job);
  // Forgets the job, its live generation and its history; OK if there is
  // no such job.
  // Its checkpoints stay: they belong to the job's name as much as to it
  // (a later job of that name resumes from them).
  absl::Status DeleteJob(const std::string& job_id);
  // Every stored job, in creation order. A row that does not parse is an
  // error naming the job: state is never silently dropped.
  absl::StatusOr<std::vector<v1::Job>> LoadJobs() const;
  // The live generation of a job (one per job; replaces an older or equal
  // one, never a newer one), kept so that a restarted coordinator can adopt
  // it.
  absl::Status SaveGeneration(const v1::GenerationRecord& generation);
  // Forgets the job's generation `number` (any number if negative).
  absl::Status DeleteGeneration(const std::string& job_id, int64_t number);
  absl::StatusOr<std::vector<v1::GenerationRecord>> LoadGenerations() const;
  // Records a committed checkpoint; returns its id (increasing).
  absl::StatusOr<int64_t> AddCheckpoint(const std::string& job_id,
                                        const std::string& job_name,
                                        const v1::CheckpointRecord& record);
  // The most recent checkpoint of any job named `job_name`, bad ones
  // excluded.
  absl::StatusOr<std::optional<v1::CheckpointRecord>> LatestCheckpoint(
      const std::string& job_name) const;
  // Up to `limit` checkpoints, newest first, with ids <= `max_id`, not marked
  // bad, committed by job `job_id` or, when `job_name` is not empty, by any
  // job of that name (a job that resumed another's run).
  absl::StatusOr<std::vector<v1::CheckpointRecord>> RecentCheckpoints(
      const std::string& job_id, const std::string& job_name, int64_t max_id,
      int limit) const;
  // Marks checkpoints bad (unreadable): they are never offered again.
  absl::Status MarkCheckpointBad(int64_t checkpoint_id,
                                 const std::string& reason);
  // One more than the number of jobs ever stored (deleted ones included, so
  // that an id is never handed out twice); used for job ids.
  absl::StatusOr<int64_t> NextJobSequence() const;
  // Inserts or replaces a job's training history (keyed by its job_id);
  // nothing is written for a job that is not stored (deleted meanwhile).
  absl::Status SaveHistory(const v1::HistorySeries& series);
  // Every stored history, by job id. A row that does not parse is an error
  // naming the job.
  absl::StatusOr<std::vector<v1::HistorySeries>> LoadHistories() const;

 private:
  explicit StateStore(sqlite3* db) : db_(db) {}
  absl::Status Exec(const char* sql) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Error(const char* what) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // DeleteJob's statements, inside its transaction.
  absl::Status DeleteJobRowsLocked(const std::string& job_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  sqlite3* db_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_STATE_STORE_H_
