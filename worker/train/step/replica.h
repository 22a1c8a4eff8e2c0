#ifndef RINGLEADER_WORKER_TRAIN_STEP_REPLICA_H_
#define RINGLEADER_WORKER_TRAIN_STEP_REPLICA_H_

// One rank's replica of a job's model, ready for the step: the task (loss
// and metrics), the model built from the job's seed (the same on every
// rank; rank 0's weights are broadcast anyway) or loaded from the user's
// TorchScript, on its device at the job's precision and checked against the
// data (model_probe.h), and its optimizer.

#include <torch/optim/optimizer.h>

#include <memory>

#include "absl/status/statusor.h"
#include "ringleader/v1/job.pb.h"
#include "worker/data/job_data.h"
#include "worker/model/model.h"
#include "worker/train/step/task.h"

namespace ringleader {

struct Replica {
  std::unique_ptr<Task> task;
  std::shared_ptr<Model> model;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
};

// A job error (job_error.h) when the job's own model does not build, fit
// the data or run at its precision, or its optimizer does not take it.
absl::StatusOr<Replica> BuildReplica(const v1::JobSpec& spec,
                                     const JobData& data,
                                     const c10::Device& device);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_STEP_REPLICA_H_
