#include "worker/comm/metered_communicator.h"

#include <vector>

#include "gtest/gtest.h"

namespace ringleader {
namespace {

// Records calls; its work fails when asked to.
class RecordingCommunicator : public Communicator {
 public:
  class DoneWork : public Work {
   public:
    explicit DoneWork(absl::Status s) : s_(s) {}
    absl::Status Wait() override { return s_; }

   private:
    absl::Status s_;
  };
  int rank() const override { return 1; }
  int world_size() const override { return 4; }
  std::unique_ptr<Work> AllReduceSumAsync(void*, size_t count,
                                          DataType) override {
    counts.push_back(count);
    return std::make_unique<DoneWork>(next);
  }
  absl::Status Broadcast(void*, size_t bytes, int) override {
    broadcast_bytes += bytes;
    return absl::OkStatus();
  }
  void Abort() override { aborted = true; }

  std::vector<size_t> counts;
  size_t broadcast_bytes = 0;
  bool aborted = false;
  absl::Status next;
};

TEST(MeteredCommunicatorTest, CountsBytesAndTimesEachAllReduce) {
  metrics::Registry r;
  metrics::Counter* bytes = r.AddCounter("b_total", "b").Get();
  metrics::Histogram* secs = r.AddHistogram("s", "s", {1e9}).Get();
  RecordingCommunicator inner;
  MeteredCommunicator comm(&inner, bytes, secs);
  EXPECT_EQ(comm.rank(), 1);
  EXPECT_EQ(comm.world_size(), 4);

  std::unique_ptr<Work> a =
      comm.AllReduceSumAsync(nullptr, 10, DataType::kFloat32);
  std::unique_ptr<Work> b =
      comm.AllReduceSumAsync(nullptr, 3, DataType::kInt64);
  EXPECT_EQ(bytes->Value(), 10 * 4 + 3 * 8);  // Counted at launch.
  EXPECT_EQ(secs->Snap().count, 0u);          // Timed when done.
  EXPECT_TRUE(a->Wait().ok());
  EXPECT_TRUE(a->Wait().ok());  // A second Wait is not a second collective.
  EXPECT_EQ(secs->Snap().count, 1u);
  EXPECT_TRUE(b->Wait().ok());
  EXPECT_EQ(secs->Snap().count, 2u);
  EXPECT_GE(secs->Snap().sum, 0);

  inner.next = absl::AbortedError("peer died");
  EXPECT_TRUE(
      absl::IsAborted(comm.AllReduceSum(nullptr, 1, DataType::kFloat32)));
  EXPECT_EQ(inner.counts, (std::vector<size_t>{10, 3, 1}));

  // Not all-reduces: forwarded, not metered.
  EXPECT_TRUE(comm.Broadcast(nullptr, 100, 0).ok());
  EXPECT_EQ(inner.broadcast_bytes, 100u);
  EXPECT_EQ(bytes->Value(), 10 * 4 + 3 * 8 + 4);
  comm.Abort();
  EXPECT_TRUE(inner.aborted);
}

}  // namespace
}  // namespace ringleader
