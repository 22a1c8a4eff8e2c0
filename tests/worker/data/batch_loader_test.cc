#include "worker/data/batch_loader.h"

#include <ATen/core/Tensor.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/distributed_sampler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ringleader/v1/worker_service.pb.h"
#include "worker/data/dataset.h"
#include "worker/data/synthetic_dataset.h"

namespace ringleader {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

// 2x2 images whose pixels and label are the sample index, so a batch shows
// exactly which samples it holds. Optionally blocks gathers until released,
// fails the gather with a given ordinal, and checks the prefetch bound.
class ProbeDataset final : public ImageDataset {
 public:
  explicit ProbeDataset(int64_t size) : size_(size) {}

  int64_t size() const override { return size_; }
  int64_t image_rows() const override { return 2; }
  int64_t image_cols() const override { return 2; }
  int64_t num_classes() const override { return size_; }
  std::string Describe() const override { return "probe dataset"; }

  absl::Status Gather(const int64_t* indices, size_t n, float* images_out,
                      int64_t* labels_out) const override {
    absl::MutexLock lock(&mu_);
    const int64_t ordinal = gathers_++;
    // Batch `ordinal` may only be prepared while fewer than `prefetch`
    // finished ones wait (see the loader's CanProduce).
    if (prefetch_ > 0 && ordinal > consumed_ + prefetch_) bound_broken_ = true;
    mu_.Await(absl::Condition(&open_));
    if (ordinal == fail_at_) return absl::DataLossError("disk on fire");
    for (size_t i = 0; i < n; ++i) {
      for (int p = 0; p < 4; ++p) images_out[4 * i + p] = indices[i];
      labels_out[i] = indices[i];
    }
    return absl::OkStatus();
  }

  void SetOpen(bool open) {
    absl::MutexLock lock(&mu_);
    open_ = open;
  }
  void FailAt(int64_t ordinal) {
    absl::MutexLock lock(&mu_);
    fail_at_ = ordinal;
  }
  void CheckPrefetch(int prefetch) {
    absl::MutexLock lock(&mu_);
    prefetch_ = prefetch;
  }
  void Consumed() {
    absl::MutexLock lock(&mu_);
    ++consumed_;
  }
  void AwaitGathers(int64_t n) const {
    absl::MutexLock lock(&mu_);
    auto reached = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return gathers_ >= n;
    };
    mu_.Await(absl::Condition(&reached));
  }
  bool bound_broken() const {
    absl::MutexLock lock(&mu_);
    return bound_broken_;
  }

 private:
  const int64_t size_;
  mutable absl::Mutex mu_;
  mutable int64_t gathers_ ABSL_GUARDED_BY(mu_) = 0;
  mutable bool bound_broken_ ABSL_GUARDED_BY(mu_) = false;
  bool open_ ABSL_GUARDED_BY(mu_) = true;
  int64_t fail_at_ ABSL_GUARDED_BY(mu_) = -1;
  int prefetch_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t consumed_ ABSL_GUARDED_BY(mu_) = 0;
};

std::vector<int64_t> Labels(const Batch& b) {
  const int64_t* p = b.targets.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + b.targets.numel());
}

std::unique_ptr<BatchLoader> MustCreate(const Dataset& ds,
                                        std::vector<int64_t> indices,
                                        int64_t batch_size, int prefetch = 2,
                                        const Clock* clock = RealClock::Get()) {
  absl::StatusOr<std::unique_ptr<BatchLoader>> loader =
      BatchLoader::Create(ds, std::move(indices), batch_size, prefetch, clock);
  EXPECT_TRUE(loader.ok()) << loader.status();
  return *std::move(loader);
}

