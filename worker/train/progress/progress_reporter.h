#ifndef RINGLEADER_WORKER_TRAIN_PROGRESS_PROGRESS_REPORTER_H_
#define RINGLEADER_WORKER_TRAIN_PROGRESS_PROGRESS_REPORTER_H_

#include <atomic>
#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/sender_loop.h"
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
    bool kept = false;  // Never replaced by a later report.
  };
  // Latest wins, but for kept reports.
  static SenderLoop<Entry>::Rules LatestWins();
  // Whether `report` is kept whoever submits it: the final one, or one
  // with a higher eval_epoch than any before (which it records).
  bool Keeps(const v1::ReportProgressRequest& report);

  // The highest eval_epoch submitted.
  std::atomic<int64_t> eval_epoch_{0};
  SenderLoop<Entry> loop_;  // Last: its thread stops first.
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_PROGRESS_PROGRESS_REPORTER_H_
