// GlooCommunicator with its ranks as threads of this process, bootstrapped
// through an in-memory KvClient: argument checks, a single rank, timeouts,
// Abort() against a collective whose peer never joins, and several lanes
// (buckets in flight) against one. The multi-process tests with a real
// coordinator are in comm_multiprocess_test.cc.
#include "worker/comm/gloo_communicator.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/worker/create_all.h"
#include "tests/worker/memory_kv_client.h"

namespace ringleader {
namespace {

using Comm = std::unique_ptr<GlooCommunicator>;

GlooCommunicator::Options Opts(absl::Duration timeout = absl::Seconds(30),
                               int lanes = 1) {
  GlooCommunicator::Options o;
  o.timeout = timeout;
  o.lanes = lanes;
  return o;
}

// Runs `fn(rank)` on a thread per rank and joins them.
void OnEveryRank(int world, const std::function<void(int)>& fn) {
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) threads.emplace_back(fn, r);
  for (auto& t : threads) t.join();
}

std::vector<Comm> CreateAll(KvClient* kv, int world,
                            const GlooCommunicator::Options& options) {
  return testing::CreateAll<GlooCommunicator>(kv, world, options);
}

TEST(GlooCommunicatorTest, RejectsBadArguments) {
  MemoryKvClient kv;
  EXPECT_TRUE(absl::IsInvalidArgument(
      GlooCommunicator::Create(nullptr, 0, 1, Opts()).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      GlooCommunicator::Create(&kv, 2, 2, Opts()).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      GlooCommunicator::Create(&kv, 0, 0, Opts()).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      GlooCommunicator::Create(&kv, 0, 1, Opts(absl::ZeroDuration()))
          .status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      GlooCommunicator::Create(&kv, 0, 1, Opts(absl::Seconds(30), 0))
          .status()));
  GlooCommunicator::Options bad_host = Opts();
  bad_host.interface_or_host = "203.0.113.1";  // TEST-NET-3: not ours.
  EXPECT_TRUE(absl::IsInvalidArgument(
      GlooCommunicator::Create(&kv, 0, 1, bad_host).status()));

  auto c = GlooCommunicator::Create(&kv, 0, 1, Opts());
  ASSERT_TRUE(c.ok()) << c.status();
  float x = 1;
  EXPECT_TRUE(absl::IsInvalidArgument((*c)->Broadcast(&x, 4, 1)));
  EXPECT_TRUE(absl::IsInvalidArgument((*c)->Broadcast(nullptr, 4, 0)));
  EXPECT_TRUE(absl::IsInvalidArgument(
      (*c)->AllReduceSum(nullptr, 4, DataType::kFloat32)));
  EXPECT_TRUE((*c)->AllReduceSum(nullptr, 0, DataType::kFloat32).ok());
}

TEST(GlooCommunicatorTest, SingleRankIsTheIdentity) {
  MemoryKvClient kv;
  auto c = GlooCommunicator::Create(&kv, 0, 1, Opts());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)->rank(), 0);
  EXPECT_EQ((*c)->world_size(), 1);
  std::vector<double> x = {1.5, -2, 3};
  ASSERT_TRUE((*c)->AllReduceSum(x.data(), 3, DataType::kFloat64).ok());
  EXPECT_EQ(x, (std::vector<double>{1.5, -2, 3}));
  ASSERT_TRUE((*c)->Broadcast(x.data(), sizeof(double) * 3, 0).ok());
  EXPECT_EQ(x, (std::vector<double>{1.5, -2, 3}));
}

TEST(GlooCommunicatorTest, KeysLiveUnderTheCommunicatorIndex) {
  MemoryKvClient kv;
  GlooCommunicator::Options o = Opts();
  o.comm_index = 7;
  std::vector<Comm> comms = CreateAll(&kv, 2, o);
  ASSERT_EQ(comms.size(), 2u);
  for (const std::string& k : kv.Keys()) {
    EXPECT_TRUE(absl::StartsWith(k, "gloo/7/")) << k;
  }
  EXPECT_FALSE(kv.Keys().empty());
}

