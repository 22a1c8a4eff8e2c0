#include "common/distributed_sampler.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ringleader/v1/worker_service.pb.h"

namespace ringleader {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

v1::ShardAssignment Assignment(int64_t n, int32_t world, int32_t rank,
                               bool shuffle, bool drop_last, uint64_t seed = 7,
                               int64_t epoch = 0, int64_t offset = 0) {
  v1::ShardAssignment a;
  a.set_seed(seed);
  a.set_epoch(epoch);
  a.set_world_size(world);
  a.set_rank(rank);
  a.set_dataset_size(n);
  a.set_shuffle(shuffle);
  a.set_drop_last(drop_last);
  a.set_start_offset(offset);
  return a;
}

// Every rank's shard of one (assignment with rank varied), concatenated.
std::vector<std::vector<int64_t>> AllShards(v1::ShardAssignment a) {
  std::vector<std::vector<int64_t>> shards;
  for (int32_t r = 0; r < a.world_size(); ++r) {
    a.set_rank(r);
    shards.push_back(ShardIndices(a));
  }
  return shards;
}

TEST(DistributedSamplerTest, GoldenPermutationPinsThePrng) {
  // Computed independently (Python splitmix64 + Fisher-Yates). If this fails,
  // the PRNG or the shuffle changed, and resumed jobs would see different
  // data orders on upgraded nodes.
  EXPECT_THAT(EpochPermutation(42, 0, 10, true),
              ElementsAre(0, 9, 5, 8, 6, 4, 7, 2, 1, 3));
  EXPECT_THAT(EpochPermutation(42, 1, 10, true),
              ElementsAre(4, 2, 5, 6, 1, 3, 9, 8, 7, 0));
  EXPECT_THAT(EpochPermutation(0, 0, 20, true),
              ElementsAre(10, 14, 4, 6, 18, 5, 12, 3, 9, 13, 7, 19, 8, 17, 0,
                          11, 2, 1, 16, 15));
}

TEST(DistributedSamplerTest, GoldenShardWithOffsetAndPadding) {
  // N=100, offset 7, W=4, rank 1: 93 remaining, padded to 96.
  v1::ShardAssignment a = Assignment(100, 4, 1, true, false, 42, 3, 7);
  std::vector<int64_t> shard = ShardIndices(a);
  ASSERT_EQ(shard.size(), 24u);
  EXPECT_THAT(std::vector<int64_t>(shard.begin(), shard.begin() + 12),
              ElementsAre(65, 54, 88, 58, 18, 9, 66, 81, 17, 23, 28, 38));
}

TEST(DistributedSamplerTest, NoShuffleIsStridedLikeTorch) {
  // torch: indices 0..9 padded with 0, 1; rank r takes indices[r::3].
  EXPECT_THAT(AllShards(Assignment(10, 3, 0, false, false)),
              ElementsAre(ElementsAre(0, 3, 6, 9), ElementsAre(1, 4, 7, 0),
                          ElementsAre(2, 5, 8, 1)));
  EXPECT_THAT(AllShards(Assignment(10, 3, 0, false, true)),
              ElementsAre(ElementsAre(0, 3, 6), ElementsAre(1, 4, 7),
                          ElementsAre(2, 5, 8)));
}

TEST(DistributedSamplerTest, PadsCyclicallyWhenFewerSamplesThanRanks) {
  // torch: padding 3 > len 2, so [0, 1] * 2 truncated: [0, 1, 0, 1, 0].
  EXPECT_THAT(AllShards(Assignment(2, 5, 0, false, false)),
              ElementsAre(ElementsAre(0), ElementsAre(1), ElementsAre(0),
                          ElementsAre(1), ElementsAre(0)));
  for (const auto& shard : AllShards(Assignment(2, 5, 0, true, true))) {
    EXPECT_THAT(shard, IsEmpty());
  }
}

TEST(DistributedSamplerTest, EmptyDatasetAndFullyConsumedEpochGiveNothing) {
  for (bool drop_last : {false, true}) {
    for (const auto& shard : AllShards(Assignment(0, 3, 0, true, drop_last))) {
      EXPECT_THAT(shard, IsEmpty());
    }
    for (const auto& shard :
         AllShards(Assignment(10, 3, 0, true, drop_last, 1, 0, 10))) {
      EXPECT_THAT(shard, IsEmpty());
    }
  }
}

// The core property over many shapes: all ranks together cover the remaining
// part of the epoch exactly once, except that padding adds repeats (exactly
// `padding` of them) and drop_last removes the tail.
TEST(DistributedSamplerTest, ShardsPartitionTheEpoch) {
  const std::vector<int64_t> sizes = {0, 1, 2, 3, 5, 7, 10, 16, 17, 100, 1001};
  const std::vector<int32_t> worlds = {1, 2, 3, 4, 7, 8, 16};
  const std::vector<uint64_t> seeds = {0, 42,
                                       std::numeric_limits<uint64_t>::max()};
  for (int64_t n : sizes) {
    for (int32_t w : worlds) {
      for (bool drop_last : {false, true}) {
        for (bool shuffle : {false, true}) {
          for (uint64_t seed : seeds) {
            for (int64_t offset : {int64_t{0}, n / 3}) {
              SCOPED_TRACE(absl::StrCat(
                  "n=", n, " w=", w, " drop_last=", drop_last,
                  " shuffle=", shuffle, " seed=", seed, " offset=", offset));
              v1::ShardAssignment a =
                  Assignment(n, w, 0, shuffle, drop_last, seed, 5, offset);
              const int64_t remaining = n - offset;
              const int64_t expected_size =
                  drop_last ? remaining / w : (remaining + w - 1) / w;
              ASSERT_EQ(ShardSize(a), expected_size);

              std::map<int64_t, int> count;
              for (const auto& shard : AllShards(a)) {
                ASSERT_EQ(static_cast<int64_t>(shard.size()), expected_size);
                for (int64_t i : shard) ++count[i];
              }
              // The samples that must be covered: perm[offset:].
              std::vector<int64_t> perm = EpochPermutation(seed, 5, n, shuffle);
              std::vector<int64_t> tail(perm.begin() + offset, perm.end());
              int64_t total = 0;
              for (const auto& [index, c] : count) total += c;
              ASSERT_EQ(total, expected_size * w);
              if (drop_last) {
                // Each sample at most once; exactly the first total of tail.
                for (int64_t k = 0; k < remaining; ++k) {
                  ASSERT_EQ(count[tail[k]], k < total ? 1 : 0) << k;
                }
              } else {
                int64_t repeats = 0;
                for (int64_t index : tail) {
                  ASSERT_GE(count[index], 1) << index;
                  repeats += count[index] - 1;
                }
                ASSERT_EQ(repeats, expected_size * w - remaining);
                // Nothing outside the tail (already consumed) comes back.
                ASSERT_EQ(count.size(), static_cast<size_t>(remaining));
              }
            }
          }
        }
      }
    }
  }
}

TEST(DistributedSamplerTest, RecomputationIsIdentical) {
  v1::ShardAssignment a = Assignment(5000, 6, 4, true, false, 1234, 17, 300);
  EXPECT_EQ(ShardIndices(a), ShardIndices(a));
  EXPECT_EQ(EpochPermutation(9, 3, 777, true),
            EpochPermutation(9, 3, 777, true));
}

TEST(DistributedSamplerTest, ShuffleIsAPermutationThatDependsOnEpochAndSeed) {
  std::vector<int64_t> e0 = EpochPermutation(42, 0, 1000, true);
  std::vector<int64_t> e1 = EpochPermutation(42, 1, 1000, true);
  std::vector<int64_t> s43 = EpochPermutation(43, 5, 1000, true);
  std::vector<int64_t> sorted = e1;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> identity(1000);
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_EQ(sorted, identity);
  EXPECT_NE(e0, identity);
  EXPECT_NE(e0, e1);
  EXPECT_NE(e0, s43);
  EXPECT_EQ(EpochPermutation(42, 0, 1000, false), identity);
}

TEST(DistributedSamplerTest, SeedPlusEpochWrapsLikeUnsignedAddition) {
  // torch seeds with seed + epoch; only the sum matters, and it wraps.
  EXPECT_EQ(EpochPermutation(std::numeric_limits<uint64_t>::max(), 1, 50, true),
            EpochPermutation(0, 0, 50, true));
  EXPECT_EQ(EpochPermutation(10, 2, 50, true),
            EpochPermutation(11, 1, 50, true));
}

// Train k steps at world w1, then continue at world w2 from the consumed
// position: every sample of the epoch is seen exactly once (plus the second
// generation's padding, if its tail does not divide evenly).
TEST(DistributedSamplerTest, ResumeAtAnotherWorldSizeContinuesExactly) {
  struct Case {
    int64_t n;
    int32_t w1, w2, batch;
    int64_t k;
  };
  const std::vector<Case> cases = {
      {1000, 4, 5, 8, 10},   {1000, 4, 3, 8, 10}, {1000, 2, 7, 16, 3},
      {60000, 8, 3, 64, 50}, {97, 3, 1, 4, 2},    {97, 1, 4, 10, 9},
      {10, 2, 3, 1, 0},      {64, 4, 2, 4, 4},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat("n=", c.n, " w1=", c.w1, " w2=", c.w2,
                              " b=", c.batch, " k=", c.k));
    const int64_t consumed = c.k * c.batch * c.w1;
    ASSERT_LE(consumed, c.n) << "bad case: first part would reach padding";
    std::map<int64_t, int> count;
    for (const auto& shard :
         AllShards(Assignment(c.n, c.w1, 0, true, false, 99, 2, 0))) {
      ASSERT_GE(static_cast<int64_t>(shard.size()), c.k * c.batch);
      for (int64_t i = 0; i < c.k * c.batch; ++i) ++count[shard[i]];
    }
    // The first generation consumed exactly the permutation's prefix.
    std::vector<int64_t> perm = EpochPermutation(99, 2, c.n, true);
    for (int64_t p = 0; p < consumed; ++p) ASSERT_EQ(count[perm[p]], 1) << p;
    ASSERT_EQ(count.size(), static_cast<size_t>(consumed));

    v1::ShardAssignment second =
        Assignment(c.n, c.w2, 0, true, false, 99, 2, consumed);
    for (const auto& shard : AllShards(second)) {
      for (int64_t i : shard) ++count[i];
    }
    const int64_t padding = ShardSize(second) * c.w2 - (c.n - consumed);
    int64_t repeats = 0;
    for (int64_t i = 0; i < c.n; ++i) {
      ASSERT_GE(count[i], 1) << i;
      repeats += count[i] - 1;
    }
    EXPECT_EQ(repeats, padding);
  }
}

