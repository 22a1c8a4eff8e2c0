#include "worker/ddp/buffer_sync.h"

#include <torch/torch.h>

#include <functional>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/worker/ddp/in_process_communicator.h"

namespace ringleader {
namespace {

// BatchNorm's buffers: running mean and variance (float), batch count
// (int64), differing per rank until synced.
std::vector<at::Tensor> Buffers(int rank) {
  return {torch::full({3}, 1.5f + rank), torch::full({2, 2}, -0.25f * rank),
          torch::tensor({int64_t{100} + rank}, torch::kLong),
          torch::empty({0})};
}

// Runs `body(sync, rank, buffers)` on a thread per rank, each rank's
// BufferSync over its own `buffers`, Buffers(rank) at the start; returns
// every rank's buffers afterwards.
using RankBody =
    std::function<void(BufferSync&, int, const std::vector<at::Tensor>&)>;
std::vector<std::vector<at::Tensor>> OnEveryRank(int world,
                                                 const RankBody& body) {
  InProcessGroup group(world);
  std::vector<std::vector<at::Tensor>> buffers;
  for (int r = 0; r < world; ++r) buffers.push_back(Buffers(r));
  std::vector<std::thread> ranks;
  for (int r = 0; r < world; ++r) {
    ranks.emplace_back([&, r] {
      InProcessCommunicator comm(&group, r);
      auto sync = BufferSync::Create(&comm, buffers[r]);
      ASSERT_TRUE(sync.ok()) << sync.status();
      body(**sync, r, buffers[r]);
    });
  }
  for (auto& t : ranks) t.join();
  return buffers;
}

TEST(BufferSyncTest, EveryRankTakesRootsBuffersExactly) {
  constexpr int kWorld = 3;
  const std::vector<std::vector<at::Tensor>> buffers =
      OnEveryRank(kWorld, [](BufferSync& sync, int, const auto&) {
        EXPECT_TRUE(sync.Sync().ok());
      });
  const std::vector<at::Tensor> want = Buffers(0);
  for (int r = 1; r < kWorld; ++r) {
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_TRUE(torch::equal(buffers[r][i], want[i])) << r << " " << i;
    }
  }
}

// Launched, the broadcast carries the root's buffers as they were at the
// launch; a receiving rank's buffers change only at Finish.
TEST(BufferSyncTest, LaunchTakesTheRootsBuffersAndFinishWritesThem) {
  const std::vector<std::vector<at::Tensor>> buffers = OnEveryRank(
      2, [](BufferSync& sync, int r, const std::vector<at::Tensor>& mine) {
        ASSERT_TRUE(sync.Launch().ok());
        EXPECT_EQ(sync.Launch().code(), absl::StatusCode::kFailedPrecondition);
        if (r == 1) {
          EXPECT_TRUE(torch::equal(mine[0], Buffers(1)[0]));
        }
        EXPECT_TRUE(sync.Finish().ok());
        EXPECT_TRUE(sync.Finish().ok());  // Nothing in flight: a no-op.
      });
  const std::vector<at::Tensor> want = Buffers(0);
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(torch::equal(buffers[1][i], want[i])) << i;
  }
}

TEST(BufferSyncTest, NoBuffersOrOneRankIsANoOp) {
  InProcessGroup group(1);
  InProcessCommunicator comm(&group, 0);
  auto none = BufferSync::Create(&comm, {});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE((*none)->Sync().ok());
  std::vector<at::Tensor> b = Buffers(2);
  auto one = BufferSync::Create(&comm, b);
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE((*one)->Sync().ok());
  EXPECT_TRUE(torch::equal(b[0], Buffers(2)[0]));
}

TEST(BufferSyncTest, RefusesNonContiguousBuffers) {
  InProcessGroup group(1);
  InProcessCommunicator comm(&group, 0);
  const at::Tensor strided = torch::zeros({4, 4}).t();
  EXPECT_EQ(BufferSync::Create(&comm, {strided}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ringleader
