#ifndef RINGLEADER_TESTS_INTEGRATION_REFERENCE_TRAINING_H_
#define RINGLEADER_TESTS_INTEGRATION_REFERENCE_TRAINING_H_

#include <torch/torch.h>

#include <string>
#include <vector>

#include "ringleader/v1/job.pb.h"

namespace ringleader::testing {

// What a distributed job must end with: one process trains `spec` (a
// synthetic-dataset MLP job, shuffled, no drop_last) where each step's batch
// is the union of every rank's batch at that step for `world` ranks, and
// returns the final parameters.
std::vector<torch::Tensor> TrainSingleProcess(const v1::JobSpec& spec,
                                              int world);

// The parameters stored in the checkpoint at `path` for `spec`'s model.
std::vector<torch::Tensor> CheckpointParameters(const v1::JobSpec& spec,
                                                const std::string& path);

// Largest |a - b| over all parameters (1e9 if either is empty).
double MaxAbsDiff(const std::vector<torch::Tensor>& a,
                  const std::vector<torch::Tensor>& b);

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_INTEGRATION_REFERENCE_TRAINING_H_
