// NcclCommunicator on real GPUs; skipped with the CUDA runtime's reason where
// there are none. Argument checks run everywhere.
#include "worker/cuda/nccl_communicator.h"

#include <cuda_runtime.h>

#include <thread>
#include <vector>

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

}  // namespace
}  // namespace ringleader
