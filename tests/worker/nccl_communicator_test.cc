// NcclCommunicator on real GPUs; skipped with the CUDA runtime's reason where
// there are none. Argument checks run everywhere.
#include "worker/cuda/nccl_communicator.h"

#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "worker/cuda/nccl_unique_id.h"

namespace ringleader {
namespace {

TEST(NcclCommunicatorTest, RejectsBadIdAndRank) {
  auto bad_id = NcclCommunicator::Create("short", 0, 1, {});
  EXPECT_TRUE(absl::IsInvalidArgument(bad_id.status()));
  auto bad_rank = NcclCommunicator::Create(std::string(128, 'x'), 2, 2, {});
  EXPECT_TRUE(absl::IsInvalidArgument(bad_rank.status()));
}

TEST(NcclCommunicatorTest, AllReduceAndBroadcastOnDeviceBuffers) {
  auto devices = CudaDeviceCount();
  if (!devices.ok()) GTEST_SKIP() << "skipped: " << devices.status().message();
  const int world = std::min(*devices, 4);
  auto id = NewNcclUniqueId();
  ASSERT_TRUE(id.ok()) << id.status();
  constexpr size_t kCount = 1 << 20;
  std::vector<absl::Status> results(world);
  std::vector<std::thread> ranks;
  for (int r = 0; r < world; ++r) {
    ranks.emplace_back([&, r] {
      cudaSetDevice(r);
      NcclCommunicator::Options o;
      o.device = r;
      auto comm = NcclCommunicator::Create(*id, r, world, o);
      if (!comm.ok()) {
        results[r] = comm.status();
        return;
      }
      std::vector<float> host(kCount, static_cast<float>(r + 1));
      float* dev = nullptr;
      cudaMalloc(&dev, kCount * sizeof(float));
      cudaMemcpy(dev, host.data(), kCount * sizeof(float),
                 cudaMemcpyHostToDevice);
      absl::Status s = (*comm)->AllReduceSum(dev, kCount, DataType::kFloat32);
      cudaMemcpy(host.data(), dev, kCount * sizeof(float),
                 cudaMemcpyDeviceToHost);
      const float want = world * (world + 1) / 2.0f;
      if (s.ok() && (host[0] != want || host[kCount - 1] != want)) {
        s = absl::InternalError("wrong sum");
      }
      if (s.ok()) {
        float v = static_cast<float>(r * 10);
        cudaMemcpy(dev, &v, sizeof(float), cudaMemcpyHostToDevice);
        s = (*comm)->Broadcast(dev, sizeof(float), world - 1);
        cudaMemcpy(&v, dev, sizeof(float), cudaMemcpyDeviceToHost);
        if (s.ok() && v != (world - 1) * 10.0f) {
          s = absl::InternalError("wrong broadcast");
        }
      }
      cudaFree(dev);
      results[r] = s;
    });
  }
  for (auto& t : ranks) t.join();
  for (int r = 0; r < world; ++r) EXPECT_TRUE(results[r].ok()) << results[r];
}

// Compressed gradient buckets: NCCL sums fp16 and bf16 natively. Rank r
// holds r + 1 (exact in both types for up to 4 ranks) and, on 2 ranks,
// values whose sum ties: 1 + 2^-11 (fp16) and 256 + 1 (bf16) round to even.
TEST(NcclCommunicatorTest, AllReducesFp16AndBf16) {
  auto devices = CudaDeviceCount();
  if (!devices.ok()) GTEST_SKIP() << "skipped: " << devices.status().message();
  const int world = std::min(*devices, 4);
  auto id = NewNcclUniqueId();
  ASSERT_TRUE(id.ok()) << id.status();
  std::vector<absl::Status> results(world);
  std::vector<std::thread> ranks;
  for (int r = 0; r < world; ++r) {
    ranks.emplace_back([&, r] {
      cudaSetDevice(r);
      NcclCommunicator::Options o;
      o.device = r;
      auto comm = NcclCommunicator::Create(*id, r, world, o);
      if (!comm.ok()) {
        results[r] = comm.status();
        return;
      }
      // r + 1 in each type, and the tie operands: fp16 1 or 2^-11, bf16
      // 256 or 1.
      const uint16_t fp16_values[] = {0x3c00, 0x4000, 0x4200, 0x4400};
      const uint16_t bf16_values[] = {0x3f80, 0x4000, 0x4040, 0x4080};
      std::vector<uint16_t> host = {
          fp16_values[r], static_cast<uint16_t>(r == 0 ? 0x3c00 : 0x1000),
          bf16_values[r], static_cast<uint16_t>(r == 0 ? 0x4380 : 0x3f80)};
      uint16_t* dev = nullptr;
      cudaMalloc(&dev, host.size() * sizeof(uint16_t));
      cudaMemcpy(dev, host.data(), host.size() * sizeof(uint16_t),
                 cudaMemcpyHostToDevice);
      absl::Status s = (*comm)->AllReduceSum(dev, 2, DataType::kFloat16);
      if (s.ok()) s = (*comm)->AllReduceSum(dev + 2, 2, DataType::kBFloat16);
      cudaMemcpy(host.data(), dev, host.size() * sizeof(uint16_t),
                 cudaMemcpyDeviceToHost);
      cudaFree(dev);
      // 1 + 2 + ... + world in each type.
      const uint16_t fp16_sums[] = {0x3c00, 0x4200, 0x4600, 0x4900};
      const uint16_t bf16_sums[] = {0x3f80, 0x4040, 0x40c0, 0x4120};
      if (s.ok() && (host[0] != fp16_sums[world - 1] ||
                     host[2] != bf16_sums[world - 1])) {
        s = absl::InternalError("wrong 16-bit sum");
      }
      if (s.ok() && world == 2 && (host[1] != 0x3c00 || host[3] != 0x4380)) {
        s = absl::InternalError("16-bit sum not rounded to nearest even");
      }
      results[r] = s;
    });
  }
  for (auto& t : ranks) t.join();
  for (int r = 0; r < world; ++r) EXPECT_TRUE(results[r].ok()) << results[r];
}

TEST(NcclCommunicatorTest, AbortFailsLaterWork) {
  auto devices = CudaDeviceCount();
  if (!devices.ok()) GTEST_SKIP() << "skipped: " << devices.status().message();
  auto id = NewNcclUniqueId();
  ASSERT_TRUE(id.ok());
  auto comm = NcclCommunicator::Create(*id, 0, 1, {});
  ASSERT_TRUE(comm.ok()) << comm.status();
  (*comm)->Abort();
  float* dev = nullptr;
  cudaMalloc(&dev, sizeof(float));
  EXPECT_TRUE(
      absl::IsAborted((*comm)->AllReduceSum(dev, 1, DataType::kFloat32)));
  cudaFree(dev);
}

// Holds a CUDA stream until the test opens it: a host function queued on
// the stream blocks it, without a kernel (this build has no nvcc) and
// without LibTorch.
class StreamGate {
 public:
  explicit StreamGate(cudaStream_t stream)
      : open_(std::make_shared<std::atomic<bool>>(false)) {
    // The callback owns a reference: it may run after the gate is gone.
    auto* held = new std::shared_ptr<std::atomic<bool>>(open_);
    EXPECT_EQ(cudaLaunchHostFunc(stream, &StreamGate::Hold, held), cudaSuccess);
  }
  ~StreamGate() { Open(); }
  void Open() { open_->store(true); }