TEST(GlooCommunicatorTest, EveryLaneHasKeysUnderTheCommunicatorIndex) {
  MemoryKvClient kv;
  GlooCommunicator::Options o = Opts(absl::Seconds(30), 3);
  o.comm_index = 7;
  std::vector<Comm> comms = CreateAll(&kv, 2, o);
  ASSERT_EQ(comms.size(), 2u);
  int lane0 = 0, lane1 = 0, lane2 = 0;
  for (const std::string& k : kv.Keys()) {
    EXPECT_TRUE(absl::StartsWith(k, "gloo/7/")) << k;
    if (absl::StartsWith(k, "gloo/7/lane1/")) {
      lane1++;
    } else if (absl::StartsWith(k, "gloo/7/lane2/")) {
      lane2++;
    } else {
      lane0++;
    }
  }
  // One mesh per lane, each published the same way.
  EXPECT_GT(lane0, 0);
  EXPECT_EQ(lane1, lane0);
  EXPECT_EQ(lane2, lane0);
}

TEST(GlooCommunicatorTest, TwoThreadRanksSumAndBroadcast) {
  MemoryKvClient kv;
  std::vector<Comm> comms = CreateAll(&kv, 2, Opts());
  ASSERT_TRUE(comms[0] && comms[1]);
  std::vector<std::vector<int64_t>> data = {{1, 2, 3}, {10, 20, 30}};
  std::vector<std::unique_ptr<Work>> works;
  for (int r = 0; r < 2; ++r) {
    works.push_back(
        comms[r]->AllReduceSumAsync(data[r].data(), 3, DataType::kInt64));
  }
  for (auto& w : works) EXPECT_TRUE(w->Wait().ok());
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(data[r], (std::vector<int64_t>{11, 22, 33}));
  }
  std::vector<std::thread> threads;
  std::vector<std::vector<char>> bytes = {{'a', 'b'}, {'x', 'y'}};
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      EXPECT_TRUE(comms[r]->Broadcast(bytes[r].data(), 2, 1).ok());
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bytes[0], (std::vector<char>{'x', 'y'}));
}

// A broadcast launched before an all-reduce and waited for after it, on
// three lanes: each collective meets its peer and keeps its own buffer.
TEST(GlooCommunicatorTest, AsyncBroadcastBesideAllReduces) {
  MemoryKvClient kv;
  std::vector<Comm> comms = CreateAll(&kv, 2, Opts(absl::Seconds(30), 3));
  ASSERT_TRUE(comms[0] && comms[1]);
  std::vector<std::vector<char>> bytes = {{'a', 'b'}, {'x', 'y'}};
  std::vector<std::vector<int64_t>> data = {{1, 2}, {10, 20}};
  OnEveryRank(2, [&](int r) {
    std::unique_ptr<Work> bw = comms[r]->BroadcastAsync(bytes[r].data(), 2, 1);
    EXPECT_TRUE(
        comms[r]->AllReduceSum(data[r].data(), 2, DataType::kInt64).ok());
    EXPECT_TRUE(bw->Wait().ok());
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(bytes[r], (std::vector<char>{'x', 'y'}));
    EXPECT_EQ(data[r], (std::vector<int64_t>{11, 22}));
  }
}

// The completion callback (the timeline's all-reduce end) runs once, on the
// communicator's thread, before Wait() returns; also for work that never ran.
TEST(GlooCommunicatorTest, ThenRunsOnTheCommunicatorThreadBeforeWait) {
  MemoryKvClient kv;
  std::vector<Comm> comms = CreateAll(&kv, 2, Opts());
  ASSERT_EQ(comms.size(), 2u);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&comms, r] {
      std::vector<float> x = {1.0f + r, 2};
      std::atomic<int> calls{0};
      std::thread::id ran_on;
      std::unique_ptr<Work> w =
          comms[r]->AllReduceSumAsyncThen(x.data(), 2, DataType::kFloat32, [&] {
            ran_on = std::this_thread::get_id();
            calls++;
          });
      ASSERT_TRUE(w->Wait().ok());
      EXPECT_EQ(calls.load(), 1);  // Already ran when Wait returned.
      EXPECT_NE(ran_on, std::this_thread::get_id());
      EXPECT_EQ(x, (std::vector<float>{3, 4}));
      ASSERT_TRUE(w->Wait().ok());
      EXPECT_EQ(calls.load(), 1);
    });
  }
  for (auto& t : ranks) t.join();

  int empty_calls = 0;
  EXPECT_TRUE(comms[0]
                  ->AllReduceSumAsyncThen(nullptr, 0, DataType::kFloat32,
                                          [&] { empty_calls++; })
                  ->Wait()
                  .ok());
  EXPECT_EQ(empty_calls, 1);
  comms[0]->Abort();
  int aborted_calls = 0;
  float y = 1;
  EXPECT_TRUE(
      absl::IsAborted(comms[0]
                          ->AllReduceSumAsyncThen(&y, 1, DataType::kFloat32,
                                                  [&] { aborted_calls++; })
                          ->Wait()));
  EXPECT_EQ(aborted_calls, 1);
}

