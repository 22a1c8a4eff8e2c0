// All-reduce of 16-bit floats (compressed gradient buckets) on the CPU
// transports, ranks as threads: known values that round (ties to even),
// overflow, large sums over many ranks, and buffers longer than a
// shared-memory chunk. With 2 ranks both transports give round(a + b); with
// more, shared memory rounds the float32 sum once and Gloo's ring rounds
// each addition (the 3-rank values here give the same either way).
#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/worker/create_all.h"
#include "tests/worker/memory_kv_client.h"
#include "worker/comm/float16.h"
#include "worker/comm/gloo_communicator.h"
#include "worker/comm/shm_communicator.h"

namespace ringleader {
namespace {

// Bits per rank in; the bits every rank must hold after the all-reduce.
struct Case {
  DataType type;
  std::vector<std::vector<uint16_t>> in;
  std::vector<uint16_t> want;
};

template <typename C>
typename C::Options Opts() {
  typename C::Options o;
  o.timeout = absl::Seconds(30);
  return o;
}
template <>
ShmCommunicator::Options Opts<ShmCommunicator>() {
  ShmCommunicator::Options o;
  o.timeout = absl::Seconds(30);
  o.slot_bytes = 4096;  // 2048 16-bit elements per chunk.
  return o;
}

template <typename C>
void RunCase(const Case& c) {
  const int world = static_cast<int>(c.in.size());
  MemoryKvClient kv;
  std::vector<std::unique_ptr<C>> comms =
      testing::CreateAll<C>(&kv, world, Opts<C>());
  ASSERT_EQ(comms.size(), c.in.size());
  std::vector<std::vector<uint16_t>> data = c.in;
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      ASSERT_NE(comms[r], nullptr);
      EXPECT_TRUE(
          comms[r]->AllReduceSum(data[r].data(), data[r].size(), c.type).ok());
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < world; ++r) EXPECT_EQ(data[r], c.want) << "rank " << r;
}

std::vector<uint16_t> Fp16(std::vector<float> v) {
  std::vector<uint16_t> out;
  for (float f : v) out.push_back(FloatToFp16Bits(f));
  return out;
}
std::vector<uint16_t> Bf16(std::vector<float> v) {
  std::vector<uint16_t> out;
  for (float f : v) out.push_back(FloatToBf16Bits(f));
  return out;
}

// Pairs whose sums round: ties to even both ways, overflow past the largest
// finite value, fp16's subnormals, cancellation to +0.
Case TwoRankFp16() {
  return {DataType::kFloat16,
          {Fp16({1, 1, 2048, 65504, 65504, -1, 0x1p-24f, 1000, 0.5f}),
           Fp16({0x1p-11f, 3 * 0x1p-11f, 3, 16, 15, 1, 0x1p-24f, 0.1f, 0.25f})},
          {0x3c00, 0x3c02, 0x6802, 0x7c00, 0x7bff, 0x0000, 0x0002, 0x63d0,
           FloatToFp16Bits(0.75f)}};
}

Case TwoRankBf16() {
  return {DataType::kBFloat16,
          {Bf16({256, 256, 1, Bf16BitsToFloat(0x7f7f), -2, 0.5f}),
           Bf16({1, 3, 0x1p-8f, Bf16BitsToFloat(0x7f7f), 2, 0.25f})},
          {0x4380, 0x4382, 0x3f80, 0x7f80, 0x0000, FloatToBf16Bits(0.75f)}};
}

// x + x + x for x = 1 + 2^-10: 3 + 3 x 2^-10 ties up to 3 + 2^-8, the same
// whether rounded once or after each addition (x + x is exact).
Case ThreeRanksEqual(DataType type) {
  const float x = type == DataType::kFloat16 ? 1 + 0x1p-10f : 1 + 0x1p-7f;
  auto make = type == DataType::kFloat16 ? Fp16 : Bf16;
  const float want = type == DataType::kFloat16 ? 3 + 0x1p-8f : 3 + 0x1p-5f;
  return {type, {make({x, 2}), make({x, 3}), make({x, 4})}, make({want, 9})};
}

// A buffer over two and a half shared-memory chunks (slices cut at odd
// places), every element a different sum that rounds.
Case LongBuffer(DataType type, int world) {
  constexpr size_t kN = 5003;
  auto round = type == DataType::kFloat16 ? FloatToFp16Bits : FloatToBf16Bits;
  auto widen = type == DataType::kFloat16 ? Fp16BitsToFloat : Bf16BitsToFloat;
  Case c{type, std::vector<std::vector<uint16_t>>(world), {}};
  for (size_t i = 0; i < kN; ++i) {
    float sum = 0;
    for (int r = 0; r < world; ++r) {
      const uint16_t v = round(1.0f + 0.37f * static_cast<float>(i % 97) +
                               0.001f * static_cast<float>(r));
      c.in[r].push_back(v);
      sum += widen(v);  // Exact: small integers and few bits.
    }
    c.want.push_back(round(sum));
  }
  return c;
}

TEST(Float16AllReduceTest, ShmTwoRanks) {
  RunCase<ShmCommunicator>(TwoRankFp16());
  RunCase<ShmCommunicator>(TwoRankBf16());
  RunCase<ShmCommunicator>(LongBuffer(DataType::kFloat16, 2));
  RunCase<ShmCommunicator>(LongBuffer(DataType::kBFloat16, 2));
}

TEST(Float16AllReduceTest, GlooTwoRanks) {
  RunCase<GlooCommunicator>(TwoRankFp16());
  RunCase<GlooCommunicator>(TwoRankBf16());
  RunCase<GlooCommunicator>(LongBuffer(DataType::kFloat16, 2));
  RunCase<GlooCommunicator>(LongBuffer(DataType::kBFloat16, 2));
}

TEST(Float16AllReduceTest, ThreeRanksBothTransports) {
  for (DataType t : {DataType::kFloat16, DataType::kBFloat16}) {
    RunCase<ShmCommunicator>(ThreeRanksEqual(t));
    RunCase<GlooCommunicator>(ThreeRanksEqual(t));
  }
}

// Eight ranks on shared memory: the float32 sum is rounded once, so bf16
// 256 + 7 x 1 is 264 (263 ties to even; adding 1 at a time in bf16 would
// stay at 256), and fp16 sums past 65504 overflow to infinity exactly as
// 16-bit arithmetic does.
TEST(Float16AllReduceTest, ShmEightRanksLargeSums) {
  Case bf{DataType::kBFloat16, {}, Bf16({264, 8})};
  Case fp{DataType::kFloat16, {}, {0x7bff, 0x7c00, FloatToFp16Bits(-8)}};
  for (int r = 0; r < 8; ++r) {
    bf.in.push_back(Bf16({r == 0 ? 256.0f : 1.0f, 1}));
    fp.in.push_back(Fp16({8188, 8192, -1}));
  }
  RunCase<ShmCommunicator>(bf);
  RunCase<ShmCommunicator>(fp);
  RunCase<ShmCommunicator>(LongBuffer(DataType::kFloat16, 8));
}

}  // namespace
}  // namespace ringleader