TEST(DistributedSamplerTest, UnpaddedPrefixesCoverTheEpochExactlyOnce) {
  for (int64_t n : {0, 1, 2, 5, 10, 17, 100}) {
    for (int32_t w : {1, 2, 3, 4, 7, 16}) {
      for (bool drop_last : {false, true}) {
        for (int64_t offset : {int64_t{0}, n / 2}) {
          SCOPED_TRACE(absl::StrCat("n=", n, " w=", w, " drop_last=", drop_last,
                                    " offset=", offset));
          v1::ShardAssignment a =
              Assignment(n, w, 0, true, drop_last, 3, 1, offset);
          std::map<int64_t, int> count;
          int64_t real = 0;
          for (int32_t r = 0; r < w; ++r) {
            a.set_rank(r);
            const std::vector<int64_t> shard = ShardIndices(a);
            const int64_t unpadded = UnpaddedShardSize(a);
            ASSERT_LE(unpadded, static_cast<int64_t>(shard.size()));
            if (drop_last) {
              ASSERT_EQ(unpadded, static_cast<int64_t>(shard.size()));
            }
            for (int64_t i = 0; i < unpadded; ++i) ++count[shard[i]];
            real += unpadded;
          }
          const int64_t remaining = n - offset;
          ASSERT_EQ(real, drop_last ? remaining / w * w : remaining);
          for (const auto& [index, c] : count) ASSERT_EQ(c, 1) << index;
        }
      }
    }
  }
  // N=2, W=5: ranks 2..4 hold only padding.
  v1::ShardAssignment a = Assignment(2, 5, 0, false, false);
  std::vector<int64_t> unpadded;
  for (int32_t r = 0; r < 5; ++r) {
    a.set_rank(r);
    unpadded.push_back(UnpaddedShardSize(a));
  }
  EXPECT_THAT(unpadded, ElementsAre(1, 1, 0, 0, 0));
}

