#ifndef RINGLEADER_COMMON_DISTRIBUTED_SAMPLER_H_
#define RINGLEADER_COMMON_DISTRIBUTED_SAMPLER_H_

// The sample indices one rank trains on in one epoch, computed from the
// compact ShardAssignment the coordinator hands out. The coordinator's
// ShardPlanner and every worker call these functions, so they must give the
// same answer on every machine and compiler: the shuffle uses a PRNG and a
// bounded-integer draw written here, never std::shuffle or <random>
// distributions (whose output is implementation-defined).
//
// Semantics are PyTorch's DistributedSampler, extended with a resume offset:
//   perm      = shuffle ? Permutation(seed + epoch, N) : [0, 1, ..., N-1]
//   remaining = perm[start_offset:]
//   drop_last : remaining truncated to floor(len / W) * W
//   otherwise : remaining padded to ceil(len / W) * W by repeating from its
//               start (cyclically, so more than len pads are possible when
//               N < W, as in torch)
//   rank r    = remaining[r], remaining[r + W], remaining[r + 2W], ...
//
// start_offset is the number of samples of the epoch already consumed, as a
// position in the permutation. Because ranks are strided, after k steps of
// per-rank batch b at world W exactly perm[start_offset, start_offset+k*b*W)
// have been consumed; a new generation of any world size can continue from
// start_offset + k*b*W without repeating or skipping a sample (provided those
// k steps did not reach the padded tail).
//
// All functions are pure and thread-safe.

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ringleader/v1/worker_service.pb.h"

namespace ringleader {

// OK when `a` satisfies: world_size >= 1, 0 <= rank < world_size,
// dataset_size >= 0, 0 <= start_offset <= dataset_size. Otherwise
// InvalidArgument naming the field. Use it on anything read off the wire.
absl::Status ValidateShardAssignment(const v1::ShardAssignment& a);

// The epoch's permutation of [0, dataset_size): identity when !shuffle,
// otherwise a Fisher-Yates shuffle driven by splitmix64 seeded with
// seed + epoch (unsigned, wrapping; like torch, (seed, epoch) pairs with the
// same sum share a permutation). Requires dataset_size >= 0.
// Costs 8 * dataset_size bytes: every rank materializes the whole
// permutation, as torch.randperm does.
std::vector<int64_t> EpochPermutation(uint64_t seed, int64_t epoch,
                                      int64_t dataset_size, bool shuffle);

// This rank's indices, in training order. `a` must be valid (see
// ValidateShardAssignment); an invalid one is a programming error and
// CHECK-fails. Returns exactly ShardSize(a) indices.
std::vector<int64_t> ShardIndices(const v1::ShardAssignment& a);

// Every rank's samples of the epoch `a` describes, in position order: the
// (padded or truncated) remaining sequence, ShardSize(a) * world_size
// indices, whose elements r, r + W, r + 2W, ... are rank r's ShardIndices.
// The rank in `a` is ignored. Ranks that share each global batch unevenly
// (DdpSpec.balance_batches) cut their batches from it. `a` must be valid.
std::vector<int64_t> EpochSequence(const v1::ShardAssignment& a);

// ShardIndices for untrusted input: the validation error instead of a crash.
absl::StatusOr<std::vector<int64_t>> CheckedShardIndices(
    const v1::ShardAssignment& a);

// Number of indices ShardIndices(a) returns, without computing them: with
// R = dataset_size - start_offset and W = world_size,
// floor(R / W) when drop_last, else ceil(R / W). Equal for every rank.
// `a` must be valid (CHECK-fails otherwise).
int64_t ShardSize(const v1::ShardAssignment& a);

// How many of ShardIndices(a) are real samples rather than padding repeats:
// padding only ever fills the end of a shard, so these are its first
// UnpaddedShardSize(a) indices. Equals ShardSize(a) when drop_last or when
// nothing was padded. Lets evaluation count each test sample exactly once.
// `a` must be valid (CHECK-fails otherwise).
int64_t UnpaddedShardSize(const v1::ShardAssignment& a);

// Batches (loader steps) one rank runs over a whole epoch from offset 0:
// ceil(shard_size / per_rank_batch), shard_size as in ShardSize; the last
// batch may be partial. These are micro-batches: with gradient accumulation
// the trainer makes fewer optimizer steps. Requires dataset_size >= 0,
// world_size >= 1, per_rank_batch >= 1 (CHECK-fails otherwise).
int64_t StepsPerEpoch(int64_t dataset_size, int32_t world_size,
                      int32_t per_rank_batch, bool drop_last);

// Like StepsPerEpoch but for the rest of the epoch that `a` describes (its
// start_offset counted): ceil(ShardSize(a) / per_rank_batch). For progress
// totals after a resume or a re-rendezvous.
int64_t RemainingSteps(const v1::ShardAssignment& a, int32_t per_rank_batch);

}  // namespace ringleader

#endif  // RINGLEADER_COMMON_DISTRIBUTED_SAMPLER_H_
