#ifndef RINGLEADER_WORKER_TRAIN_STEP_STEP_PLAN_H_
#define RINGLEADER_WORKER_TRAIN_STEP_STEP_PLAN_H_

// How many optimizer steps a job makes: per epoch at a world size, and in
// all as planned by a generation that starts somewhere in the job. The
// progress total and the learning-rate schedule's default horizon.

#include <cstdint>

#include "ringleader/v1/job.pb.h"

namespace ringleader {

// Where a generation starts: the epoch, the global optimizer steps already
// made, and the samples of the epoch already consumed (a position in its
// permutation), as a committed checkpoint records them.
struct StepPlanStart {
  int64_t epoch = 0;
  int64_t step = 0;
  int64_t epoch_sample_offset = 0;
};

// Optimizer steps of one whole epoch at `world` ranks: the loader's batches
// (DistributedSampler semantics) divided by gradient_accumulation_steps,
// rounded up (the epoch's last micro-batch always steps).
int64_t OptimizerStepsPerEpoch(const v1::JobSpec& spec, int64_t train_size,
                               int32_t world);

// The job's planned optimizer steps as seen by a generation of `world`
// ranks that starts at `start`: the steps already made plus those left at
// this world size (the rest of the started epoch from its offset, then
// whole epochs). A job that never changes size plans epochs x
// OptimizerStepsPerEpoch from its first step on; after a world-size change
// the total moves so that it still ends at the job's last step. Requires
// train_size >= 0, world >= 1, batch_size >= 1. Thread-safe.
int64_t PlannedOptimizerSteps(const v1::JobSpec& spec, int64_t train_size,
                              int32_t world, const StepPlanStart& start);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_STEP_STEP_PLAN_H_
