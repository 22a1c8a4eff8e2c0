// Each rank plans its own shards (BatchSource, common/shard_plan.h) from
// what its generation fixes, and the plan is the one the coordinator's
// GetShard answers, for a spread of seeds, world sizes, ranks, dataset
// sizes, drop_last and shuffle settings, and resume points: the coordinator
// is not needed on the training path.
#include "worker/train/batch_source.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/distributed_sampler.h"
#include "common/fake_clock.h"
#include "coordinator/coordinator.h"
#include "coordinator/state_store.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

constexpr int64_t kTestSize = 13;

struct Case {
  uint64_t seed = 0;
  int32_t world = 1;
  int64_t size = 1;
  bool shuffle = false;
  bool drop_last = false;
  ShardResume resume;  // epoch -1: a fresh start.
};

std::string Describe(const Case& c) {
  return absl::StrCat("seed ", c.seed, " world ", c.world, " size ", c.size,
                      " shuffle ", c.shuffle, " drop_last ", c.drop_last,
                      " resume epoch ", c.resume.epoch, " offset ",
                      c.resume.epoch_sample_offset);
}

// A real Coordinator (no gRPC: its calls directly) with one job of `c`'s
// settings and `c.world` workers in a generation; when `c` resumes, a
// second generation offered the checkpoint rank 0 committed in the first.
class Cluster {
 public:
  explicit Cluster(const Case& c) {
    store_ = *StateStore::Open(":memory:");
    coord_ = std::make_unique<Coordinator>(CoordinatorOptions(), store_.get(),
                                           &clock_, &clock_);
    EXPECT_TRUE(coord_->Start().ok());
    v1::SubmitJobRequest sub;
    v1::JobSpec& spec = *sub.mutable_spec();
    spec = testing::MinimalJobSpec("plan", c.world, c.world);
    spec.set_seed(c.seed);
    spec.set_epochs(3);
    spec.set_max_restarts(5);
    spec.set_checkpoint_dir("/ckpt");
    spec.mutable_dataset()->set_synthetic_train_size(c.size);
    spec.mutable_dataset()->set_synthetic_test_size(kTestSize);
    spec.mutable_dataset()->set_shuffle(c.shuffle);
    spec.mutable_dataset()->set_drop_last(c.drop_last);
    job_ = coord_->user_calls().SubmitJob(sub)->job_id();
    for (int i = 0; i < c.world; ++i) {
      v1::RegisterRequest r;
      r.set_hostname("host");
      r.set_device("cpu");
      r.set_pid(100 + i);
      r.set_address("127.0.0.1");
      absl::StatusOr<v1::RegisterResponse> reg =
          coord_->worker_calls().Register(Caller(), r);
      EXPECT_TRUE(reg.ok()) << reg.status();
      ids_.push_back(reg->worker_id());
      caller_.Add(reg->worker_id(), reg->worker_token()).IgnoreError();
      v1::HeartbeatRequest hb;
      hb.set_worker_id(reg->worker_id());
      EXPECT_TRUE(
          coord_->worker_calls().Heartbeat(caller_, hb)->has_assignment());
    }
    JoinAll();
    if (c.resume.epoch < 0) return;
    v1::CommitCheckpointRequest commit;
    commit.set_job_id(job_);
    commit.set_generation(by_rank_[0].generation());
    commit.set_rank(0);
    commit.set_epoch(c.resume.epoch);
    commit.set_step(5);
    commit.set_epoch_sample_offset(c.resume.epoch_sample_offset);
    commit.set_path("/ckpt/plan-step5.ckpt");
    EXPECT_TRUE(
        coord_->training_calls().CommitCheckpoint(caller_, commit).ok());
    JoinAll();  // Joining again ends the first generation.
    EXPECT_EQ(by_rank_[0].resume_candidates_size(), 1);
  }

  // The generation as rank `rank` was told it.
  const v1::JoinRendezvousResponse& Generation(int32_t rank) const {
    return by_rank_[rank];
  }

  absl::StatusOr<v1::ShardAssignment> GetShard(int32_t rank, int64_t epoch,
                                               bool test_split, int64_t size) {
    v1::GetShardRequest r;
    r.set_job_id(job_);
    r.set_generation(by_rank_[rank].generation());
    r.set_rank(rank);
    r.set_epoch(epoch);
    r.set_test_split(test_split);
    r.set_dataset_size(size);
    if (by_rank_[rank].resume_candidates_size() > 0) {
      r.set_resume_checkpoint_id(
          by_rank_[rank].resume_candidates(0).checkpoint_id());
    }
    return coord_->training_calls().GetShard(caller_, r);
  }

 private:
  void JoinAll() {
    by_rank_.assign(ids_.size(), v1::JoinRendezvousResponse());
    for (const std::string& id : ids_) {
      v1::JoinRendezvousRequest j;
      j.set_job_id(job_);
      j.set_worker_id(id);
      coord_->join_calls().JoinRendezvous(
          caller_, j, [this](absl::StatusOr<v1::JoinRendezvousResponse> g) {
            ASSERT_TRUE(g.ok()) << g.status();
            by_rank_[g->rank()] = *g;
          });
    }
  }

  FakeClock clock_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<Coordinator> coord_;
  std::string job_;
  std::vector<std::string> ids_;
  Caller caller_;  // Every worker's credential.
  std::vector<v1::JoinRendezvousResponse> by_rank_;
};