TEST(BatchLoaderTest, YieldsExactlyTheIndicesInOrderWithPartialLastBatch) {
  ProbeDataset ds(100);
  const std::vector<int64_t> indices = {5, 3, 99, 0, 3, 42, 7, 8, 1, 2, 64};
  auto loader = MustCreate(ds, indices, 4);
  EXPECT_EQ(loader->num_batches(), 3);
  EXPECT_EQ(loader->num_samples(), 11);
  std::vector<int64_t> seen;
  std::vector<int64_t> sizes;
  for (int64_t b = 0;; ++b) {
    std::optional<Batch> batch = loader->Next();
    if (!batch.has_value()) break;
    EXPECT_EQ(batch->index, b);
    const int64_t n = batch->targets.size(0);
    sizes.push_back(n);
    EXPECT_EQ(batch->inputs[0].scalar_type(), at::kFloat);
    EXPECT_EQ(batch->targets.scalar_type(), at::kLong);
    EXPECT_EQ(batch->inputs[0].dim(), 4);
    EXPECT_THAT(batch->inputs[0].sizes().vec(),
                ElementsAreArray(std::vector<int64_t>{n, 1, 2, 2}));
    EXPECT_TRUE(batch->inputs[0].is_contiguous());
    const float* pixels = batch->inputs[0].data_ptr<float>();
    for (int64_t i = 0; i < n; ++i) {
      for (int p = 0; p < 4; ++p) {
        EXPECT_EQ(pixels[4 * i + p], Labels(*batch)[i]);
      }
    }
    for (int64_t label : Labels(*batch)) seen.push_back(label);
  }
  EXPECT_EQ(seen, indices);
  EXPECT_EQ(sizes, (std::vector<int64_t>{4, 4, 3}));
  EXPECT_FALSE(loader->Next().has_value());  // Stays at the end.
  EXPECT_TRUE(loader->status().ok());
}

TEST(BatchLoaderTest, ExactMultipleHasNoPartialBatch) {
  ProbeDataset ds(10);
  std::vector<int64_t> indices(10);
  std::iota(indices.begin(), indices.end(), 0);
  auto loader = MustCreate(ds, indices, 5, 1);
  EXPECT_EQ(loader->num_batches(), 2);
  EXPECT_EQ(loader->Next()->targets.size(0), 5);
  EXPECT_EQ(loader->Next()->targets.size(0), 5);
  EXPECT_FALSE(loader->Next().has_value());
}

TEST(BatchLoaderTest, EmptyShard) {
  ProbeDataset ds(10);
  auto loader = MustCreate(ds, {}, 8);
  EXPECT_EQ(loader->num_batches(), 0);
  EXPECT_FALSE(loader->Next().has_value());
  EXPECT_TRUE(loader->status().ok());
}

TEST(BatchLoaderTest, MatchesDirectGatherOfARanksShard) {
  auto ds = SyntheticDataset::Create(1000, 17).value();
  v1::ShardAssignment a;
  a.set_seed(3);
  a.set_epoch(2);
  a.set_world_size(3);
  a.set_rank(1);
  a.set_dataset_size(1000);
  a.set_shuffle(true);
  const std::vector<int64_t> indices = ShardIndices(a);
  std::vector<float> images(indices.size() * 784);
  std::vector<int64_t> labels(indices.size());
  ASSERT_TRUE(
      ds->Gather(indices.data(), indices.size(), images.data(), labels.data())
          .ok());
  auto loader = MustCreate(*ds, indices, 64, 3);
  size_t at = 0;
  while (std::optional<Batch> b = loader->Next()) {
    const int64_t n = b->targets.size(0);
    ASSERT_LE(at + n, indices.size());
    EXPECT_EQ(
        std::vector<int64_t>(labels.begin() + at, labels.begin() + at + n),
        Labels(*b));
    const float* p = b->inputs[0].data_ptr<float>();
    EXPECT_TRUE(std::equal(p, p + n * 784, images.begin() + at * 784));
    at += n;
  }
  EXPECT_EQ(at, indices.size());
}

TEST(BatchLoaderTest, NeverPreparesMoreThanPrefetchAhead) {
  for (const int prefetch : {1, 2, 5}) {
    ProbeDataset ds(1000);
    ds.CheckPrefetch(prefetch);
    std::vector<int64_t> indices(1000);
    std::iota(indices.begin(), indices.end(), 0);
    auto loader = MustCreate(ds, indices, 10, prefetch);
    int64_t batches = 0;
    while (loader->Next().has_value()) {
      ds.Consumed();
      ++batches;
    }
    EXPECT_EQ(batches, 100);
    EXPECT_FALSE(ds.bound_broken()) << "prefetch " << prefetch;
  }
}

