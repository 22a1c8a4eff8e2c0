// ShmCommunicator with its ranks as threads of this process (the segment is
// shared the same way as between processes: each rank opens and maps it),
// bootstrapped through an in-memory KvClient: argument checks, exact sums
// over chunk and slice boundaries, nothing left in /dev/shm, timeouts, and
// how a failure on one rank reaches the others. Real processes, including a
// peer that dies mid-collective, are in comm_multiprocess_test.cc.
#include "worker/comm/shm_communicator.h"

#include <dirent.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/worker/create_all.h"
#include "tests/worker/memory_kv_client.h"

namespace ringleader {
namespace {

using Comm = std::unique_ptr<ShmCommunicator>;

ShmCommunicator::Options Opts(size_t slot_bytes = 4096,
                              absl::Duration timeout = absl::Seconds(30)) {
  ShmCommunicator::Options o;
  o.slot_bytes = slot_bytes;
  o.timeout = timeout;
  return o;
}

std::vector<Comm> CreateAll(KvClient* kv, int world,
                            const ShmCommunicator::Options& options) {
  return testing::CreateAll<ShmCommunicator>(kv, world, options);
}

// Runs fn(rank) on one thread per rank.
template <typename Fn>
void OnEveryRank(int world, Fn fn) {
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) threads.emplace_back([&fn, r] { fn(r); });
  for (auto& t : threads) t.join();
}

// This process's segments still named in /dev/shm.
std::vector<std::string> OurSegments() {
  std::vector<std::string> out;
  const std::string prefix = absl::StrCat("ringleader-", getpid(), "-");
  if (DIR* d = opendir("/dev/shm")) {
    while (dirent* e = readdir(d)) {
      if (absl::StartsWith(e->d_name, prefix)) out.push_back(e->d_name);
    }
    closedir(d);
  }
  return out;
}

TEST(ShmCommunicatorTest, RejectsBadArguments) {
  MemoryKvClient kv;
  EXPECT_TRUE(absl::IsInvalidArgument(
      ShmCommunicator::Create(nullptr, 0, 1, Opts()).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      ShmCommunicator::Create(&kv, 2, 2, Opts()).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      ShmCommunicator::Create(&kv, 0, 0, Opts()).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      ShmCommunicator::Create(&kv, 0, 1, Opts(4096, absl::ZeroDuration()))
          .status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      ShmCommunicator::Create(&kv, 0, 1, Opts(100)).status()));

  auto c = ShmCommunicator::Create(&kv, 0, 1, Opts());
  ASSERT_TRUE(c.ok()) << c.status();
  float x = 1;
  EXPECT_TRUE(absl::IsInvalidArgument((*c)->Broadcast(&x, 4, 1)));
  EXPECT_TRUE(absl::IsInvalidArgument((*c)->Broadcast(nullptr, 4, 0)));
  EXPECT_TRUE(absl::IsInvalidArgument(
      (*c)->AllReduceSum(nullptr, 4, DataType::kFloat32)));
  EXPECT_TRUE((*c)->AllReduceSum(nullptr, 0, DataType::kFloat32).ok());
}

TEST(ShmCommunicatorTest, RanksOfOneProcessShareMemory) {
  MemoryKvClient kv;
  std::vector<bool> shared(3);
  OnEveryRank(3, [&](int r) {
    auto s = AllRanksShareMemory(&kv, r, 3, absl::Seconds(10));
    ASSERT_TRUE(s.ok()) << s.status();
    shared[r] = *s;
  });
  EXPECT_EQ(shared, (std::vector<bool>{true, true, true}));
}

TEST(ShmCommunicatorTest, ARankOnAnotherHostMeansNoSharing) {
  MemoryKvClient kv;
  ASSERT_TRUE(kv.Set("shm/0/host/1", "another-boot/0:0/ipc/uid0").ok());
  auto s = AllRanksShareMemory(&kv, 0, 2, absl::Seconds(10));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_FALSE(*s);
}

// Sizes around the chunk (1024 floats per 4 KiB slot) and slice boundaries,
// in every type, with sums exact in that type; then a broadcast over chunks.
TEST(ShmCommunicatorTest, ThreeRanksSumExactlyAcrossChunksAndBroadcast) {
  MemoryKvClient kv;
  constexpr int kWorld = 3;
  std::vector<Comm> comms = CreateAll(&kv, kWorld, Opts(4096));
  ASSERT_EQ(comms.size(), 3u);
  EXPECT_TRUE(OurSegments().empty()) << "the segment name outlived Create";
  OnEveryRank(kWorld, [&](int r) {
    Communicator* c = comms[r].get();
    for (size_t n : {1, 2, 3, 1023, 1024, 1025, 3073, 10000}) {
      std::vector<float> f(n);
      std::vector<double> d(n);
      std::vector<int64_t> i64(n);
      for (size_t i = 0; i < n; ++i) {
        f[i] = float(r + 1) * float(i % 100);
        d[i] = 0.25 * (r + 1) + double(i);
        i64[i] = (int64_t{r} + 1) * 1'000'000'000'000 + int64_t(i);
      }
      ASSERT_TRUE(c->AllReduceSum(f.data(), n, DataType::kFloat32).ok());
      ASSERT_TRUE(c->AllReduceSum(d.data(), n, DataType::kFloat64).ok());
      ASSERT_TRUE(c->AllReduceSum(i64.data(), n, DataType::kInt64).ok());
      for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(f[i], 6.0f * float(i % 100)) << "n=" << n << " i=" << i;
        ASSERT_EQ(d[i], 0.25 * 6 + 3.0 * double(i)) << "n=" << n;
        ASSERT_EQ(i64[i], 6'000'000'000'000 + 3 * int64_t(i)) << "n=" << n;
      }
    }
    std::vector<uint8_t> b(10007, r == 2 ? 0 : 1);
    if (r == 2) {
      for (size_t i = 0; i < b.size(); ++i) b[i] = uint8_t(i * 7);
    }
    ASSERT_TRUE(c->Broadcast(b.data(), b.size(), 2).ok());
    for (size_t i = 0; i < b.size(); ++i) ASSERT_EQ(b[i], uint8_t(i * 7));
  });
}

