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
#include "worker/data/batch_loader.h"
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
// Then, on the same batch, chooses the model's input layout
// (ChooseChannelsLastInputs).
absl::Status ProbeModel(Model& model, const Task& task, const Dataset& data,
                        const c10::Device& device);

// Whether `model` gets its image inputs channels-last on the CPU
// (Model::SetChannelsLastInputs), and sets it so: yes where the device is
// the CPU, `batch` has a 4-D floating input, the model has a 4-D parameter
// (a 2-D convolution's kernel; without one NHWC only adds a copy), and the
// batch's loss is the same either way (within 1e-5, relative). A model that
// reads its input's memory as laid out (view, as_strided) fails or computes
// something else channels-last, and keeps NCHW. Runs in eval mode without
// gradients, like ProbeModel; the model is back in training mode after.
bool ChooseChannelsLastInputs(Model& model, const Task& task,
                              const Batch& batch, const c10::Device& device);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_STEP_MODEL_PROBE_H_
