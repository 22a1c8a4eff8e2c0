#include "worker/train/step/step_plan.h"

#include <algorithm>

#include "common/distributed_sampler.h"
#include "ringleader/v1/worker_service.pb.h"

namespace ringleader {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

int64_t OptimizerStepsPerEpoch(const v1::JobSpec& spec, int64_t train_size,
                               int32_t world) {
  return CeilDiv(StepsPerEpoch(train_size, world, spec.batch_size(),
                               spec.dataset().drop_last()),
                 std::max(1, spec.gradient_accumulation_steps()));
}

int64_t PlannedOptimizerSteps(const v1::JobSpec& spec, int64_t train_size,
                              int32_t world, const StepPlanStart& start) {
  if (start.epoch >= spec.epochs()) return start.step;
  // The started epoch's shard from its offset, as GetShard will plan it
  // (every rank's shard has the same size).
  v1::ShardAssignment rest;
  rest.set_world_size(world);
  rest.set_rank(0);
  rest.set_dataset_size(train_size);
  rest.set_drop_last(spec.dataset().drop_last());
  rest.set_start_offset(
      std::clamp<int64_t>(start.epoch_sample_offset, 0, train_size));
  const int64_t first =
      CeilDiv(RemainingSteps(rest, spec.batch_size()),
              std::max(1, spec.gradient_accumulation_steps()));
  const int64_t whole = spec.epochs() - start.epoch - 1;
  return start.step + first +
         whole * OptimizerStepsPerEpoch(spec, train_size, world);
}

}  // namespace ringleader
