#include "common/distributed_sampler.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"
#include "ringleader/v1/worker_service.pb.h"

namespace ringleader {
namespace {

// splitmix64 (Steele, Lea, Flood 2014): tiny, fully specified, and good
// enough for shuffling. Written out here so every build produces the same
// stream; changing it changes every permutation (the golden test notices).
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  // Uniform in [0, bound), bound >= 1. Rejection removes the modulo bias:
  // values below 2^64 mod bound would make small results more likely.
  uint64_t Below(uint64_t bound) {
    const uint64_t threshold = (0 - bound) % bound;  // 2^64 mod bound.
    for (;;) {
      const uint64_t r = Next();
      if (r >= threshold) return r % bound;
    }
  }

 private:
  uint64_t state_;
};

// Samples one rank gets from `remaining` samples: see the header.
int64_t ShardSizeOf(int64_t remaining, int64_t world, bool drop_last) {
  return drop_last ? remaining / world : (remaining + world - 1) / world;
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

absl::Status ValidateShardAssignment(const v1::ShardAssignment& a) {
  if (a.world_size() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("shard assignment: world_size must be >= 1 (got ",
                     a.world_size(), ")"));
  }
  if (a.rank() < 0 || a.rank() >= a.world_size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shard assignment: rank must be in [0, world_size=", a.world_size(),
        ") (got ", a.rank(), ")"));
  }
  if (a.dataset_size() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("shard assignment: dataset_size must be >= 0 (got ",
                     a.dataset_size(), ")"));
  }
  if (a.start_offset() < 0 || a.start_offset() > a.dataset_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("shard assignment: start_offset must be in [0, "
                     "dataset_size=",
                     a.dataset_size(), "] (got ", a.start_offset(), ")"));
  }
  return absl::OkStatus();
}

std::vector<int64_t> EpochPermutation(uint64_t seed, int64_t epoch,
                                      int64_t dataset_size, bool shuffle) {
  CHECK_GE(dataset_size, 0);
  std::vector<int64_t> perm(static_cast<size_t>(dataset_size));
  for (int64_t i = 0; i < dataset_size; ++i) perm[i] = i;
  if (!shuffle) return perm;
  // Unsigned addition wraps, so every (seed, epoch) is defined.
  SplitMix64 rng(seed + static_cast<uint64_t>(epoch));
  for (int64_t i = dataset_size - 1; i > 0; --i) {
    const int64_t j =
        static_cast<int64_t>(rng.Below(static_cast<uint64_t>(i) + 1));
    std::swap(perm[i], perm[j]);
  }
  return perm;
}

namespace {

// Positions first, first + stride, ... (`count` of them) of the remaining
// sequence of `a`, as sample indices.
std::vector<int64_t> SequenceSlice(const v1::ShardAssignment& a, int64_t first,
                                   int64_t stride, int64_t count) {
  const absl::Status valid = ValidateShardAssignment(a);
  CHECK(valid.ok()) << valid;
  const int64_t offset = a.start_offset();
  const int64_t remaining = a.dataset_size() - offset;
  // Without shuffling perm[p] == p: skip materializing the identity.
  std::vector<int64_t> perm;
  if (a.shuffle()) {
    perm = EpochPermutation(a.seed(), a.epoch(), a.dataset_size(), true);
  }
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    // Position in the (possibly padded) remaining sequence; positions past
    // its end wrap to its start, which is torch's padding. count > 0
    // implies remaining > 0, so the modulo is safe.
    const int64_t pos = (first + i * stride) % remaining;
    const int64_t p = offset + pos;
    out.push_back(a.shuffle() ? perm[p] : p);
  }
  return out;
}

}  // namespace

std::vector<int64_t> ShardIndices(const v1::ShardAssignment& a) {
  return SequenceSlice(a, a.rank(), a.world_size(), ShardSize(a));
}

std::vector<int64_t> EpochSequence(const v1::ShardAssignment& a) {
  return SequenceSlice(a, 0, 1, ShardSize(a) * a.world_size());
}

absl::StatusOr<std::vector<int64_t>> CheckedShardIndices(
    const v1::ShardAssignment& a) {
  if (absl::Status s = ValidateShardAssignment(a); !s.ok()) return s;
  return ShardIndices(a);
}

int64_t ShardSize(const v1::ShardAssignment& a) {
  const absl::Status valid = ValidateShardAssignment(a);
  CHECK(valid.ok()) << valid;
  return ShardSizeOf(a.dataset_size() - a.start_offset(), a.world_size(),
                     a.drop_last());
}

int64_t UnpaddedShardSize(const v1::ShardAssignment& a) {
  const int64_t size = ShardSize(a);
  // Index i of rank r sits at position r + i*W of the padded sequence and is
  // real iff that position is below the unpadded length R.
  const int64_t remaining = a.dataset_size() - a.start_offset();
  if (a.rank() >= remaining) return 0;
  return std::min(size, CeilDiv(remaining - a.rank(), a.world_size()));
}

int64_t StepsPerEpoch(int64_t dataset_size, int32_t world_size,
                      int32_t per_rank_batch, bool drop_last) {
  CHECK_GE(dataset_size, 0);
  CHECK_GE(world_size, 1);
  CHECK_GE(per_rank_batch, 1);
  return CeilDiv(ShardSizeOf(dataset_size, world_size, drop_last),
                 per_rank_batch);
}

int64_t RemainingSteps(const v1::ShardAssignment& a, int32_t per_rank_batch) {
  CHECK_GE(per_rank_batch, 1);
  return CeilDiv(ShardSize(a), per_rank_batch);
}

}  // namespace ringleader
