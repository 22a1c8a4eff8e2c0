// A new generation recovers from the newest state a member kept in memory:
// the choice of the source, then the exchange, broadcast and load over real
// Gloo ranks (threads here), checked bit for bit against the source's
// replica, AdamW's moments included.
#include "worker/train/checkpoint/peer_recovery.h"

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/worker/create_all.h"
#include "tests/worker/memory_kv_client.h"
#include "worker/comm/gloo_communicator.h"
#include "worker/model/builtin_models.h"
#include "worker/model/optimizer.h"

namespace ringleader {
namespace {

std::vector<int64_t> Summed(const std::vector<KeptState>& ranks) {
  const int world = static_cast<int>(ranks.size());
  std::vector<int64_t> sum;
  for (int r = 0; r < world; ++r) {
    std::vector<int64_t> slots = KeptStateSlots(r, world, "job", ranks[r]);
    sum.resize(slots.size(), 0);
    for (size_t i = 0; i < slots.size(); ++i) sum[i] += slots[i];
  }
  return sum;
}

KeptState Kept(int64_t step, int64_t epoch = 0, int64_t offset = 0,
               const std::string& job = "job") {
  KeptState k;
  k.job_id = job;
  k.position = {epoch, step};
  k.epoch_sample_offset = offset;
  k.payload = "state";
  return k;
}

TEST(PeerRecoveryTest, TheLowestRankHoldingTheNewestStepIsTheSource) {
  absl::StatusOr<RecoverySource> s =
      ChooseRecoverySource(Summed({Kept(7), Kept(8, 1, 640), Kept(8)}), 3, -1);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->rank, 1);
  EXPECT_EQ(s->bytes, 5);
  EXPECT_EQ(s->point.position.step, 8);
  EXPECT_EQ(s->point.position.epoch, 1);
  EXPECT_EQ(s->point.epoch_sample_offset, 640);
  EXPECT_EQ(s->point.checkpoint_id, 0);
}

TEST(PeerRecoveryTest, NothingKeptOrANewerCheckpointMeansDisk) {
  EXPECT_EQ(
      ChooseRecoverySource(Summed({KeptState(), KeptState()}), 2, -1)->rank,
      -1);
  // Another job's state does not count.
  EXPECT_EQ(
      ChooseRecoverySource(Summed({Kept(9, 0, 0, "other"), KeptState()}), 2, -1)
          ->rank,
      -1);
  EXPECT_EQ(ChooseRecoverySource(Summed({Kept(8), KeptState()}), 2, 9)->rank,
            -1);
  // As new as the checkpoint: memory, no file read.
  EXPECT_EQ(ChooseRecoverySource(Summed({KeptState(), Kept(9)}), 2, 9)->rank,
            1);
}

TEST(PeerRecoveryTest, SlotsThatDoNotAddUpAreInternal) {
  EXPECT_TRUE(
      absl::IsInternal(ChooseRecoverySource({1, 2, 3}, 2, -1).status()));
  EXPECT_TRUE(absl::IsInternal(
      ChooseRecoverySource({3, 0, 0, 0, 0, 0, 0, 0}, 2, -1).status()));
}

v1::OptimizerSpec AdamW() {
  v1::OptimizerSpec s;
  s.set_kind(v1::OPTIMIZER_KIND_ADAMW);
  s.set_learning_rate(0.01);
  s.set_weight_decay(0.1);
  return s;
}

struct Replica {
  std::unique_ptr<Model> model;
  std::unique_ptr<torch::optim::Optimizer> opt;
  explicit Replica(uint64_t seed) {
    model = MakeMlp({8}, seed).value();
    opt = BuildOptimizer(AdamW(), model->Parameters()).value();
  }
  void Train(int steps) {
    for (int step = 0; step < steps; ++step) {
      int i = 0;
      for (const at::Tensor& p : model->Parameters()) {
        at::Tensor g =
            torch::arange(p.numel(), torch::kFloat).reshape(p.sizes());
        p.mutable_grad() = torch::sin(g * 0.37 + step + i++);
      }
      opt->step();
    }
  }
  KeptState Keep(int64_t step, int64_t offset) {
    KeptState k;
    k.job_id = "job";
    k.position = {0, step};
    k.epoch_sample_offset = offset;
    k.payload = SerializeCheckpoint(*model, *opt, k.position).value();
    return k;
  }
};

// The parameters and AdamW's per-parameter state, to compare replicas bit
// for bit (the archive itself names tensors by their addresses).
std::vector<at::Tensor> State(Replica& r) {
  std::vector<at::Tensor> out;
  for (const at::Tensor& p : r.model->Parameters()) {
    out.push_back(p.detach().clone());
    auto it =
        r.opt->state().find(c10::guts::to_string(p.unsafeGetTensorImpl()));
    if (it == r.opt->state().end()) continue;
    auto& st = static_cast<torch::optim::AdamWParamState&>(*it->second);
    out.push_back(st.exp_avg().clone());
    out.push_back(st.exp_avg_sq().clone());
    out.push_back(torch::tensor(st.step()));
  }
  return out;
}

bool Equal(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!torch::equal(a[i], b[i])) return false;
  }
  return true;
}

