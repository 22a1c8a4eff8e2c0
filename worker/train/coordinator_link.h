#ifndef RINGLEADER_WORKER_TRAIN_COORDINATOR_LINK_H_
#define RINGLEADER_WORKER_TRAIN_COORDINATOR_LINK_H_

// What a trainer says to the coordinator, and the only way it says it:
// progress reports (a job error is a last report), rank 0's checkpoint
// commits, and the step its heartbeats carry. The worker daemon implements
// it over its CoordinatorClient; tests implement it in memory. The trainer
// never waits on it on the training path: reports and commits go through
// its sender threads (progress/progress_reporter.h,
// checkpoint/commit_queue.h).

#include <atomic>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ringleader/v1/worker_service.pb.h"

namespace ringleader {

// Implementations are thread-safe.
class CoordinatorLink {
 public:
  virtual ~CoordinatorLink() = default;

  // Each is answered idempotently, so it is retried through an outage until
  // it is answered, refused, or `cancel` (may be null) is set by an owner
  // that goes away: then it gives up after the try in flight.
  virtual absl::Status ReportProgress(const v1::ReportProgressRequest& report,
                                      const std::atomic<bool>* cancel) = 0;
  virtual absl::StatusOr<v1::CommitCheckpointResponse> CommitCheckpoint(
      const v1::CommitCheckpointRequest& commit,
      const std::atomic<bool>* cancel) = 0;
  // The optimizer steps this rank completed, for its next heartbeat.
  virtual void SetStep(int64_t step) = 0;
  // This rank is leaving its generation for a preemption (its worker was
  // signalled to stop): waits for the verdict (WorkerService.Preempt). Not
  // retried: a preemption has a grace period, not an outage's patience.
  virtual absl::StatusOr<v1::PreemptResponse> Preempt(
      const v1::PreemptRequest& r) {
    return absl::UnimplementedError("this link cannot preempt");
  }
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_COORDINATOR_LINK_H_
