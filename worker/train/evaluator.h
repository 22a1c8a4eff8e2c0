#ifndef RINGLEADER_WORKER_TRAIN_EVALUATOR_H_
#define RINGLEADER_WORKER_TRAIN_EVALUATOR_H_

// One pass over a rank's part of the test split in eval mode without
// gradients (a training script's validation loop), summing the task's
// metrics.

#include <c10/core/Device.h>

#include "absl/status/statusor.h"
#include "worker/data/batch_loader.h"
#include "worker/model/model.h"
#include "worker/train/metric_sums.h"
#include "worker/train/step/task.h"

namespace ringleader {

// Consumes `loader` (null: nothing to evaluate, empty sums). The model is
// put back in training mode afterwards. A model or data error is a job
// error naming `data`.
absl::StatusOr<MetricSums> Evaluate(Model& model, const Task& task,
                                    BatchLoader* loader, const Dataset& data,
                                    const c10::Device& device);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_EVALUATOR_H_