TEST(DistributedSamplerTest, StepsPerEpochIsCeilOfShardOverBatch) {
  EXPECT_EQ(StepsPerEpoch(60000, 2, 64, false), 469);  // 30000 / 64 = 468.75
  EXPECT_EQ(StepsPerEpoch(60000, 3, 100, true), 200);
  EXPECT_EQ(StepsPerEpoch(10, 3, 2, false), 2);  // shard 4
  EXPECT_EQ(StepsPerEpoch(10, 3, 2, true), 2);   // shard 3
  EXPECT_EQ(StepsPerEpoch(10, 3, 3, true), 1);
  EXPECT_EQ(StepsPerEpoch(0, 3, 2, false), 0);
  EXPECT_EQ(StepsPerEpoch(2, 5, 8, true), 0);
  EXPECT_EQ(StepsPerEpoch(2, 5, 8, false), 1);
}

TEST(DistributedSamplerTest, RemainingStepsCountsFromTheOffset) {
  v1::ShardAssignment a = Assignment(60000, 2, 1, true, false, 1, 0, 6400);
  EXPECT_EQ(ShardSize(a), 26800);
  EXPECT_EQ(RemainingSteps(a, 64), 419);  // 26800 / 64 = 418.75
  a.set_start_offset(0);
  EXPECT_EQ(RemainingSteps(a, 64), StepsPerEpoch(60000, 2, 64, false));
}

