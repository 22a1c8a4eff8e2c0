#ifndef RINGLEADER_TESTS_INTEGRATION_COMPRESSED_REFERENCE_H_
#define RINGLEADER_TESTS_INTEGRATION_COMPRESSED_REFERENCE_H_

#include <torch/torch.h>

#include <vector>

#include "ringleader/v1/job.pb.h"

namespace ringleader::testing {

// What a job with `spec.ddp().gradient_compression()` (FP16 or BF16) on
// `world` ranks must end with, computed in one process without a
// communicator: at each step every rank's own gradient from its own batch
// (its shard, as the coordinator plans it), then PyTorch's compression hook
// by hand,
//   c_r = g_r.to(fp16 or bf16).div_(world)
//   g   = float32(round16(float32(c_0) + float32(c_1) + ...))
// (the sum in rank order, rounded once: what the shared-memory transport
// does for any world and every transport does for 2 ranks, communicator.h),
// then the optimizer's step. Returns the final parameters.
// Runs LibTorch on one thread, as the workers do, so each rank's gradient is
// the same bits as the worker's and the result can be compared exactly.
// Built-in models only; no gradient accumulation.
std::vector<torch::Tensor> TrainSingleProcessCompressed(const v1::JobSpec& spec,
                                                        int world);

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_INTEGRATION_COMPRESSED_REFERENCE_H_
