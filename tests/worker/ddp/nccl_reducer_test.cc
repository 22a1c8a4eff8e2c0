// The reducer over NCCL on one GPU, the whole path a multi-GPU job takes:
// autograd hook -> producer-stream event -> ncclAllReduce on the
// communicator's stream -> Wait ordering the compute stream after it. A
// world of one communicates only with DdpSpec.communicate_alone; NCCL
// cannot put two ranks on one GPU. Built only with a CUDA LibTorch and
// NCCL (scripts/gpu_check.sh runs it); skipped without a visible GPU.
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/Sleep.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <memory>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "worker/cuda/nccl_unique_id.h"
#include "worker/ddp/reducer.h"
#include "worker/device/cuda_backend.h"

namespace ringleader {
namespace {

// Several layers, so small caps give several buckets launched in backward.
torch::nn::Sequential MakeModel() {
  torch::manual_seed(3);
  return torch::nn::Sequential(torch::nn::Linear(256, 512), torch::nn::ReLU(),
                               torch::nn::Linear(512, 512), torch::nn::ReLU(),
                               torch::nn::Linear(512, 10));
}

std::vector<torch::Tensor> CpuGrads(const torch::Tensor& x,
                                    const torch::Tensor& y) {
  torch::nn::Sequential model = MakeModel();
  torch::nn::functional::cross_entropy(model->forward(x), y).backward();
  std::vector<torch::Tensor> grads;
  for (const auto& p : model->parameters()) grads.push_back(p.grad().clone());
  return grads;
}

absl::StatusOr<std::unique_ptr<Communicator>> OneRankNccl() {
  absl::StatusOr<std::string> id = NewNcclUniqueId();
  if (!id.ok()) return id.status();
  CommunicatorRequest request;
  request.device.cuda = true;
  request.device.index = 0;
  request.world_size = 1;
  return CreateCudaCommunicatorWithId(*id, request);
}

// The producer stream is held by a long kernel queued before forward: the
// hooks launch every bucket meanwhile (the host runs ahead), the
// collectives' stream must not run them before the gradients exist, and
// FinishBackward must return without waiting for the GPU. Once the GPU is
// done, the gradients are the CPU's (one rank: its own, divided by one).
TEST(NcclReducerTest, OneGpuRunsTheWholePathInStreamOrder) {
  if (torch::cuda::device_count() == 0) {
    GTEST_SKIP() << "skipped: no CUDA device visible to this process";
  }
  auto comm = OneRankNccl();
  ASSERT_TRUE(comm.ok()) << comm.status();
  const Communicator::DeviceStream name = (*comm)->device_stream();
  ASSERT_TRUE(name.valid);
  const c10::cuda::CUDAStream comm_stream(
      c10::Stream(c10::Stream::UNSAFE,
                  c10::Device(static_cast<c10::DeviceType>(name.device_type),
                              name.device_index),
                  name.id));

  torch::manual_seed(11);
  const torch::Tensor x = torch::randn({64, 256});
  const torch::Tensor y = torch::randint(0, 10, {64});
  const std::vector<torch::Tensor> want = CpuGrads(x, y);

  torch::nn::Sequential model = MakeModel();
  model->to(torch::kCUDA);
  Reducer::Options options;
  options.communicate_alone = true;
  options.first_bucket_bytes = 64 << 10;
  options.bucket_cap_bytes = 256 << 10;
  auto reducer = Reducer::Create(comm->get(), model->parameters(), options);
  ASSERT_TRUE(reducer.ok()) << reducer.status();
  const torch::Tensor xd = x.to(torch::kCUDA), yd = y.to(torch::kCUDA);
  torch::cuda::synchronize();

  for (int step = 0; step < 2; ++step) {  // Buckets reused on the second.
    (*reducer)->ZeroGrad();
    (*reducer)->PrepareForBackward(true);
    at::cuda::sleep(int64_t{1} << 30);  // About half a second on an H200.
    torch::nn::functional::cross_entropy(model->forward(xd), yd).backward();
    const absl::Time start = absl::Now();
    ASSERT_TRUE((*reducer)->FinishBackward().ok());
    EXPECT_LT(absl::Now() - start, absl::Milliseconds(100))
        << "FinishBackward blocked the host on the GPU";
    EXPECT_FALSE(comm_stream.query())
        << "the all-reduces ran before the producer stream reached them";
    torch::cuda::synchronize();
    const std::vector<torch::Tensor> params = model->parameters();
    ASSERT_EQ(params.size(), want.size());
    for (size_t i = 0; i < params.size(); ++i) {
      EXPECT_TRUE(torch::allclose(params[i].grad().cpu(), want[i], 1e-4, 1e-5))
          << "parameter " << i << " step " << step;
    }
  }
  const Reducer::Stats stats = (*reducer)->stats();
  const int64_t buckets =
      static_cast<int64_t>((*reducer)->plan().buckets.size());
  EXPECT_GT(buckets, 1);
  EXPECT_EQ(stats.allreduce_calls, 2 * buckets);
  EXPECT_GT(stats.buckets_launched_during_backward, 0);
  EXPECT_FALSE((*comm)->InterruptedAfterUse());
}

}  // namespace
}  // namespace ringleader
