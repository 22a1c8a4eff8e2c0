#ifndef RINGLEADER_WORKER_CLIENT_LINK_H_
#define RINGLEADER_WORKER_CLIENT_LINK_H_

#include <atomic>
#include <cstdint>

#include "worker/coordinator_client.h"
#include "worker/train/coordinator_link.h"

namespace ringleader {

// The trainer's link to the coordinator over the worker's CoordinatorClient,
// whose calls retry through an outage. Thread-safe, as the client is; the
// client outlives it.
class ClientLink final : public CoordinatorLink {
 public:
  explicit ClientLink(CoordinatorClient* client) : client_(client) {}

  absl::Status ReportProgress(const v1::ReportProgressRequest& report,
                              const std::atomic<bool>* cancel) override {
    return client_->ReportProgress(report, cancel);
  }
  absl::StatusOr<v1::CommitCheckpointResponse> CommitCheckpoint(
      const v1::CommitCheckpointRequest& commit,
      const std::atomic<bool>* cancel) override {
    return client_->CommitCheckpoint(commit, cancel);
  }
  void SetStep(int64_t step) override { client_->SetStep(step); }
  // The coordinator answers within its preemption window (5 s by default);
  // the bound leaves the rest of a 30 s grace for rank 0's checkpoint.
  absl::StatusOr<v1::PreemptResponse> Preempt(
      const v1::PreemptRequest& r) override {
    return client_->Preempt(r, kPreemptCallTimeout);
  }
  static constexpr absl::Duration kPreemptCallTimeout = absl::Seconds(15);

 private:
  CoordinatorClient* const client_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_CLIENT_LINK_H_
