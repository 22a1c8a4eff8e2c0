#include "worker/ddp/bucket_plan.h"

#include <algorithm>

namespace ringleader {

BucketPlan PlanBuckets(const std::vector<size_t>& param_numels,
                       size_t element_bytes, size_t first_bucket_bytes,
                       size_t bucket_cap_bytes) {
  BucketPlan plan;
  plan.bucket_of.resize(param_numels.size());
  plan.slot_of.resize(param_numels.size());
  const size_t first_cap = std::max<size_t>(first_bucket_bytes, 1);
  const size_t cap = std::max<size_t>(bucket_cap_bytes, 1);
  BucketPlan::Bucket current;
  auto close = [&] {
    if (current.params.empty()) return;
    plan.buckets.push_back(std::move(current));
    current = BucketPlan::Bucket();
  };
  for (size_t k = param_numels.size(); k-- > 0;) {
    const size_t limit = plan.buckets.empty() ? first_cap : cap;
    const size_t bytes = param_numels[k] * element_bytes;
    if (!current.params.empty() &&
        (current.numel * element_bytes + bytes > limit)) {
      close();
    }
    plan.bucket_of[k] = plan.buckets.size();
    plan.slot_of[k] = current.params.size();
    current.params.push_back(k);
    current.offsets.push_back(current.numel);
    current.numel += param_numels[k];
    const size_t now_limit = plan.buckets.empty() ? first_cap : cap;
    if (current.numel * element_bytes >= now_limit) close();
  }
  close();
  return plan;
}

}  // namespace ringleader
