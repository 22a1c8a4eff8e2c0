#ifndef RINGLEADER_WORKER_TRAIN_STEP_PRECISION_H_
#define RINGLEADER_WORKER_TRAIN_STEP_PRECISION_H_

// The job's precision (JobSpec.precision) applied to its model, once the
// model is on its device and before the model probe, so that a model that
// cannot run in bf16 fails there.

#include <c10/core/Device.h>

#include "absl/status/status.h"
#include "ringleader/v1/job.pb.h"
#include "worker/model/model.h"

namespace ringleader {

// PRECISION_BF16_MIXED turns the model's bf16 autocast on; a device that
// cannot compute in bf16 (a GPU before compute capability 8.0) is
// FailedPrecondition naming it. Anything else leaves float32.
absl::Status ApplyPrecision(const v1::JobSpec& spec, const c10::Device& device,
                            Model& model);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_STEP_PRECISION_H_
