#ifndef RINGLEADER_WORKER_LOGS_JOB_LOG_CAPTURE_H_
#define RINGLEADER_WORKER_LOGS_JOB_LOG_CAPTURE_H_

// The lines this worker logs while it serves a job, kept for the
// coordinator's job log (`ringctl logs`): a glog sink that, between BeginJob
// and EndJob, copies every line (any thread's) into a bounded queue, tagged
// with the job, generation and rank. The queue never blocks the thread that
// logs: past its bounds the oldest lines go and are counted, and the count
// is sent with the next batch the coordinator accepts (the coordinator
// records a line saying so). The shipper (job_log_shipper.h) drains it.
//
// The sink runs under glog's own lock: it must not log, and it does no more
// than copy the line under a mutex of its own. It lives in the .cc: this
// header is included by LibTorch units, which take their logging from
// common/logging.h and must not see glog's own API
// (tools/check_logging_includes.py).

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "ringleader/v1/logs.pb.h"

namespace ringleader {

// One job's lines taken from the queue, oldest first.
struct JobLogBatch {
  std::string job_id;
  std::vector<v1::LogLine> lines;
  int64_t dropped = 0;  // Lines of the job dropped before these.
};

// Thread-safe. Registers a glog sink while it exists.
class JobLogCapture {
 public:
  struct Limits {
    int64_t max_lines = 20000;
    int64_t max_bytes = 4 * 1024 * 1024;
  };
  explicit JobLogCapture(Limits limits);
  ~JobLogCapture();
  JobLogCapture(const JobLogCapture&) = delete;
  JobLogCapture& operator=(const JobLogCapture&) = delete;

  // Lines logged from now on belong to `job_id`, with no rank yet.
  void BeginJob(const std::string& job_id);
  // ... to this generation and rank of the job.
  void SetRank(int64_t generation, int32_t rank);
  // Lines logged from now on belong to no job and are not kept.
  void EndJob();

  // Up to `max_lines` queued lines of the oldest job in the queue (none
  // when the queue is empty).
  std::optional<JobLogBatch> Take(int max_lines, int64_t max_bytes);
  // A batch the coordinator did not take, back at the front of the queue
  // (its oldest lines dropped and counted if the queue is now too full).
  void PutBack(JobLogBatch batch);
  // Waits up to `timeout` until `min_lines` lines are queued, or EndJob or
  // Wake was called since the last wait.
  void AwaitLines(int64_t min_lines, absl::Duration timeout);
  void Wake();
  int64_t queued() const;
  // Every line dropped since the start, for tests and metrics.
  int64_t dropped_total() const;

  // A line logged now (the sink's call): queued when a job is being
  // served, split at newlines. `severity` is glog's name ("INFO", ...).
  void Add(const char* severity, int64_t time_ms, const char* message,
           size_t message_len);

  // The queue's copy of a line: valid UTF-8 (a protobuf string must be),
  // invalid bytes as U+FFFD, cut at 4096 bytes.
  static std::string CleanLine(const char* text, size_t len);

 private:
  class Sink;  // The glog sink, in the .cc.
  struct Queued {
    std::string job_id;
    v1::LogLine line;
  };
  void PushLocked(Queued q) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DropOldestLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops the oldest lines until the queue fits its limits.
  void TrimLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Adds `n` to the count of `job_id`'s dropped lines not yet reported.
  void CountDroppedLocked(const std::string& job_id, int64_t n)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Limits limits_;
  mutable absl::Mutex mu_;
  std::deque<Queued> queue_ ABSL_GUARDED_BY(mu_);
  int64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  // Per job: dropped lines not yet reported.
  std::vector<std::pair<std::string, int64_t>> dropped_ ABSL_GUARDED_BY(mu_);
  int64_t dropped_total_ ABSL_GUARDED_BY(mu_) = 0;
  std::string job_id_ ABSL_GUARDED_BY(mu_);
  int64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  int32_t rank_ ABSL_GUARDED_BY(mu_) = -1;
  bool wake_ ABSL_GUARDED_BY(mu_) = false;  // EndJob or Wake since a wait.
  // Declared last: registered once the queue exists, gone before it.
  std::unique_ptr<Sink> sink_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_LOGS_JOB_LOG_CAPTURE_H_
