#ifndef RINGLEADER_WORKER_DDP_BUCKET_PLAN_H_
#define RINGLEADER_WORKER_DDP_BUCKET_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ringleader {

// Which parameters share a gradient bucket, as in DDP: parameters are taken
// in reverse registration order (roughly the order backward produces their
// gradients), the first bucket closes once it holds `first_bucket_bytes`
// (small, so the first all-reduce starts early), later ones at
// `bucket_cap_bytes`. A parameter larger than the cap gets a bucket of its own.
struct BucketPlan {
  struct Bucket {
    std::vector<size_t> params;   // Indices into the parameter list.
    std::vector<size_t> offsets;  // Element offset of each in the bucket.
    size_t numel = 0;
  };
  std::vector<Bucket> buckets;
  // For parameter i: its bucket and its position in that bucket.
  std::vector<size_t> bucket_of;
  std::vector<size_t> slot_of;
};

BucketPlan PlanBuckets(const std::vector<size_t>& param_numels,
                       size_t element_bytes, size_t first_bucket_bytes,
                       size_t bucket_cap_bytes);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DDP_BUCKET_PLAN_H_