TEST(GlooCommunicatorTest, BootstrapWithoutPeersTimesOut) {
  MemoryKvClient kv;
  const absl::Time start = absl::Now();
  auto c = GlooCommunicator::Create(&kv, 0, 2, Opts(absl::Milliseconds(300)));
  EXPECT_TRUE(absl::IsDeadlineExceeded(c.status())) << c.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

TEST(GlooCommunicatorTest, TimeoutFailsTheOpAndLaterOpsFailFast) {
  MemoryKvClient kv;
  std::vector<Comm> comms = CreateAll(&kv, 2, Opts(absl::Seconds(2)));
  ASSERT_TRUE(comms[0] && comms[1]);
  std::vector<float> x(1000, 1.f);
  // Rank 1 never joins.
  absl::Status s =
      comms[0]->AllReduceSum(x.data(), x.size(), DataType::kFloat32);
  EXPECT_TRUE(absl::IsDeadlineExceeded(s)) << s;
  const absl::Time start = absl::Now();
  absl::Status later =
      comms[0]->AllReduceSum(x.data(), x.size(), DataType::kFloat32);
  EXPECT_TRUE(absl::IsDeadlineExceeded(later)) << later;
  EXPECT_TRUE(absl::StrContains(later.message(), "earlier")) << later;
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(400));
}

TEST(GlooCommunicatorTest, AbortFailsInFlightQueuedAndLaterWork) {
  MemoryKvClient kv;
  std::vector<Comm> comms = CreateAll(&kv, 2, Opts(absl::Seconds(120)));
  ASSERT_TRUE(comms[0] && comms[1]);
  std::vector<float> a(1 << 16, 1.f), b(10, 1.f);
  // Rank 1 never joins: `first` blocks in gloo, `second` waits in the queue.
  std::unique_ptr<Work> first =
      comms[0]->AllReduceSumAsync(a.data(), a.size(), DataType::kFloat32);
  std::unique_ptr<Work> second =
      comms[0]->AllReduceSumAsync(b.data(), b.size(), DataType::kFloat32);
  absl::Time aborted_at;
  std::thread aborter([&] {
    aborted_at = absl::Now();
    comms[0]->Abort();
  });
  absl::Status s1 = first->Wait();
  absl::Status s2 = second->Wait();
  const absl::Time done_at = absl::Now();
  aborter.join();
  EXPECT_TRUE(absl::IsAborted(s1)) << s1;
  EXPECT_TRUE(absl::IsAborted(s2)) << s2;
  EXPECT_LT(done_at - aborted_at, absl::Seconds(5));
  EXPECT_TRUE(absl::IsAborted(
      comms[0]->AllReduceSum(b.data(), b.size(), DataType::kFloat32)));
  EXPECT_TRUE(absl::IsAborted(comms[0]->Broadcast(b.data(), 4, 0)));
  comms[0]->Abort();  // Idempotent.
}

