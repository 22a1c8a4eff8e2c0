// The Reducer's bucketing, overlap and no_sync semantics, with ranks as
// threads over an in-process communicator. Cross-process equality with a
// single process is tested with Gloo under tests/integration.
#include "worker/ddp/reducer.h"

#include <torch/torch.h>

#include <map>
#include <thread>

#include "gtest/gtest.h"
#include "tests/worker/ddp/in_process_communicator.h"

namespace ringleader {
namespace {

torch::nn::Sequential MakeNet(int seed) {
  torch::manual_seed(seed);
  return torch::nn::Sequential(torch::nn::Linear(20, 64), torch::nn::ReLU(),
                               torch::nn::Linear(64, 32), torch::nn::ReLU(),
                               torch::nn::Linear(32, 5));
}

// The global generator is shared by threads, so every batch is drawn up
// front, from a seed of its own.
std::pair<torch::Tensor, torch::Tensor> Batch(int rank, int micro) {
  static const auto* batches = [] {
    auto* b = new std::map<int, std::pair<torch::Tensor, torch::Tensor>>();
    for (int r = 0; r < 4; ++r) {
      for (int m = 0; m < 4; ++m) {
        torch::manual_seed(1000 + r * 10 + m);
        (*b)[r * 10 + m] = {torch::randn({8, 20}), torch::randint(0, 5, {8})};
      }
    }
    return b;
  }();
  return batches->at(rank * 10 + micro);
}

torch::Tensor Loss(torch::nn::Sequential& net, int rank, int micro) {
  auto [x, y] = Batch(rank, micro);
  return torch::nn::functional::cross_entropy(net->forward(x), y);
}

// Gradients each rank would have alone, averaged over ranks.
std::vector<torch::Tensor> ReferenceGrads(int world, int micro_steps) {
  std::vector<torch::Tensor> sum;
  for (int r = 0; r < world; ++r) {
    auto net = MakeNet(7);
    for (int m = 0; m < micro_steps; ++m) Loss(net, r, m).backward();
    auto params = net->parameters();
    if (sum.empty()) {
      for (auto& p : params) sum.push_back(p.grad().clone());
    } else {
      for (size_t i = 0; i < params.size(); ++i) sum[i] += params[i].grad();
    }
  }
  for (auto& g : sum) g /= world;
  return sum;
}

struct RankResult {
  std::vector<torch::Tensor> grads;
  Reducer::Stats stats;
  size_t buckets = 0;
  absl::Status status;
};

std::vector<RankResult> RunRanks(int world, Reducer::Options options,
                                 int micro_steps, int init_seed_rank1 = 7) {
  InProcessGroup group(world);
  std::vector<RankResult> results(world);
  std::vector<torch::nn::Sequential> nets;
  for (int r = 0; r < world; ++r) {
    nets.push_back(MakeNet(r == 0 ? 7 : init_seed_rank1));
  }
  Batch(0, 0);
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      torch::set_num_threads(1);
      InProcessCommunicator comm(&group, r);
      auto net = nets[r];
      auto reducer = Reducer::Create(&comm, net->parameters(), options);
      if (!reducer.ok()) {
        results[r].status = reducer.status();
        return;
      }
      absl::Status s = (*reducer)->BroadcastParameters();
      (*reducer)->ZeroGrad();
      for (int m = 0; m < micro_steps && s.ok(); ++m) {
        const bool sync = m + 1 == micro_steps;
        (*reducer)->PrepareForBackward(sync);
        Loss(net, r, m).backward();
        s = (*reducer)->FinishBackward();
      }
      results[r].status = s;
      for (auto& p : net->parameters())
        results[r].grads.push_back(p.grad().clone());
      results[r].stats = (*reducer)->stats();
      results[r].buckets = (*reducer)->plan().buckets.size();
    });
  }
  for (auto& t : threads) t.join();
  return results;
}

