#ifndef RINGLEADER_WORKER_TRAIN_STEP_MODEL_PROBE_H_
#define RINGLEADER_WORKER_TRAIN_STEP_MODEL_PROBE_H_

// The model and the data checked against each other before training: a
// model that does not take the data's inputs, or whose output does not fit
// the task's loss and the targets, fails the job at start with torch's
// reason, instead of at the first step after the generation formed.

#include <c10/core/Device.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ringleader/v1/job.pb.h"
#include "worker/data/dataset.h"
#include "worker/model/model.h"
#include "worker/train/step/task.h"

namespace ringleader {

// What the job's model is built for (BuildModel's `shape`): for a built-in
// model, the data's one float input and the classes the spec's task or the
// data declare; InvalidArgument, naming the dataset, when the data has
// another input or no known number of classes. A TorchScript model brings
// its own shapes: the default, unused.
absl::StatusOr<ModelShape> ModelShapeFor(const v1::JobSpec& spec,
                                         const Dataset& train);

// Runs forward and the task's loss once on the first two samples of
// `data`, in eval mode without gradients, so nothing changes (BatchNorm's
// running statistics included); the model is back in training mode after.
// OK for an empty dataset; otherwise the error names the dataset.
absl::Status ProbeModel(Model& model, const Task& task, const Dataset& data,
                        const c10::Device& device);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_STEP_MODEL_PROBE_H_