TEST(DistributedSamplerTest, ValidationNamesTheBadField) {
  struct Case {
    v1::ShardAssignment a;
    const char* field;
  };
  const std::vector<Case> cases = {
      {Assignment(10, 0, 0, true, false), "world_size"},
      {Assignment(10, -2, 0, true, false), "world_size"},
      {Assignment(10, 2, 2, true, false), "rank"},
      {Assignment(10, 2, -1, true, false), "rank"},
      {Assignment(-1, 2, 0, true, false), "dataset_size"},
      {Assignment(10, 2, 0, true, false, 1, 0, -1), "start_offset"},
      {Assignment(10, 2, 0, true, false, 1, 0, 11), "start_offset"},
  };
  for (const Case& c : cases) {
    absl::Status s = ValidateShardAssignment(c.a);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.field;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.field));
    EXPECT_EQ(CheckedShardIndices(c.a).status(), s);
  }
  EXPECT_TRUE(
      ValidateShardAssignment(Assignment(10, 2, 1, true, false, 1, 0, 10))
          .ok());
}

TEST(DistributedSamplerTest, CheckedShardIndicesMatchesUnchecked) {
  v1::ShardAssignment a = Assignment(123, 5, 3, true, true, 8, 1, 20);
  absl::StatusOr<std::vector<int64_t>> checked = CheckedShardIndices(a);
  ASSERT_TRUE(checked.ok()) << checked.status();
  EXPECT_THAT(*checked, ElementsAreArray(ShardIndices(a)));
}

TEST(DistributedSamplerDeathTest, UncheckedCrashesOnInvalidInput) {
  EXPECT_DEATH(ShardIndices(Assignment(10, 0, 0, true, false)), "world_size");
}

}  // namespace
}  // namespace ringleader
