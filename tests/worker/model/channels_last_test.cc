// ChannelsLastOnCpu: the image layout the CPU's convolutions run fastest.
#include "worker/model/channels_last.h"

#include <torch/torch.h>

#include "gtest/gtest.h"

namespace ringleader {
namespace {

TEST(ChannelsLastTest, IsAViewForOneChannelAndACopyForMore) {
  const at::Tensor batch = torch::rand({6, 1, 28, 28});
  for (const at::Tensor& images : {batch, batch.narrow(0, 2, 3)}) {
    const at::Tensor nhwc = ChannelsLastOnCpu(images);
    EXPECT_EQ(nhwc.suggest_memory_format(), at::MemoryFormat::ChannelsLast);
    EXPECT_EQ(nhwc.data_ptr(), images.data_ptr());  // No copy.
    EXPECT_TRUE(torch::equal(nhwc, images));
  }
  const at::Tensor rgb = torch::randn({2, 3, 4, 4});
  const at::Tensor nhwc = ChannelsLastOnCpu(rgb);
  EXPECT_TRUE(nhwc.is_contiguous(at::MemoryFormat::ChannelsLast));
  EXPECT_TRUE(torch::equal(nhwc, rgb));
  const at::Tensor flat = torch::randn({2, 784});
  EXPECT_TRUE(ChannelsLastOnCpu(flat).is_same(flat));
  // Integer images (token grids, masks) and undefined tensors pass as they
  // are.
  const at::Tensor ids = torch::zeros({2, 3, 4, 4}, torch::kLong);
  EXPECT_TRUE(ChannelsLastOnCpu(ids).is_same(ids));
  EXPECT_FALSE(ChannelsLastOnCpu(at::Tensor()).defined());
}

}  // namespace
}  // namespace ringleader
