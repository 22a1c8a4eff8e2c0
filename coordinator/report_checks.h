#ifndef RINGLEADER_COORDINATOR_REPORT_CHECKS_H_
#define RINGLEADER_COORDINATOR_REPORT_CHECKS_H_

// Range checks of the numbers and paths a rank reports (progress, checkpoint
// commits) against what its job could have reached: a rank that reports
// step INT64_MAX, epoch 10^12 or a checkpoint outside the job's directory
// would otherwise poison the job's record (every honest commit after a
// step INT64_MAX was refused as older). Pure functions; thread-safe.

#include <cstdint>

#include "absl/status/status.h"
#include "ringleader/v1/job.pb.h"
#include "ringleader/v1/worker_service.pb.h"

namespace ringleader {

// The step bound when the training split's size is not known yet.
inline constexpr int64_t kMaxStepsUnknownSize = int64_t{1} << 50;

// The most optimizer steps a job may report or commit: epochs times the
// steps of an epoch at world size 1 (the most an epoch can take), plus one
// per generation and epoch (a generation that ends mid-epoch can leave a
// short batch behind). `train_size` < 0: not known yet, kMaxStepsUnknownSize.
int64_t MaxJobSteps(const v1::JobSpec& spec, int64_t train_size,
                    int64_t generation);

// INVALID_ARGUMENT naming the field: path not a clean absolute path under
// spec.checkpoint_dir, epoch outside [0, epochs], step outside [0,
// MaxJobSteps], epoch_sample_offset outside [0, train_size] (when known).
// FAILED_PRECONDITION when the job has no checkpoint_dir.
absl::Status CheckCommitNumbers(const v1::JobSpec& spec, int64_t train_size,
                                const v1::CommitCheckpointRequest& r);

// INVALID_ARGUMENT naming the field: epoch or eval_epoch outside [0,
// epochs], step or total_steps outside [0, MaxJobSteps], step_time_ms,
// grad_norm or final_train_loss not finite (or negative, but the loss).
absl::Status CheckProgressNumbers(const v1::JobSpec& spec, int64_t train_size,
                                  const v1::ReportProgressRequest& r);

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_REPORT_CHECKS_H_