TEST(GlooCommunicatorTest, DestructorFailsPendingWorkThatOutlivesIt) {
  MemoryKvClient kv;
  std::vector<Comm> comms = CreateAll(&kv, 2, Opts(absl::Seconds(120)));
  ASSERT_TRUE(comms[0] && comms[1]);
  std::vector<float> a(1000, 1.f);
  std::unique_ptr<Work> pending =
      comms[0]->AllReduceSumAsync(a.data(), a.size(), DataType::kFloat32);
  const absl::Time start = absl::Now();
  comms[0].reset();
  EXPECT_TRUE(absl::IsAborted(pending->Wait()));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

// Deterministic random floats of widely different magnitudes, so the order
// of a sum shows in its last bits.
std::vector<float> RandomFloats(int rank, int buffer, size_t n) {
  std::mt19937 gen(static_cast<uint32_t>(1000 * rank + buffer));
  std::normal_distribution<float> value(0.f, 1.f);
  std::uniform_real_distribution<float> exponent(-4.f, 4.f);
  std::vector<float> v(n);
  for (float& x : v) x = value(gen) * std::pow(10.f, exponent(gen));
  return v;
}

// Each rank's buffers after issuing `sizes.size()` all-reduces back to back
// (a broadcast in the middle, as a step's collectives interleave) and
// waiting for all of them.
std::vector<std::vector<std::vector<float>>> SumOnLanes(
    int world, int lanes, const std::vector<size_t>& sizes) {
  MemoryKvClient kv;
  std::vector<Comm> comms =
      CreateAll(&kv, world, Opts(absl::Seconds(60), lanes));
  std::vector<std::vector<std::vector<float>>> out(world);
  if (comms.size() != static_cast<size_t>(world)) return out;
  OnEveryRank(world, [&](int r) {
    ASSERT_TRUE(comms[r]);
    std::vector<std::vector<float>>& bufs = out[r];
    for (size_t b = 0; b < sizes.size(); ++b) {
      bufs.push_back(RandomFloats(r, static_cast<int>(b), sizes[b]));
    }
    std::vector<float> root_says = RandomFloats(r, -1, 100);
    std::vector<std::unique_ptr<Work>> works;
    for (size_t b = 0; b < bufs.size(); ++b) {
      works.push_back(comms[r]->AllReduceSumAsync(
          bufs[b].data(), bufs[b].size(), DataType::kFloat32));
      if (b == bufs.size() / 2) {
        ASSERT_TRUE(comms[r]
                        ->Broadcast(root_says.data(),
                                    root_says.size() * sizeof(float), 2)
                        .ok());
        EXPECT_EQ(root_says, RandomFloats(2, -1, 100));
      }
    }
    for (auto& w : works) EXPECT_TRUE(w->Wait().ok());
  });
  return out;
}

// Each all-reduce is bit-identical however many run beside it: a ring sums
// each chunk in an order fixed by the ranks, not by other collectives.
TEST(GlooCommunicatorTest, ThreeLanesSumBitIdenticallyToOne) {
  constexpr int kWorld = 3;
  std::vector<size_t> sizes;
  for (size_t n : {1, 3, 100, 1000, 4099, 65536, 200003}) {
    sizes.push_back(n);
    sizes.push_back(n + 5);
    sizes.push_back(7);
  }
  const auto one = SumOnLanes(kWorld, 1, sizes);
  const auto three = SumOnLanes(kWorld, 3, sizes);
  ASSERT_EQ(one.size(), static_cast<size_t>(kWorld));
  ASSERT_EQ(three.size(), static_cast<size_t>(kWorld));
  size_t order_showed = 0;  // Elements where the ring's order shows.
  for (int r = 0; r < kWorld; ++r) {
    ASSERT_EQ(one[r].size(), sizes.size());
    ASSERT_EQ(three[r].size(), sizes.size());
    for (size_t b = 0; b < sizes.size(); ++b) {
      ASSERT_EQ(one[r][b].size(), sizes[b]);
      ASSERT_EQ(three[r][b].size(), sizes[b]);
      EXPECT_EQ(std::memcmp(one[r][b].data(), three[r][b].data(),
                            sizes[b] * sizeof(float)),
                0)
          << "rank " << r << " buffer " << b;
      // And it is the sum: close to the exact one, identical on every rank.
      EXPECT_EQ(std::memcmp(three[r][b].data(), three[0][b].data(),
                            sizes[b] * sizeof(float)),
                0);
      if (r != 0) continue;
      std::vector<std::vector<float>> inputs;
      for (int q = 0; q < kWorld; ++q) {
        inputs.push_back(RandomFloats(q, static_cast<int>(b), sizes[b]));
      }
      for (size_t i = 0; i < sizes[b]; ++i) {
        double exact = 0, magnitude = 0;
        for (int q = 0; q < kWorld; ++q) {
          exact += inputs[q][i];
          magnitude += std::fabs(inputs[q][i]);
        }
        ASSERT_NEAR(three[0][b][i], exact, 1e-6 * magnitude) << b << " " << i;
        const float in_rank_order =
            (inputs[0][i] + inputs[1][i]) + inputs[2][i];
        if (three[0][b][i] != in_rank_order) order_showed++;
      }
    }
  }
  // The data can tell summation orders apart, so equality above means
  // something.
  EXPECT_GT(order_showed, 0u);
}

// Abort() with every lane busy (the peer never joins): every lane's work in
// flight and queued fails ABORTED, promptly.
TEST(GlooCommunicatorTest, AbortFailsEveryLanesWorkInFlightAndQueued) {
  MemoryKvClient kv;
  std::vector<Comm> comms = CreateAll(&kv, 2, Opts(absl::Seconds(120), 3));
  ASSERT_TRUE(comms[0] && comms[1]);
  std::vector<std::vector<float>> bufs(9, std::vector<float>(1 << 14, 1.f));
  std::vector<std::unique_ptr<Work>> works;  // 3 in flight, 6 queued.
  for (auto& b : bufs) {
    works.push_back(
        comms[0]->AllReduceSumAsync(b.data(), b.size(), DataType::kFloat32));
  }
  absl::Time aborted_at;
  std::thread aborter([&] {
    aborted_at = absl::Now();
    comms[0]->Abort();
  });
  std::vector<absl::Status> statuses;
  for (auto& w : works) statuses.push_back(w->Wait());
  const absl::Time done_at = absl::Now();
  aborter.join();
  for (const absl::Status& s : statuses) EXPECT_TRUE(absl::IsAborted(s)) << s;
  EXPECT_LT(done_at - aborted_at, absl::Seconds(5));
  EXPECT_TRUE(absl::IsAborted(
      comms[0]->AllReduceSum(bufs[0].data(), 4, DataType::kFloat32)));
  EXPECT_TRUE(absl::IsAborted(comms[0]->Broadcast(bufs[0].data(), 4, 0)));
}

// A peer that aborts (its generation ended) fails this rank's collectives on
// every lane at once, not at the 120 s timeout.
TEST(GlooCommunicatorTest, PeerAbortFailsEveryLaneAtOnce) {
  MemoryKvClient kv;
  std::vector<Comm> comms = CreateAll(&kv, 2, Opts(absl::Seconds(120), 2));
  ASSERT_TRUE(comms[0] && comms[1]);
  std::vector<float> a(1 << 14, 1.f), b(1 << 14, 1.f);
  // Rank 1 never issues them: one blocks on each lane.
  std::unique_ptr<Work> on_lane0 =
      comms[0]->AllReduceSumAsync(a.data(), a.size(), DataType::kFloat32);
  std::unique_ptr<Work> on_lane1 =
      comms[0]->AllReduceSumAsync(b.data(), b.size(), DataType::kFloat32);
  const absl::Time start = absl::Now();
  comms[1]->Abort();
  const absl::Status s0 = on_lane0->Wait();
  const absl::Status s1 = on_lane1->Wait();
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  EXPECT_FALSE(s0.ok());
  EXPECT_FALSE(s1.ok());
  EXPECT_FALSE(absl::IsAborted(s0)) << s0;  // This rank did not abort.
}

// One lane's timeout fails the other lane's collective too (it would never
// complete: the mesh is in an unknown state), reporting the timeout; later
// work fails fast.
TEST(GlooCommunicatorTest, TimeoutOnOneLaneFailsEveryLane) {
  MemoryKvClient kv;
  std::vector<Comm> comms = CreateAll(&kv, 2, Opts(absl::Seconds(2), 2));
  ASSERT_TRUE(comms[0] && comms[1]);
  std::vector<float> a(1000, 1.f), b(1000, 1.f);
  std::unique_ptr<Work> on_lane0 =
      comms[0]->AllReduceSumAsync(a.data(), a.size(), DataType::kFloat32);
  std::unique_ptr<Work> on_lane1 =
      comms[0]->AllReduceSumAsync(b.data(), b.size(), DataType::kFloat32);
  for (Work* w : {on_lane0.get(), on_lane1.get()}) {
    const absl::Status s = w->Wait();
    EXPECT_TRUE(absl::IsDeadlineExceeded(s)) << s;
  }
  const absl::Time start = absl::Now();
  for (int i = 0; i < 2; ++i) {
    const absl::Status later =
        comms[0]->AllReduceSum(a.data(), a.size(), DataType::kFloat32);
    EXPECT_TRUE(absl::IsDeadlineExceeded(later)) << later;
    EXPECT_TRUE(absl::StrContains(later.message(), "earlier")) << later;
  }
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(400));
}

TEST(GlooCommunicatorTest, DestructorFailsEveryLanesPendingWork) {
  MemoryKvClient kv;
  std::vector<Comm> comms = CreateAll(&kv, 2, Opts(absl::Seconds(120), 3));
  ASSERT_TRUE(comms[0] && comms[1]);
  std::vector<std::vector<float>> bufs(5, std::vector<float>(1000, 1.f));
  std::vector<std::unique_ptr<Work>> pending;
  for (auto& b : bufs) {
    pending.push_back(
        comms[0]->AllReduceSumAsync(b.data(), b.size(), DataType::kFloat32));
  }
  const absl::Time start = absl::Now();
  comms[0].reset();
  for (auto& w : pending) EXPECT_TRUE(absl::IsAborted(w->Wait()));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

}  // namespace
}  // namespace ringleader
