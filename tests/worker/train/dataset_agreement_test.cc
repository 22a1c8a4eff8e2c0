// The ranks of a generation compare the dataset sizes they see with one
// all-reduce (Gloo ranks as threads here): every rank fails the job with the
// same message, naming both sizes, when one rank's copy differs.
#include "worker/train/dataset_agreement.h"

#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/worker/create_all.h"
#include "tests/worker/memory_kv_client.h"
#include "worker/comm/gloo_communicator.h"
#include "worker/train/job_error.h"

namespace ringleader {
namespace {

SplitSizes Sizes(int64_t train, int64_t test) {
  SplitSizes s;
  s.train = train;
  s.test = test;
  s.train_name = "train split of /data/x.npy";
  s.test_name = "test split of /data/tx.npy";
  return s;
}

std::vector<int64_t> Summed(const std::vector<SplitSizes>& ranks) {
  const int world = static_cast<int>(ranks.size());
  std::vector<int64_t> sum(2 * world, 0);
  for (int r = 0; r < world; ++r) {
    std::vector<int64_t> slots = DatasetSizeSlots(r, world, ranks[r]);
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += slots[i];
  }
  return sum;
}

TEST(DatasetAgreementTest, EachRankFillsItsOwnSlots) {
  EXPECT_EQ(DatasetSizeSlots(1, 3, Sizes(60000, 10000)),
            (std::vector<int64_t>{0, 0, 60000, 10000, 0, 0}));
}

TEST(DatasetAgreementTest, DifferentSizesAreNamed) {
  const SplitSizes same = Sizes(60000, 10000);
  EXPECT_TRUE(CheckDatasetSizes(Summed({same, same, same}), 3, same).ok());
  absl::Status s =
      CheckDatasetSizes(Summed({same, same, Sizes(59999, 10000)}), 3, same);
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_EQ(s.message(),
            "rank 0 sees 60000 samples in its train split of /data/x.npy but "
            "rank 2 sees 59999: every worker needs the same dataset");
  s = CheckDatasetSizes(Summed({same, Sizes(60000, 9000)}), 2, same);
  EXPECT_EQ(s.message(),
            "rank 0 sees 10000 samples in its test split of /data/tx.npy but "
            "rank 1 sees 9000: every worker needs the same dataset");
  EXPECT_TRUE(absl::IsInternal(CheckDatasetSizes({1, 2, 3}, 2, same)));
}

// Every rank's outcome of AgreeOnDatasetSizes over real Gloo ranks.
std::vector<absl::Status> Agree(const std::vector<SplitSizes>& ranks) {
  MemoryKvClient kv;
  GlooCommunicator::Options o;
  o.timeout = absl::Seconds(30);
  const int world = static_cast<int>(ranks.size());
  std::vector<std::unique_ptr<GlooCommunicator>> comms =
      testing::CreateAll<GlooCommunicator>(&kv, world, o);
  std::vector<absl::Status> out(world);
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      out[r] = AgreeOnDatasetSizes(*comms[r], c10::Device("cpu"), r, world,
                                   ranks[r]);
    });
  }
  for (std::thread& t : threads) t.join();
  return out;
}

TEST(DatasetAgreementTest, EveryRankFailsTheJobWithTheSameMessage) {
  const SplitSizes same = Sizes(64, 16);
  for (const absl::Status& s : Agree({same, same, same})) {
    EXPECT_TRUE(s.ok()) << s;
  }
  std::vector<absl::Status> out = Agree({same, Sizes(63, 16), same});
  for (const absl::Status& s : out) {
    EXPECT_TRUE(IsJobError(s)) << s;
    EXPECT_EQ(s.message(), out[0].message());
  }
  EXPECT_EQ(out[0].message(),
            "rank 0 sees 64 samples in its train split of /data/x.npy but "
            "rank 1 sees 63: every worker needs the same dataset");
}

}  // namespace
}  // namespace ringleader
