// The ranks agree on a split from the rates they measured: the same on
// every rank, after a warm-up window, only when it pays, and from a batch
// past every rank's prefetch.
#include "worker/train/batch_balancer.h"

#include <optional>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/worker/ddp/in_process_communicator.h"

namespace ringleader {
namespace {

using ::testing::ElementsAre;

using Changes = std::vector<std::optional<BatchBalancer::Change>>;

// Two ranks of `per_rank` samples a batch: rank r computes each of its
// micro-batches in `busy[r] / per_rank` a sample and prefetches
// prefetch[r]; what AfterMicroBatch says after each of `batches`
// micro-batches, window 2.
std::vector<Changes> Balance(std::vector<absl::Duration> busy,
                             std::vector<int> prefetch, int batches,
                             int64_t per_rank = 30) {
  InProcessGroup group(2);
  std::vector<Changes> out(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      InProcessCommunicator comm(&group, r);
      BatchBalancer::Options o;
      o.per_rank_batch = per_rank;
      o.prefetch = prefetch[r];
      o.window = 2;
      BatchBalancer balancer(&comm, c10::Device(c10::kCPU), o);
      for (int b = 0; b < batches; ++b) {
        const int64_t n = balancer.counts()[r];
        balancer.Add(n, busy[r] * n / per_rank);
        absl::StatusOr<std::optional<BatchBalancer::Change>> c =
            balancer.AfterMicroBatch(b);
        ASSERT_TRUE(c.ok()) << c.status();
        out[r].push_back(*c);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return out;
}

TEST(BatchBalancerTest, TheFasterRankTakesMoreFromPastEveryPrefetch) {
  const std::vector<Changes> got =
      Balance({absl::Milliseconds(1), absl::Milliseconds(2)}, {2, 3}, 8);
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(got[r].size(), 8u);
    // Window 1 (batches 0, 1) is warm-up; window 2 agrees after batch 3;
    // the rates hold after it, and so does the split.
    for (int b : {0, 1, 2, 4, 5, 6, 7})
      EXPECT_FALSE(got[r][b].has_value()) << b;
    ASSERT_TRUE(got[r][3].has_value()) << r;
    // Rank 1 reads up to 3 batches ahead: batch 3 + 3 + 1.
    EXPECT_EQ(got[r][3]->from_batch, 7);
    // 30000 against 15000 samples/s: 2/3 and 1/3 of 60.
    EXPECT_THAT(got[r][3]->counts, ElementsAre(40, 20));
  }
}

TEST(BatchBalancerTest, ASplitThatSavesUnderThreePercentIsNotTaken) {
  // 600 samples at 300000 and 291262 samples/s: 304/296 would save 1.3%.
  for (const Changes& c :
       Balance({absl::Microseconds(1000), absl::Microseconds(1030)}, {2, 2}, 8,
               300)) {
    for (const auto& change : c) EXPECT_FALSE(change.has_value());
  }
  // At 280374 samples/s, 310/290 saves 3.3%.
  const std::vector<Changes> got = Balance(
      {absl::Microseconds(1000), absl::Microseconds(1070)}, {2, 2}, 4, 300);
  ASSERT_TRUE(got[0][3].has_value());
  EXPECT_THAT(got[0][3]->counts, ElementsAre(310, 290));
}

TEST(BatchBalancerTest, RanksAlikeKeepTheEvenSplit) {
  for (const Changes& c :
       Balance({absl::Milliseconds(1), absl::Milliseconds(1)}, {2, 2}, 8)) {
    for (const auto& change : c) EXPECT_FALSE(change.has_value());
  }
}

}  // namespace
}  // namespace ringleader