 private:
  static void CUDART_CB Hold(void* data) {
    std::unique_ptr<std::shared_ptr<std::atomic<bool>>> open(
        static_cast<std::shared_ptr<std::atomic<bool>>*>(data));
    // Bounded: a broken test must not hang CI.
    for (int i = 0; i < 60000 && !(*open)->load(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  std::shared_ptr<std::atomic<bool>> open_;
};

struct OneRank {
  cudaStream_t producer = nullptr;
  cudaStream_t comm_stream = nullptr;
  std::unique_ptr<NcclCommunicator> comm;
  float* dev = nullptr;
  ~OneRank() {
    comm.reset();
    if (dev != nullptr) cudaFree(dev);
    if (producer != nullptr) cudaStreamDestroy(producer);
    if (comm_stream != nullptr) cudaStreamDestroy(comm_stream);
  }
};

// World size 1 on cuda:0, with streams the test can hold.
absl::Status StartOneRank(OneRank& r, absl::Duration timeout) {
  auto id = NewNcclUniqueId();
  if (!id.ok()) return id.status();
  cudaSetDevice(0);
  cudaStreamCreateWithFlags(&r.producer, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&r.comm_stream, cudaStreamNonBlocking);
  cudaMalloc(&r.dev, sizeof(float));
  NcclCommunicator::Options o;
  o.producer_stream = r.producer;
  o.comm_stream = r.comm_stream;
  o.timeout = timeout;
  auto comm = NcclCommunicator::Create(*id, 0, 1, o);
  if (!comm.ok()) return comm.status();
  r.comm = *std::move(comm);
  return absl::OkStatus();
}

// The collective follows the producer stream's queued work, and Wait orders
// the producer stream after it without blocking the host: while the
// producer is held, the value is not yet written, yet Wait has returned.
TEST(NcclCommunicatorTest, FollowsTheProducerAndWaitDoesNotBlockTheHost) {
  auto devices = CudaDeviceCount();
  if (!devices.ok()) GTEST_SKIP() << "skipped: " << devices.status().message();
  OneRank r;
  ASSERT_TRUE(StartOneRank(r, absl::Seconds(60)).ok());
  float zero = 0, value = 7.5f, out = -1;
  ASSERT_EQ(cudaMemcpy(r.dev, &zero, sizeof(float), cudaMemcpyHostToDevice),
            cudaSuccess);
  auto gate = std::make_unique<StreamGate>(r.producer);
  cudaMemcpyAsync(r.dev, &value, sizeof(float), cudaMemcpyHostToDevice,
                  r.producer);
  std::unique_ptr<Work> work =
      r.comm->AllReduceSumAsync(r.dev, 1, DataType::kFloat32);
  EXPECT_TRUE(work->Wait().ok());  // Returns with the producer still held.
  cudaMemcpyAsync(&out, r.dev, sizeof(float), cudaMemcpyDeviceToHost,
                  r.producer);
  EXPECT_EQ(cudaStreamQuery(r.producer), cudaErrorNotReady);
  gate->Open();
  ASSERT_EQ(cudaStreamSynchronize(r.producer), cudaSuccess);
  EXPECT_EQ(out, value);  // The sum of one rank: what the producer wrote.
  EXPECT_FALSE(r.comm->InterruptedAfterUse());
}

// Abort only flags (the teardown runs on the watchdog's thread); a result
// the device was told to use and never got is reported, one never used is
// not.
TEST(NcclCommunicatorTest, AbortReportsAResultUsedBeforeItCompleted) {
  auto devices = CudaDeviceCount();
  if (!devices.ok()) GTEST_SKIP() << "skipped: " << devices.status().message();
  for (bool use : {false, true}) {
    OneRank r;
    ASSERT_TRUE(StartOneRank(r, absl::Seconds(60)).ok());
    StreamGate gate(r.comm_stream);
    std::unique_ptr<Work> work =
        r.comm->AllReduceSumAsync(r.dev, 1, DataType::kFloat32);
    if (use) {
      EXPECT_TRUE(work->Wait().ok());
    }
    const absl::Time start = absl::Now();
    r.comm->Abort();
    EXPECT_LT(absl::Now() - start, absl::Seconds(1));
    EXPECT_EQ(r.comm->InterruptedAfterUse(), use);
    EXPECT_TRUE(absl::IsAborted(work->Wait()));
    EXPECT_TRUE(absl::IsAborted(
        r.comm->AllReduceSumAsync(r.dev, 1, DataType::kFloat32)->Wait()));
    gate.Open();
  }
}

// An operation older than the timeout is aborted by the watchdog, with the
// reason, though nobody waits on the host.
TEST(NcclCommunicatorTest, TheWatchdogAbortsAnOperationPastTheTimeout) {
  auto devices = CudaDeviceCount();
  if (!devices.ok()) GTEST_SKIP() << "skipped: " << devices.status().message();
  OneRank r;
  ASSERT_TRUE(StartOneRank(r, absl::Milliseconds(300)).ok());
  StreamGate gate(r.comm_stream);
  std::unique_ptr<Work> work =
      r.comm->AllReduceSumAsync(r.dev, 1, DataType::kFloat32);
  absl::Status later;
  for (int i = 0; i < 500; ++i) {  // At most 5 s.
    later = r.comm->AllReduceSumAsync(r.dev, 1, DataType::kFloat32)->Wait();
    if (!later.ok()) break;
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_TRUE(absl::IsAborted(later)) << later;
  EXPECT_NE(later.message().find("did not finish"), std::string::npos) << later;
  gate.Open();
}

}  // namespace
}  // namespace ringleader