TEST(BatchLoaderTest, StoppingEarlyDoesNotHang) {
  ProbeDataset ds(100);
  std::vector<int64_t> indices(100000, 7);
  {
    auto loader = MustCreate(ds, indices, 1);
    ASSERT_TRUE(loader->Next().has_value());
  }  // Destroyed with thousands of batches to go.
  {
    auto loader = MustCreate(ds, indices, 1);
    ds.AwaitGathers(2);
  }  // Destroyed before any Next, with a full queue.
}

TEST(BatchLoaderTest, StoppingDuringAGatherWaitsForItOnly) {
  ProbeDataset ds(100);
  ds.SetOpen(false);
  auto loader = MustCreate(ds, std::vector<int64_t>(1000, 1), 1);
  ds.AwaitGathers(1);  // The thread is inside a gather that cannot finish.
  std::thread opener([&ds] { ds.SetOpen(true); });
  loader.reset();  // Returns once that one gather is done.
  opener.join();
}

TEST(BatchLoaderTest, GatherErrorEndsTheStreamWithStatus) {
  ProbeDataset ds(100);
  ds.FailAt(2);
  auto loader = MustCreate(ds, std::vector<int64_t>(50, 3), 5);
  EXPECT_TRUE(loader->Next().has_value());
  EXPECT_TRUE(loader->Next().has_value());
  EXPECT_FALSE(loader->Next().has_value());
  EXPECT_FALSE(loader->Next().has_value());
  EXPECT_EQ(loader->status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(loader->status().message()),
              HasSubstr("batch 2: disk on fire"));
}

// A clock that moves only when told, and lets a test wait until someone has
// read it.
class StepClock final : public Clock {
 public:
  absl::Time Now() const override {
    absl::MutexLock lock(&mu_);
    ++reads_;
    return now_;
  }
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }
  void AwaitReads(int n) const {
    absl::MutexLock lock(&mu_);
    auto reached = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return reads_ >= n;
    };
    mu_.Await(absl::Condition(&reached));
  }

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_) = absl::UnixEpoch();
  mutable int reads_ ABSL_GUARDED_BY(mu_) = 0;
};

TEST(BatchLoaderTest, CountsTimeTheConsumerWaited) {
  ProbeDataset ds(100);
  ds.SetOpen(false);
  StepClock clock;
  auto loader = MustCreate(ds, std::vector<int64_t>(20, 1), 10, 2, &clock);
  EXPECT_EQ(loader->data_wait(), absl::ZeroDuration());
  // Once Next has noted when it began waiting, 7 ms pass and data arrives.
  std::thread producer_side([&] {
    clock.AwaitReads(1);
    clock.Advance(absl::Milliseconds(7));
    ds.SetOpen(true);
  });
  ASSERT_TRUE(loader->Next().has_value());
  producer_side.join();
  EXPECT_EQ(loader->data_wait(), absl::Milliseconds(7));
  ASSERT_TRUE(loader->Next().has_value());
  EXPECT_FALSE(loader->Next().has_value());
  // The clock did not move again, whatever else was waited for.
  EXPECT_EQ(loader->data_wait(), absl::Milliseconds(7));
}

TEST(BatchLoaderTest, RejectsBadArguments) {
  ProbeDataset ds(10);
  EXPECT_THAT(std::string(BatchLoader::Create(ds, {1}, 0).status().message()),
              HasSubstr("batch size must be >= 1"));
  EXPECT_THAT(
      std::string(BatchLoader::Create(ds, {1}, 1, 0).status().message()),
      HasSubstr("prefetch must be in [1, 1024]"));
  absl::Status s = BatchLoader::Create(ds, {1, 10}, 1).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("sample index 10 (position 1)"));
}

}  // namespace
}  // namespace ringleader
