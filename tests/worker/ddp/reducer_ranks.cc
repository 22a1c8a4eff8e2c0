#include "tests/worker/ddp/reducer_ranks.h"

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

}  // namespace

std::vector<std::vector<torch::Tensor>> PerRankGrads(int world,
                                                     int micro_steps) {
  // One thread, as each rank has: the same kernels sum in the same order,
  // so the gradients are bit for bit the ranks'.
  torch::set_num_threads(1);
  std::vector<std::vector<torch::Tensor>> out;
  for (int r = 0; r < world; ++r) {
    auto net = MakeNet(7);
    for (int m = 0; m < micro_steps; ++m) Loss(net, r, m).backward();
    out.emplace_back();
    for (auto& p : net->parameters()) out.back().push_back(p.grad().clone());
  }
  return out;
}

std::vector<torch::Tensor> ReferenceGrads(int world, int micro_steps) {
  std::vector<std::vector<torch::Tensor>> each =
      PerRankGrads(world, micro_steps);
  std::vector<torch::Tensor> sum = each[0];
  for (int r = 1; r < world; ++r) {
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += each[r][i];
  }
  for (auto& g : sum) g /= world;
  return sum;
}

std::vector<RankResult> RunRanks(int world, Reducer::Options options,
                                 int micro_steps, int init_seed_rank1,
                                 CompletionOrder order) {
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
      InProcessCommunicator comm(&group, r, order);
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
      results[r].completion_order = comm.completion_order();
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

}  // namespace ringleader