std::vector<Case> Cases() {
  std::vector<Case> out;
  const uint64_t seeds[] = {0, 7, ~uint64_t{0}};
  int i = 0;
  for (int32_t world : {1, 2, 3, 5}) {
    for (int64_t size : {1, 7, 1001}) {
      for (bool drop_last : {false, true}) {
        for (ShardResume resume :
             {ShardResume(), ShardResume{0, std::min<int64_t>(3, size)},
              ShardResume{1, size}, ShardResume{2, size / 2}}) {
          Case c;
          c.seed = seeds[i % 3];
          c.shuffle = i % 2 == 0;
          ++i;
          c.world = world;
          c.size = size;
          c.drop_last = drop_last;
          c.resume = resume;
          out.push_back(c);
        }
      }
    }
  }
  return out;
}

TEST(BatchSourceTest, TheLocalPlanIsTheCoordinatorsGetShardAnswer) {
  const std::vector<Case> cases = Cases();
  ASSERT_EQ(cases.size(), 96u);
  for (const Case& c : cases) {
    SCOPED_TRACE(Describe(c));
    Cluster cluster(c);
    v1::JoinRendezvousResponse g = cluster.Generation(0);
    absl::StatusOr<JobData> data =
        LoadJobData(g.spec().dataset(), g.spec().seed());
    ASSERT_TRUE(data.ok()) << data.status();
    for (int32_t rank = 0; rank < c.world; ++rank) {
      // What the rank knows: its generation, its data, where it resumed.
      BatchSource source(&*data, cluster.Generation(rank), c.resume);
      for (int64_t epoch = 0; epoch < 3; ++epoch) {
        absl::StatusOr<v1::ShardAssignment> answer =
            cluster.GetShard(rank, epoch, false, c.size);
        ASSERT_TRUE(answer.ok()) << answer.status();
        const v1::ShardAssignment local = source.TrainShard(epoch);
        EXPECT_TRUE(
            google::protobuf::util::MessageDifferencer::Equals(local, *answer))
            << "rank " << rank << " epoch " << epoch << ": local "
            << local.ShortDebugString() << " vs GetShard "
            << answer->ShortDebugString();
        EXPECT_EQ(ShardIndices(local), ShardIndices(*answer));
        absl::StatusOr<BatchSource::Epoch> e = source.Train(epoch);
        ASSERT_TRUE(e.ok()) << e.status();
        EXPECT_EQ(e->loader->num_samples(), ShardSize(*answer));
      }
      absl::StatusOr<v1::ShardAssignment> test =
          cluster.GetShard(rank, 0, true, kTestSize);
      ASSERT_TRUE(test.ok()) << test.status();
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(
          source.TestShard(), *test))
          << source.TestShard().ShortDebugString() << " vs "
          << test->ShortDebugString();
    }
  }
}

// All of rank `rank`'s training batches of `epoch`, cut by `split` (null:
// evenly).
std::vector<Batch> AllBatches(const BatchSource& source, int64_t epoch,
                              const BatchSplitSchedule* split) {
  absl::StatusOr<BatchSource::Epoch> e = source.Train(epoch, split);
  EXPECT_TRUE(e.ok()) << e.status();
  std::vector<Batch> out;
  if (!e.ok()) return out;
  while (std::optional<Batch> b = e->loader->Next()) out.push_back(*b);
  EXPECT_TRUE(e->loader->status().ok()) << e->loader->status();
  return out;
}

std::vector<int64_t> Sorted(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Balanced batches (DdpSpec.balance_batches): ranks that share each global
// batch by a schedule's counts train, step by step, on the same samples as
// the even split, a short last batch shared evenly; each loss weighs its
// share against the even one.
TEST(BatchSourceTest, ABalancedSplitTrainsEachStepOnTheEvenSplitsSamples) {
  Case c;
  c.seed = 7;
  c.world = 2;
  c.size = 1001;  // From offset 3: 499 a rank, 49 batches of 10, then 9.
  c.shuffle = true;
  c.resume = ShardResume{0, 3};
  Cluster cluster(c);
  v1::JoinRendezvousResponse g = cluster.Generation(0);
  ASSERT_EQ(g.spec().batch_size(), 10);
  absl::StatusOr<JobData> data =
      LoadJobData(g.spec().dataset(), g.spec().seed());
  ASSERT_TRUE(data.ok()) << data.status();
  std::vector<std::vector<Batch>> even(2), balanced(2);
  for (int32_t rank = 0; rank < 2; ++rank) {
    BatchSource source(&*data, cluster.Generation(rank), c.resume);
    BatchSplitSchedule split({13, 7});
    split.Set(5, {8, 12});
    even[rank] = AllBatches(source, 0, nullptr);
    balanced[rank] = AllBatches(source, 0, &split);
    ASSERT_EQ(balanced[rank].size(), even[rank].size());
    absl::StatusOr<BatchSource::Epoch> e = source.Train(0);
    ASSERT_TRUE(e.ok());
    EXPECT_DOUBLE_EQ(source.LossWeight(*e, 0, rank == 0 ? 13 : 7),
                     rank == 0 ? 1.3 : 0.7);
    EXPECT_DOUBLE_EQ(source.LossWeight(*e, 49, 9), 1.0);
  }
  const size_t batches = even[0].size();
  for (size_t b = 0; b < batches; ++b) {
    SCOPED_TRACE(absl::StrCat("batch ", b));
    const bool last = b + 1 == batches;
    const size_t want0 = last ? 9 : b < 5 ? 13 : 8;
    EXPECT_EQ(balanced[0][b].size(), want0);
    EXPECT_EQ(balanced[1][b].size(), last ? 9 : 20 - want0);
    std::vector<int64_t> want = even[0][b].sample_ids;
    want.insert(want.end(), even[1][b].sample_ids.begin(),
                even[1][b].sample_ids.end());
    std::vector<int64_t> got = balanced[0][b].sample_ids;
    got.insert(got.end(), balanced[1][b].sample_ids.begin(),
               balanced[1][b].sample_ids.end());
    EXPECT_EQ(Sorted(got), Sorted(want));
  }
}

}  // namespace
}  // namespace ringleader
