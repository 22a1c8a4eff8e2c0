#ifndef RINGLEADER_COORDINATOR_LOG_STORE_H_
#define RINGLEADER_COORDINATOR_LOG_STORE_H_

// Each job's log: the lines its workers logged while serving it
// (WorkerService.AppendLogs), for `ringctl logs` and Client.logs. Memory
// only, and bounded three ways, so that no job and no worker can grow the
// coordinator without limit: per rank a ring of the last `lines_per_rank`
// lines and `bytes_per_rank` bytes (the lines of workers that held no rank
// yet share a ring of their own); over all jobs `total_bytes`, past which
// the logs of the job appended to longest ago go first. A job's log stays
// after the job ends (a failed job keeps the lines that say why) and goes
// when the job is deleted or pruned (JobManager's deleted hook). A
// restarted coordinator starts empty and keeps what arrives after it.

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "ringleader/v1/logs.pb.h"

namespace ringleader {

// Thread-safe; calls nothing outside itself.
class LogStore {
 public:
  struct Limits {
    int64_t lines_per_rank = 2000;
    int64_t bytes_per_rank = 512 * 1024;
    int64_t total_bytes = 256 * 1024 * 1024;
  };
  struct Query {
    std::optional<int32_t> rank;  // Unset: every rank's lines.
    int64_t since_ms = 0;
    int32_t tail = 0;                     // 0: every line selected.
    int64_t after_seq = 0;                // Lines that arrived after this one.
    int64_t max_bytes = 8 * 1024 * 1024;  // Of the answer; the newest stay.
  };
  struct Page {
    std::vector<v1::LogLine> lines;  // Time order, then rank, then arrival.
    int64_t last_seq = 0;            // The job's newest line.
    // Selected lines left out, the oldest, to keep within max_bytes.
    int64_t omitted = 0;
  };

  explicit LogStore(Limits limits) : limits_(limits) {}

  // Whether `worker_id` may append to `job_id`'s log: the coordinator
  // admits a worker when it first appends while assigned to the job, and
  // keeps it admitted after the job releases it (its last lines, sent after
  // the job ended, still count).
  void Admit(const std::string& job_id, const std::string& worker_id);
  bool Admitted(const std::string& job_id, const std::string& worker_id) const;
  // Adds `lines` (stamped with `worker_id`, `host` and their seq), after a
  // line saying so when the worker dropped `dropped` lines before them.
  void Append(const std::string& job_id, const std::string& worker_id,
              const std::string& host, std::vector<v1::LogLine> lines,
              int64_t dropped);
  // The lines `query` selects, or none for a job with no log.
  Page Read(const std::string& job_id, const Query& query) const;
  void Delete(const std::string& job_id);

  // For tests and metrics: the bytes held (each line's text, host and
  // worker id, plus a fixed overhead).
  int64_t bytes() const;
  const Limits& limits() const { return limits_; }

  // What a line costs against the limits.
  static int64_t Cost(const v1::LogLine& line);

 private:
  struct Ring {
    std::deque<v1::LogLine> lines;
    int64_t bytes = 0;
  };
  struct JobLog {
    std::map<int32_t, Ring> ranks;  // -1: lines logged before a rank.
    std::set<std::string> admitted;
    int64_t last_seq = 0;
    int64_t bytes = 0;
    uint64_t touched = 0;  // When appended to last (a counter).
  };

  void AddLocked(JobLog& log, v1::LogLine line)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops `ring`'s oldest line (it has one), counted out of every total.
  void PopOldestLocked(JobLog& log, Ring& ring)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops the oldest lines of `ring` until it fits the per-rank limits.
  void TrimLocked(JobLog& log, Ring& ring) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Evicts whole logs, the least recently appended first (never `keep`),
  // then `keep`'s oldest lines, until total_bytes holds.
  void EvictLocked(const std::string& keep) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Limits limits_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, JobLog> jobs_ ABSL_GUARDED_BY(mu_);
  int64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t clock_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_LOG_STORE_H_