struct Outcome {
  absl::StatusOr<std::optional<ResumePoint>> point = std::nullopt;
  std::vector<at::Tensor> state;
};

std::vector<Outcome> Recover(const std::vector<KeptState>& kept,
                             int64_t newest_offered) {
  MemoryKvClient kv;
  GlooCommunicator::Options o;
  o.timeout = absl::Seconds(30);
  const int world = static_cast<int>(kept.size());
  std::vector<std::unique_ptr<GlooCommunicator>> comms =
      testing::CreateAll<GlooCommunicator>(&kv, world, o);
  std::vector<Outcome> out(world);
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      Replica fresh(100 + r);  // What each rank's new trainer builds.
      out[r].point =
          RecoverFromPeers("job", kept[r], newest_offered, *fresh.model,
                           *fresh.opt, *comms[r], c10::Device("cpu"));
      out[r].state = State(fresh);
    });
  }
  for (std::thread& t : threads) t.join();
  return out;
}

TEST(PeerRecoveryTest, EveryRankLoadsTheNewestStateBitForBit) {
  // Rank 1 completed step 6 (its all-reduce went through), rank 0 did not
  // (it holds step 5), rank 2 is new.
  Replica behind(1), ahead(1);
  behind.Train(5);
  ahead.Train(6);
  const std::vector<KeptState> kept = {behind.Keep(5, 320), ahead.Keep(6, 384),
                                       KeptState()};
  const std::vector<at::Tensor> expected = State(ahead);
  ASSERT_FALSE(Equal(expected, State(behind)));
  ASSERT_EQ(expected.size(), 16u);  // 4 parameters, each with its moments.
  std::vector<Outcome> out = Recover(kept, /*newest_offered=*/4);
  for (int r = 0; r < 3; ++r) {
    SCOPED_TRACE(r);
    ASSERT_TRUE(out[r].point.ok()) << out[r].point.status();
    ASSERT_TRUE(out[r].point->has_value());
    EXPECT_EQ((*out[r].point)->position.step, 6);
    EXPECT_EQ((*out[r].point)->epoch_sample_offset, 384);
    EXPECT_TRUE(Equal(out[r].state, expected));
  }
}

TEST(PeerRecoveryTest, ARecoveryCutShortLeavesTheKeptStatesForTheNextOne) {
  Replica behind(1), ahead(1);
  behind.Train(5);
  ahead.Train(6);
  const std::vector<KeptState> kept = {behind.Keep(5, 320), ahead.Keep(6, 384),
                                       KeptState()};
  const std::vector<at::Tensor> expected = State(ahead);
  {
    // The generation ends after the exchange, before the source (rank 1)
    // sends: every communicator is aborted, as the coordinator's abort does
    // when a member dies there. No rank can have received the state.
    MemoryKvClient kv;
    GlooCommunicator::Options o;
    o.timeout = absl::Seconds(30);
    std::vector<std::unique_ptr<GlooCommunicator>> comms =
        testing::CreateAll<GlooCommunicator>(&kv, 3, o);
    std::vector<Outcome> out(3);
    std::vector<std::thread> threads;
    for (int r = 0; r < 3; ++r) {
      threads.emplace_back([&, r] {
        Replica fresh(100 + r);
        std::function<void()> die;
        if (r == 1) {
          die = [&comms] {
            for (auto& c : comms) c->Abort();
          };
        }
        out[r].point = RecoverFromPeers(
            "job", kept[r], /*newest_offered_step=*/4, *fresh.model, *fresh.opt,
            *comms[r], c10::Device("cpu"), die);
        out[r].state = State(fresh);
      });
    }
    for (std::thread& t : threads) t.join();
    for (int r = 0; r < 3; ++r) {
      SCOPED_TRACE(r);
      EXPECT_TRUE(absl::IsAborted(out[r].point.status()))
          << out[r].point.status();
      Replica fresh(100 + r);
      EXPECT_TRUE(Equal(out[r].state, State(fresh)));  // Nothing loaded.
    }
  }
  // The next generation, without the new rank, recovers from the same kept
  // states: the newest step, bit for bit.
  std::vector<Outcome> out = Recover({kept[0], kept[1]}, /*newest_offered=*/4);
  for (int r = 0; r < 2; ++r) {
    SCOPED_TRACE(r);
    ASSERT_TRUE(out[r].point.ok()) << out[r].point.status();
    ASSERT_TRUE(out[r].point->has_value());
    EXPECT_EQ((*out[r].point)->position.step, 6);
    EXPECT_TRUE(Equal(out[r].state, expected));
  }
}

TEST(PeerRecoveryTest, ANewerCheckpointLeavesTheModelsAlone) {
  Replica trained(1);
  trained.Train(3);
  std::vector<Outcome> out =
      Recover({trained.Keep(3, 0), KeptState()}, /*newest_offered=*/5);
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(out[r].point.ok()) << out[r].point.status();
    EXPECT_FALSE(out[r].point->has_value());
    Replica fresh(100 + r);
    EXPECT_TRUE(Equal(out[r].state, State(fresh)));
  }
}

}  // namespace
}  // namespace ringleader
