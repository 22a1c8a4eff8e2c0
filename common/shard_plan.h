#ifndef RINGLEADER_COMMON_SHARD_PLAN_H_
#define RINGLEADER_COMMON_SHARD_PLAN_H_

// Which shard of an epoch (or of the test split) a rank trains on, as a
// compact ShardAssignment (common/distributed_sampler.h turns it into
// indices). One pure function for both sides: each rank plans its own
// shards locally, so the coordinator is not on the training path, and the
// coordinator's GetShard answers with the same plan for the tools and tests
// that still ask it. Every input is fixed for a generation: the job's
// spec, the epoch, the world size, the rank, the split's size, and where
// the generation resumed.

#include <cstdint>

#include "ringleader/v1/job.pb.h"
#include "ringleader/v1/worker_service.pb.h"

namespace ringleader {

// Where a generation resumed: the agreed checkpoint's epoch and its
// epoch_sample_offset (the samples of that epoch already consumed, as a
// position in the epoch's permutation). epoch < 0: a fresh start.
struct ShardResume {
  int64_t epoch = -1;
  int64_t epoch_sample_offset = 0;
};

struct ShardPlanInput {
  int64_t epoch = 0;  // The workers plan the test split as epoch 0.
  int32_t world_size = 1;
  int32_t rank = 0;
  int64_t dataset_size = 0;  // Of the split planned.
  bool test_split = false;
  ShardResume resume;
};

// The rank's shard: the spec's seed; for training its shuffle and
// drop_last, starting at the resume offset (clamped to the split) in the
// epoch the generation resumed in and at 0 in later ones; the test split
// is evaluated once, in order, without repeats: no shuffle, no drop_last,
// offset 0. No validation: ValidateShardAssignment the result
// of untrusted inputs.
v1::ShardAssignment PlanShard(const v1::JobSpec& spec,
                              const ShardPlanInput& in);

}  // namespace ringleader

#endif  // RINGLEADER_COMMON_SHARD_PLAN_H_
