#ifndef RINGLEADER_WORKER_TRAIN_PROGRESS_REPORTER_H_
#define RINGLEADER_WORKER_TRAIN_PROGRESS_REPORTER_H_

#include <functional>
#include <optional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "ringleader/v1/worker_service.pb.h"

namespace ringleader {

// Sends progress reports off the training thread: Submit never blocks on the
// network; if a report is still in flight, a newer one replaces the queued
// one (the coordinator only keeps the latest per rank anyway). Flush waits
// until everything submitted was sent. Thread-safe.
class ProgressReporter {
 public:
  using Send = std::function<absl::Status(const v1::ReportProgressRequest&)>;

  explicit ProgressReporter(Send send);
  ~ProgressReporter();

  void Submit(v1::ReportProgressRequest report);
  // Returns the first send error since the last Flush (reports are advisory:
  // a lost one is superseded by the next).
  absl::Status Flush();
  int64_t sent() const;

 private:
  void Loop();

  Send send_;
  mutable absl::Mutex mu_;
  std::optional<v1::ReportProgressRequest> queued_ ABSL_GUARDED_BY(mu_);
  bool busy_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  int64_t sent_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_PROGRESS_REPORTER_H_
