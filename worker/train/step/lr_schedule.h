#ifndef RINGLEADER_WORKER_TRAIN_STEP_LR_SCHEDULE_H_
#define RINGLEADER_WORKER_TRAIN_STEP_LR_SCHEDULE_H_

// The learning rate of each optimizer step (JobSpec.lr_schedule), a pure
// function of the global optimizer step: every rank computes the same value,
// and a job resumed from a checkpoint (which stores the step) continues the
// curve where it was, with no scheduler state to save.

#include <cstdint>

#include "ringleader/v1/job.pb.h"

namespace ringleader {

// The decay horizon of `schedule`: its decay_steps when set, else
// `planned_steps` (the job's planned optimizer steps, step_plan.h).
int64_t DecayHorizon(const v1::LrSchedule& schedule, int64_t planned_steps);

// The learning rate of optimizer step `step` (0-based: the optimizer steps
// done before it) for peak rate `lr`. With W = warmup_steps, H =
// DecayHorizon, m = min_lr and t = step:
//   t < W             lr * (t + 1) / W
//   CONSTANT          lr
//   STEP              max(m, lr * gamma^floor((t - W) / step_size))
//   COSINE, t < H     m + (lr - m) * (1 + cos(pi * (t - W) / (H - W))) / 2
//   LINEAR, t < H     lr - (lr - m) * (t - W) / (H - W)
//   COSINE/LINEAR     m from t = H on
// (gamma 0 means 0.1; UNSPECIFIED means CONSTANT.) Expects a schedule the
// job-spec validator accepted. Thread-safe.
double LearningRateAt(const v1::LrSchedule& schedule, double lr, int64_t step,
                      int64_t planned_steps);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_STEP_LR_SCHEDULE_H_
