#include "worker/model/tensor_copy.h"

#include <torch/torch.h>

#include "gtest/gtest.h"

namespace ringleader {
namespace {

TEST(TensorCopyTest, ContiguousCpuTensorsOfEveryKind) {
  const at::Tensor f = torch::arange(6, torch::kFloat).reshape({2, 3});
  at::Tensor f_to = torch::zeros({2, 3});
  CopyTensor(f, f_to);
  EXPECT_TRUE(torch::equal(f_to, f));
  const at::Tensor count = torch::tensor({int64_t{1} << 40}, torch::kLong);
  at::Tensor count_to = torch::zeros({1}, torch::kLong);
  CopyTensor(count, count_to);
  EXPECT_EQ(count_to.item<int64_t>(), int64_t{1} << 40);
  at::Tensor empty_to = torch::empty({0});
  CopyTensor(torch::empty({0}), empty_to);
  EXPECT_EQ(empty_to.numel(), 0);
  // A byte view of part of a flat buffer, as BufferSync packs them.
  at::Tensor flat = torch::zeros({12}, torch::kByte);
  at::Tensor slice = flat.narrow(0, 4, 8);
  CopyTensor(count.view(at::kByte), slice);
  EXPECT_TRUE(torch::equal(slice, count.view(at::kByte)));
  EXPECT_EQ(flat.narrow(0, 0, 4).sum().item<int64_t>(), 0);
}

TEST(TensorCopyTest, StridedOrConvertingCopiesTakeCopy) {
  const at::Tensor base = torch::arange(16, torch::kFloat).reshape({4, 4});
  at::Tensor to = torch::zeros({4, 4});
  CopyTensor(base.t(), to);
  EXPECT_TRUE(torch::equal(to, base.t()));
  at::Tensor strided_to = torch::zeros({4, 4}).t();
  CopyTensor(base, strided_to);
  EXPECT_TRUE(torch::equal(strided_to, base));
  at::Tensor as_double = torch::zeros({4, 4}, torch::kDouble);
  CopyTensor(base, as_double);
  EXPECT_TRUE(torch::equal(as_double, base.to(torch::kDouble)));
}

}  // namespace
}  // namespace ringleader
