#ifndef RINGLEADER_WORKER_LOGS_JOB_LOG_SHIPPER_H_
#define RINGLEADER_WORKER_LOGS_JOB_LOG_SHIPPER_H_

// Drains the job log capture to the coordinator (WorkerService.AppendLogs)
// on a thread of its own: about once a second, or sooner when half a batch
// is queued. A batch the coordinator could not take (it is away, slow, or
// does not know this worker yet) goes back to the front of the queue and
// waits for the next round; the queue's bound, not a retry count, limits
// what is kept meanwhile. A batch it refuses for good (a job it never
// assigned, or gone) is discarded. Not common/sender_loop.h: that sends
// each item once, in order, and an item that failed is done; log lines want
// the opposite, to stay queued through an outage and be merged into fewer
// calls.

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "ringleader/v1/logs.pb.h"
#include "worker/logs/job_log_capture.h"

namespace ringleader {

// Thread-safe.
class JobLogShipper {
 public:
  // Sends one call; fills in the worker's id. Runs on the shipper's thread.
  using Send = std::function<absl::Status(v1::AppendLogsRequest& request)>;
  struct Options {
    absl::Duration interval = absl::Seconds(1);
    int max_lines = 1000;            // Per call (the coordinator's limit).
    int64_t max_bytes = 768 * 1024;  // Of text per call (below its 1 MiB).
    // Refusals in a row that may be the worker's registration catching up
    // (NOT_FOUND, UNAUTHENTICATED) before a batch is discarded.
    int refusals_before_discard = 5;
  };

  // `capture` must outlive the shipper.
  JobLogShipper(JobLogCapture* capture, Send send, Options options);
  JobLogShipper(JobLogCapture* capture, Send send)
      : JobLogShipper(capture, std::move(send), Options()) {}
  ~JobLogShipper();
  JobLogShipper(const JobLogShipper&) = delete;
  JobLogShipper& operator=(const JobLogShipper&) = delete;

  // Waits up to `timeout` until the queue is empty after a round (the lines
  // sent or discarded); false when lines are still queued.
  bool Flush(absl::Duration timeout);

  int64_t sent_lines() const { return sent_lines_; }
  int64_t discarded_lines() const { return discarded_lines_; }

 private:
  void Loop();
  // Sends batches until the queue is empty or a call fails.
  void DrainOnce();
  // What to do with a batch after `s`: true when it is done with.
  bool Settle(const absl::Status& s, JobLogBatch& batch);

  JobLogCapture* const capture_;
  const Send send_;
  const Options options_;
  std::atomic<int64_t> sent_lines_{0};
  std::atomic<int64_t> discarded_lines_{0};
  int refusals_ = 0;  // The loop's thread only.

  mutable absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  int64_t rounds_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_LOGS_JOB_LOG_SHIPPER_H_
