#include "common/shard_plan.h"

#include <algorithm>

namespace ringleader {

v1::ShardAssignment PlanShard(const v1::JobSpec& spec,
                              const ShardPlanInput& in) {
  v1::ShardAssignment out;
  out.set_seed(spec.seed());
  out.set_epoch(in.epoch);
  out.set_world_size(in.world_size);
  out.set_rank(in.rank);
  out.set_dataset_size(in.dataset_size);
  out.set_shuffle(!in.test_split && spec.dataset().shuffle());
  out.set_drop_last(!in.test_split && spec.dataset().drop_last());
  if (!in.test_split && in.resume.epoch >= 0 && in.resume.epoch == in.epoch) {
    out.set_start_offset(
        std::clamp<int64_t>(in.resume.epoch_sample_offset, 0,
                            std::max<int64_t>(in.dataset_size, 0)));
  }
  return out;
}

}  // namespace ringleader
