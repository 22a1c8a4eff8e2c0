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
#include "worker/train/step_plan.h"

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

// What a distributed job must end with: one process trains `spec` where each
// step's batch is the union of every rank's batch at that step for `world`
// ranks, and returns the final parameters. Whatever the job trains: its
// data through LoadJobData (synthetic, IDX, NPY, TOKENS), its model through
// BuildModel (built-in or TorchScript), its loss through the Task
// (worker/train/task.h: cross-entropy on the output, or the model's own),
// its optimizer through BuildOptimizer; shards as the coordinator plans them
// (DistributedSampler: shuffle, padding or drop_last as the spec says); each
// step's gradients clipped (clip_grad_norm) and its learning rate scheduled
// (lr_schedule, the horizon planned at the generation's world size) as the
// trainer does.
//
// Equal to DDP's averaged gradients when the loss is a mean over samples (or
// tokens) that all count: every rank's shard has the same size, so each
// step's per-rank batches do too (the last one of an epoch included), and
// the mean over their union is the mean of the ranks' means. (A rank-
// dependent number of counted tokens, e.g. ignore_index targets, would break
// that; no caller has them.) One micro-batch per step: gradient
// accumulation is not modelled.
std::vector<torch::Tensor> TrainSingleProcess(const v1::JobSpec& spec,
                                              int world);

// What a job that changed world size between generations must end with:
// each generation's steps on the union of its ranks' batches, from where it
// resumed. The first generation starts at zero; each next one at a step the
// previous one reached (a checkpoint it committed). `clipped`, when not
// null, counts the steps whose gradient norm was above clip_grad_norm.
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
