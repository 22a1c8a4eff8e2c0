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
