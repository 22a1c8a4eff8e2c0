// A compressed bucket end to end on each CPU transport, ranks as threads:
// CompressBucket (cast to fp16/bf16, divide by the world size), the
// communicator's 16-bit all-reduce, DecompressBucket (back to float32),
// against values worked out by hand (and checked against PyTorch 1.13's
// fp16_compress_hook arithmetic in Python): the casts' rounding, ties in the
// sum, fp16's overflow and underflow, and sums over 8 ranks. The NCCL
// transport's 16-bit all-reduce is in nccl_communicator_test (GPU only).
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/worker/create_all.h"
#include "tests/worker/memory_kv_client.h"
#include "worker/comm/gloo_communicator.h"
#include "worker/comm/shm_communicator.h"
#include "worker/ddp/compression.h"

namespace ringleader {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Float32 gradients per rank in; the float32 gradient every rank ends with.
struct Case {
  BucketCompression compression;
  std::vector<std::vector<float>> in;
  std::vector<float> want;
};

// Runs the case's bucket through compression and `C`'s all-reduce.
template <typename C>
void RunCase(const Case& c) {
  const int world = static_cast<int>(c.in.size());
  MemoryKvClient kv;
  typename C::Options options;
  options.timeout = absl::Seconds(30);
  std::vector<std::unique_ptr<C>> comms =
      testing::CreateAll<C>(&kv, world, options);
  std::vector<std::vector<float>> out(world);
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      torch::Tensor bucket = torch::tensor(c.in[r], torch::kFloat);
      torch::Tensor wire = NewWireBuffer(c.compression, bucket.numel(), bucket);
      CompressBucket(bucket, world, wire);
      ASSERT_NE(comms[r], nullptr);
      EXPECT_TRUE(comms[r]
                      ->AllReduceSum(wire.data_ptr(), wire.numel(),
                                     WireType(c.compression))
                      .ok());
      DecompressBucket(wire, bucket);
      out[r].assign(bucket.data_ptr<float>(),
                    bucket.data_ptr<float>() + bucket.numel());
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < world; ++r) EXPECT_EQ(out[r], c.want) << "rank " << r;
}

// Two ranks: fp16's 0.1 (0.0999755859375); 60000 + 60000 stays finite since
// each is halved before the sum; 70000 is already infinite as fp16; 2^-24
// halved underflows to 0 (a tie, to even); 1.5 x 2^-24 ties up to 2^-23;
// 1 + 2^-11 ties down to 1 in the sum.
Case Fp16Pairs() {
  return {BucketCompression::kFp16,
          {{0.1f, 60000, 70000, 1 + 0x1p-10f, 0x1p-24f, 3 * 0x1p-24f, 2},
           {0.1f, 60000, 0, 0, 0, 0x1p-24f, 0x1p-10f}},
          {0.0999755859375f, 60000, kInf, 0.50048828125f, 0, 0x1p-23f, 1}};
}

// Two ranks: 0.5 + 2^-9 ties to 0.5; bf16's 0.1 (0.10009765625); 3e38 +
// 3e38 would overflow even float32, but each is halved first.
Case Bf16Pairs() {
  return {BucketCompression::kBf16,
          {{1, 0.1f, 3e38f, 1}, {0x1p-8f, 0.1f, 3e38f, 1}},
          {0.5f, 0.10009765625f, 3.00405527047391e38f, 1}};
}

// Three ranks with equal values (x + x is exact, so Gloo's ring and shared
// memory round the same): 1/3 rounds down in both types and the sum of
// three rounds back up to 1; 0.1/3 in bf16 lands on 0.1005859375.
Case ThreeEqual(BucketCompression c) {
  const bool fp16 = c == BucketCompression::kFp16;
  return {c,
          std::vector<std::vector<float>>(3, {1, 0.1f, 1000, 3}),
          {1, fp16 ? 0.0999755859375f : 0.1005859375f, 1000, 3}};
}

TEST(CompressedAllReduceTest, ShmKnownValues) {
  RunCase<ShmCommunicator>(Fp16Pairs());
  RunCase<ShmCommunicator>(Bf16Pairs());
  RunCase<ShmCommunicator>(ThreeEqual(BucketCompression::kFp16));
  RunCase<ShmCommunicator>(ThreeEqual(BucketCompression::kBf16));
}

TEST(CompressedAllReduceTest, GlooKnownValues) {
  RunCase<GlooCommunicator>(Fp16Pairs());
  RunCase<GlooCommunicator>(Bf16Pairs());
  RunCase<GlooCommunicator>(ThreeEqual(BucketCompression::kFp16));
  RunCase<GlooCommunicator>(ThreeEqual(BucketCompression::kBf16));
}

// Eight ranks: 8 x 60000 fits fp16 only because each is divided by 8 first
// (7500 each); bf16 2048/8 + 7 x 8/8 = 263 rounds once to 264 (the mean is
// 263; adding 1 at a time in bf16 would stop at 256).
TEST(CompressedAllReduceTest, ShmEightRanksLargeSums) {
  Case fp{BucketCompression::kFp16, {}, {60000, 1}};
  Case bf{BucketCompression::kBf16, {}, {264, 1}};
  for (int r = 0; r < 8; ++r) {
    fp.in.push_back({60000, 1});
    bf.in.push_back({r == 0 ? 2048.0f : 8.0f, 1});
  }
  RunCase<ShmCommunicator>(fp);
  RunCase<ShmCommunicator>(bf);
}

TEST(CompressedAllReduceTest, WireTypesAndBuffers) {
  EXPECT_EQ(WireType(BucketCompression::kNone), DataType::kFloat32);
  EXPECT_EQ(WireType(BucketCompression::kFp16), DataType::kFloat16);
  EXPECT_EQ(WireType(BucketCompression::kBf16), DataType::kBFloat16);
  const torch::Tensor like = torch::zeros({4});
  EXPECT_FALSE(NewWireBuffer(BucketCompression::kNone, 4, like).defined());
  EXPECT_EQ(NewWireBuffer(BucketCompression::kFp16, 4, like).scalar_type(),
            at::kHalf);
  EXPECT_EQ(NewWireBuffer(BucketCompression::kBf16, 5, like).numel(), 5);
}

}  // namespace
}  // namespace ringleader
