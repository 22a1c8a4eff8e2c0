// GlooCommunicator with its ranks as threads of this process, bootstrapped
// through an in-memory KvClient: argument checks, a single rank, timeouts,
// and Abort() against a collective whose peer never joins. The multi-process
// tests with a real coordinator are in gloo_multiprocess_test.cc.
#include "worker/comm/gloo_communicator.h"

#include <atomic>
#include <memory>
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

GlooCommunicator::Options Opts(absl::Duration timeout = absl::Seconds(30)) {
  GlooCommunicator::Options o;
  o.timeout = timeout;
  return o;
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

}  // namespace
}  // namespace ringleader
