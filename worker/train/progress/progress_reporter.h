#ifndef RINGLEADER_WORKER_TRAIN_PROGRESS_PROGRESS_REPORTER_H_
#define RINGLEADER_WORKER_TRAIN_PROGRESS_PROGRESS_REPORTER_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "ringleader/v1/worker_service.pb.h"

namespace ringleader {

// Sends progress reports off the training thread, in order: Submit never
// blocks on the network, and the send (CoordinatorClient::ReportProgress)
// retries through a coordinator outage while the reports queue up. An
// ordinary report replaces an ordinary one still queued (the coordinator
// only keeps the latest per rank); a report that carries a new per-epoch
// evaluation (an eval_epoch higher than any submitted before), the final
// report and a report that is Delivered are never replaced: the
// coordinator records each evaluation, and the ranks have moved on.
// Thread-safe.
class ProgressReporter {
 public:
  // Sends one report, retrying as long as it is worth it; `cancel` is set
  // when the reporter goes away (the send should give up after its try).
  using Send = std::function<absl::Status(const v1::ReportProgressRequest&,
                                          const std::atomic<bool>* cancel)>;

  explicit ProgressReporter(Send send);
  // Gives up the reports not sent yet and waits for the send in flight.
  ~ProgressReporter();

  void Submit(v1::ReportProgressRequest report);
  // Submits `report` and waits up to `timeout` until it was sent (after
  // every report before it): its send's outcome, DEADLINE_EXCEEDED if it
  // was not sent in time (it stays queued).
  absl::Status Deliver(v1::ReportProgressRequest report,
                       absl::Duration timeout);
  // Waits up to `timeout` until everything submitted was sent; the first
  // send error since the last Flush (reports are advisory: a lost one is
  // superseded by the next), DEADLINE_EXCEEDED if not all were sent.
  absl::Status Flush(absl::Duration timeout);
  // Reports sent (whatever the outcome).
  int64_t sent() const;

 private:
  struct Entry {
    v1::ReportProgressRequest report;
    int64_t seq = 0;
    bool kept = false;  // Never replaced by a later report.
  };

  // Queues `report`; its sequence number.
  int64_t Enqueue(v1::ReportProgressRequest report, bool kept)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Loop();

  const Send send_;
  std::atomic<bool> cancel_{false};
  mutable absl::Mutex mu_;
  std::deque<Entry> queue_ ABSL_GUARDED_BY(mu_);
  int64_t next_seq_ ABSL_GUARDED_BY(mu_) = 1;
  // Every report up to this sequence number was sent (or replaced).
  int64_t done_through_ ABSL_GUARDED_BY(mu_) = 0;
  // The highest eval_epoch submitted: a report with a higher one is kept.
  int64_t eval_epoch_ ABSL_GUARDED_BY(mu_) = 0;
  // The report Deliver waits for (0: none), and its outcome once sent.
  int64_t awaited_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<absl::Status> awaited_outcome_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  int64_t sent_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_PROGRESS_PROGRESS_REPORTER_H_