void ExpectGradsNear(const std::vector<torch::Tensor>& a,
                     const std::vector<torch::Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_LE((a[i] - b[i]).abs().max().item<float>(), 1e-6) << "param " << i;
  }
}

TEST(ReducerTest, AveragesGradientsOverRanks) {
  const auto ref = ReferenceGrads(3, 1);
  auto results = RunRanks(3, Reducer::Options(), 1);
  for (const auto& r : results) {
    ASSERT_TRUE(r.status.ok()) << r.status;
    ExpectGradsNear(r.grads, ref);
  }
}

TEST(ReducerTest, SmallBucketsLaunchDuringBackwardAndMatchTheAfterPath) {
  Reducer::Options overlapped;
  overlapped.first_bucket_bytes = 256;
  overlapped.bucket_cap_bytes = 2048;
  Reducer::Options after = overlapped;
  after.overlap = false;
  auto a = RunRanks(2, overlapped, 1);
  auto b = RunRanks(2, after, 1);
  ASSERT_TRUE(a[0].status.ok() && b[0].status.ok());
  EXPECT_GE(a[0].buckets, 3u);
  // Every bucket was launched from an autograd hook, before backward ended.
  EXPECT_EQ(a[0].stats.buckets_launched_during_backward,
            static_cast<int64_t>(a[0].buckets));
  EXPECT_EQ(b[0].stats.buckets_launched_during_backward, 0);
  EXPECT_EQ(a[0].stats.allreduce_calls, b[0].stats.allreduce_calls);
  for (int r = 0; r < 2; ++r) ExpectGradsNear(a[r].grads, b[r].grads);
  ExpectGradsNear(a[0].grads, ReferenceGrads(2, 1));
}

TEST(ReducerTest, NoSyncAccumulatesMicroStepsThenSyncsOnce) {
  auto results = RunRanks(2, Reducer::Options(), 3);
  ASSERT_TRUE(results[0].status.ok());
  EXPECT_EQ(results[0].stats.allreduce_calls,
            static_cast<int64_t>(results[0].buckets));
  ExpectGradsNear(results[0].grads, ReferenceGrads(2, 3));
  ExpectGradsNear(results[1].grads, ReferenceGrads(2, 3));
}

TEST(ReducerTest, BroadcastMakesRanksStartFromRankZero) {
  // Rank 1 starts from other weights; after the broadcast both compute the
  // gradients of rank 0's model.
  auto results = RunRanks(2, Reducer::Options(), 1, /*init_seed_rank1=*/99);
  ASSERT_TRUE(results[1].status.ok());
  ExpectGradsNear(results[1].grads, ReferenceGrads(2, 1));
}

TEST(ReducerTest, OneRankLaunchesNothingAndKeepsItsGradients) {
  auto results = RunRanks(1, Reducer::Options(), 1);
  ASSERT_TRUE(results[0].status.ok()) << results[0].status;
  EXPECT_EQ(results[0].stats.allreduce_calls, 0);
  ExpectGradsNear(results[0].grads, ReferenceGrads(1, 1));
  // Micro-steps accumulate the same way.
  auto accumulated = RunRanks(1, Reducer::Options(), 3);
  ASSERT_TRUE(accumulated[0].status.ok());
  ExpectGradsNear(accumulated[0].grads, ReferenceGrads(1, 3));
}

TEST(ReducerTest, RejectsBadParameters) {
  InProcessGroup group(1);
  InProcessCommunicator comm(&group, 0);
  EXPECT_FALSE(Reducer::Create(&comm, {}, {}).ok());
  EXPECT_FALSE(
      Reducer::Create(nullptr, {torch::zeros({2}, torch::requires_grad())}, {})
          .ok());
  EXPECT_FALSE(
      Reducer::Create(&comm,
                      {torch::zeros({2}, torch::kFloat64).requires_grad_()}, {})
          .ok());
  EXPECT_FALSE(Reducer::Create(&comm, {torch::zeros({2})}, {}).ok());
}

}  // namespace
}  // namespace ringleader
