#ifndef RINGLEADER_TESTS_INTEGRATION_REFERENCE_TRAINING_H_
#define RINGLEADER_TESTS_INTEGRATION_REFERENCE_TRAINING_H_

#include <torch/torch.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ringleader/v1/job.pb.h"
#include "worker/data/dataset.h"
#include "worker/model/model.h"
#include "worker/train/step/step_plan.h"

namespace ringleader::testing {

// One generation of a distributed run, as the reference replays it: `world`
// ranks from `start` (where the generation resumed: the committed
// checkpoint's epoch, step and sample offset; zeros for the first) until the
// next generation's start step, or the job's end.
struct ReferenceGeneration {
  int world = 1;
  StepPlanStart start;
};

// `spec`'s model as the trainer builds it: a built-in one for the shape of
// the data (one float input, the spec's or the data's classes), a
// TorchScript one from its file; null (and a test failure) if it cannot.
std::shared_ptr<Model> BuildJobModel(const v1::JobSpec& spec,
                                     const Dataset& train);

// What a distributed job must end with, computed in one process without a
// communicator: at each step every rank's own gradient from its own batch
// (its shard as the coordinator plans it: DistributedSampler's shuffle,
// padding or drop_last; each rank starting from the same BatchNorm buffers,
// rank 0's kept after the step, as DDP's broadcast_buffers does), then the
// all-reduce as the reducer leaves it:
//   none:       g = (g_0 + g_1 + ... ) / world, summed in rank order
//   fp16, bf16: PyTorch's compression hook, c_r = round16(g_r) / world,
//               g = round16(float32(c_0) + float32(c_1) + ...)
// (the sum in rank order is what the shared-memory transport computes for
// any world and every transport for 2 ranks, communicator.h), then clipping
// (clip_grad_norm), the scheduled learning rate (lr_schedule, its horizon
// planned at the generation's world size) and the optimizer's step, as the
// trainer does; returns the final parameters. Whatever the job trains: its
// data through LoadJobData (synthetic, IDX, NPY, TOKENS), its model through
// BuildModel (built-in or TorchScript), its loss through the Task
// (worker/train/task.h), its optimizer through BuildOptimizer. Runs LibTorch
// on one thread, as the workers do, so each rank's gradient is the same bits
// as the worker's and a job over shared memory can be held to it exactly.
// One micro-batch per step: gradient accumulation is not modelled.
std::vector<torch::Tensor> TrainSingleProcess(const v1::JobSpec& spec,
                                              int world);

// What a job that changed world size between generations must end with:
// each generation's steps at its world size as above, from where it resumed.
// The first generation starts at zero; each next one at a step the previous one
// reached (a checkpoint it committed). `clipped`, when not null, counts the
// steps whose gradient norm was above clip_grad_norm.
std::vector<torch::Tensor> TrainSingleProcess(
    const v1::JobSpec& spec,
    const std::vector<ReferenceGeneration>& generations,
    int64_t* clipped = nullptr);

// The parameters stored in the checkpoint at `path` for `spec`'s model.
std::vector<torch::Tensor> CheckpointParameters(const v1::JobSpec& spec,
                                                const std::string& path);

// Parameters and buffers by torch's dotted names (state_dict's keys).
std::map<std::string, torch::Tensor> NamedState(const Model& model);

// NamedState of `spec`'s model with the checkpoint at `path` loaded.
std::map<std::string, torch::Tensor> CheckpointState(const v1::JobSpec& spec,
                                                     const std::string& path);

// Largest |a - b| over all parameters (1e9 if either is empty).
double MaxAbsDiff(const std::vector<torch::Tensor>& a,
                  const std::vector<torch::Tensor>& b);

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_INTEGRATION_REFERENCE_TRAINING_H_