TEST(ShmCommunicatorTest, AsyncWorkRunsInIssueOrder) {
  MemoryKvClient kv;
  std::vector<Comm> comms = CreateAll(&kv, 2, Opts(4096));
  OnEveryRank(2, [&](int r) {
    std::vector<std::vector<float>> bufs(6);
    std::vector<std::unique_ptr<Work>> works;
    for (int k = 0; k < 6; ++k) {
      bufs[k].assign(size_t(k) * 700 + 1, float((r + 1) * (k + 1)));
      works.push_back(comms[r]->AllReduceSumAsync(
          bufs[k].data(), bufs[k].size(), DataType::kFloat32));
    }
    for (int k = 0; k < 6; ++k) {
      ASSERT_TRUE(works[k]->Wait().ok());
      for (float v : bufs[k]) ASSERT_EQ(v, float(3 * (k + 1)));
    }
  });
}

// What the training step does: a broadcast launched before the gradients'
// all-reduces, waited for after them.
TEST(ShmCommunicatorTest, AsyncBroadcastRunsInIssueOrderWithAllReduces) {
  MemoryKvClient kv;
  std::vector<Comm> comms = CreateAll(&kv, 2, Opts(4096));
  OnEveryRank(2, [&](int r) {
    std::vector<uint8_t> b(5000, uint8_t(r + 1));
    std::unique_ptr<Work> bw = comms[r]->BroadcastAsync(b.data(), b.size(), 0);
    std::vector<float> g(3000, float(r + 1));
    ASSERT_TRUE(
        comms[r]->AllReduceSum(g.data(), g.size(), DataType::kFloat32).ok());
    ASSERT_TRUE(bw->Wait().ok());
    for (uint8_t v : b) ASSERT_EQ(v, 1);
    for (float v : g) ASSERT_EQ(v, 3.0f);
  });
}

TEST(ShmCommunicatorTest, BootstrapWithoutPeersTimesOut) {
  MemoryKvClient kv;
  auto c = ShmCommunicator::Create(&kv, 0, 2, Opts(4096, absl::Seconds(1)));
  EXPECT_TRUE(absl::IsDeadlineExceeded(c.status())) << c.status();
  EXPECT_TRUE(OurSegments().empty()) << "a failed Create left its segment";
}

TEST(ShmCommunicatorTest, TimeoutFailsTheOpAndLaterOpsFailFast) {
  MemoryKvClient kv;
  std::vector<Comm> comms = CreateAll(&kv, 2, Opts(4096, absl::Seconds(1)));
  float x = 1;
  absl::Status s = comms[0]->AllReduceSum(&x, 1, DataType::kFloat32);
  EXPECT_TRUE(absl::IsDeadlineExceeded(s)) << s;
  absl::Status later = comms[0]->AllReduceSum(&x, 1, DataType::kFloat32);
  EXPECT_TRUE(absl::IsDeadlineExceeded(later)) << later;
  EXPECT_TRUE(absl::StrContains(later.message(), "earlier")) << later;
  // The failure was raised in the segment: the other rank's next
  // collective fails at once rather than after its timeout.
  const absl::Time start = absl::Now();
  absl::Status peer = comms[1]->AllReduceSum(&x, 1, DataType::kFloat32);
  EXPECT_TRUE(absl::IsUnavailable(peer)) << peer;
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(500));
}

TEST(ShmCommunicatorTest, AbortFailsInFlightAndLaterWorkAndTellsPeers) {
  MemoryKvClient kv;
  std::vector<Comm> comms = CreateAll(&kv, 2, Opts(4096, absl::Seconds(60)));
  std::vector<float> x(5000, 1.0f);
  // Rank 1 never joins: rank 0's work waits until the abort.
  std::unique_ptr<Work> pending =
      comms[0]->AllReduceSumAsync(x.data(), x.size(), DataType::kFloat32);
  std::thread aborter([&] { comms[0]->Abort(); });
  absl::Status s = pending->Wait();
  aborter.join();
  EXPECT_TRUE(absl::IsAborted(s)) << s;
  EXPECT_TRUE(absl::IsAborted(
      comms[0]->AllReduceSum(x.data(), x.size(), DataType::kFloat32)));
  absl::Status peer =
      comms[1]->AllReduceSum(x.data(), x.size(), DataType::kFloat32);
  EXPECT_TRUE(absl::IsUnavailable(peer)) << peer;
  EXPECT_TRUE(absl::StrContains(peer.message(), "rank 0")) << peer;
}

TEST(ShmCommunicatorTest, DestructorFailsPendingWorkThatOutlivesIt) {
  MemoryKvClient kv;
  std::vector<Comm> comms = CreateAll(&kv, 2, Opts(4096, absl::Seconds(60)));
  float x = 1;
  std::unique_ptr<Work> pending =
      comms[0]->AllReduceSumAsync(&x, 1, DataType::kFloat32);
  comms[0].reset();
  EXPECT_TRUE(absl::IsAborted(pending->Wait()));
}

}  // namespace
}  // namespace ringleader
