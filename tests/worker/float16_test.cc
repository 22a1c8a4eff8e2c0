// The 16-bit float conversions and sums the CPU communicators use for
// compressed gradients: known values (ties to even, overflow, subnormals,
// NaN), every 16-bit pattern round-tripped, LibTorch's own conversions on a
// sweep of float32 values, and what rounding once differs from rounding
// every addition.
#include "worker/comm/float16.h"

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "worker/comm/float16_sum.h"

namespace ringleader {
namespace {

float FromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof(f));
  return f;
}

TEST(Float16Test, Fp16KnownValues) {
  EXPECT_EQ(FloatToFp16Bits(1.0f), 0x3c00);
  EXPECT_EQ(FloatToFp16Bits(-2.0f), 0xc000);
  EXPECT_EQ(FloatToFp16Bits(65504.0f), 0x7bff);  // Largest finite.
  // Halfway between 65504 and 65536: ties to even, which overflows.
  EXPECT_EQ(FloatToFp16Bits(65520.0f), 0x7c00);
  EXPECT_EQ(FloatToFp16Bits(65519.0f), 0x7bff);
  EXPECT_EQ(FloatToFp16Bits(1e10f), 0x7c00);
  EXPECT_EQ(FloatToFp16Bits(-1e10f), 0xfc00);
  // Ties at 1: 1 + 2^-11 is halfway to 1 + 2^-10 (odd): down to 1;
  // 1 + 3 x 2^-11 is halfway between odd and even: up to 1 + 2^-9.
  EXPECT_EQ(FloatToFp16Bits(1.0f + 0x1p-11f), 0x3c00);
  EXPECT_EQ(FloatToFp16Bits(1.0f + 3 * 0x1p-11f), 0x3c02);
  EXPECT_EQ(FloatToFp16Bits(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);
  // Subnormals: 2^-24 is the smallest; 2^-25 ties down to 0, 3 x 2^-25 up.
  EXPECT_EQ(FloatToFp16Bits(0x1p-24f), 0x0001);
  EXPECT_EQ(FloatToFp16Bits(0x1p-25f), 0x0000);
  EXPECT_EQ(FloatToFp16Bits(3 * 0x1p-25f), 0x0002);
  EXPECT_EQ(FloatToFp16Bits(-0.0f), 0x8000);
  EXPECT_EQ(FloatToFp16Bits(0.1f), 0x2e66);
  EXPECT_TRUE(std::isnan(Fp16BitsToFloat(
      FloatToFp16Bits(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(Fp16BitsToFloat(0x0001), 0x1p-24f);
  EXPECT_EQ(Fp16BitsToFloat(0x7bff), 65504.0f);
  EXPECT_TRUE(std::isinf(Fp16BitsToFloat(0x7c00)));
}

TEST(Float16Test, Bf16KnownValues) {
  EXPECT_EQ(FloatToBf16Bits(1.0f), 0x3f80);
  EXPECT_EQ(FloatToBf16Bits(256.0f), 0x4380);
  // Ties: 257 halfway between 256 (even) and 258; 259 between 258 (odd)
  // and 260 (even).
  EXPECT_EQ(FloatToBf16Bits(257.0f), 0x4380);
  EXPECT_EQ(FloatToBf16Bits(259.0f), 0x4382);
  EXPECT_EQ(FloatToBf16Bits(263.0f), 0x4384);
  EXPECT_EQ(FloatToBf16Bits(1.0f + 0x1p-8f), 0x3f80);
  EXPECT_EQ(FloatToBf16Bits(1.0f + 3 * 0x1p-8f), 0x3f82);
  // float32's largest finite rounds up past bf16's largest: infinity.
  EXPECT_EQ(FloatToBf16Bits(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(FloatToBf16Bits(FromBits(0x7f7f0000)), 0x7f7f);
  EXPECT_EQ(FloatToBf16Bits(-std::numeric_limits<float>::infinity()), 0xff80);
  EXPECT_EQ(FloatToBf16Bits(FromBits(0x00010000)), 0x0001);  // Subnormal.
  EXPECT_EQ(FloatToBf16Bits(std::numeric_limits<float>::quiet_NaN()), 0x7fc0);
  EXPECT_EQ(FloatToBf16Bits(FromBits(0x7f800001)), 0x7fc0);  // Never inf.
  EXPECT_EQ(Bf16BitsToFloat(0x4382), 260.0f);
}

// Widening is exact, so every 16-bit value comes back as itself (NaNs as
// some NaN).
TEST(Float16Test, EveryPatternRoundTrips) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const uint16_t bits = static_cast<uint16_t>(h);
    const float f16 = Fp16BitsToFloat(bits);
    if (std::isnan(f16)) {
      EXPECT_TRUE(std::isnan(Fp16BitsToFloat(FloatToFp16Bits(f16)))) << h;
    } else {
      ASSERT_EQ(FloatToFp16Bits(f16), bits) << h;
    }
    const float b16 = Bf16BitsToFloat(bits);
    if (std::isnan(b16)) {
      EXPECT_EQ(FloatToBf16Bits(b16), 0x7fc0) << h;
    } else {
      ASSERT_EQ(FloatToBf16Bits(b16), bits) << h;
    }
  }
}

// What the reducer's casts (LibTorch) and the reference trainings produce,
// bit for bit, over float32 values of every magnitude and around the ties.
TEST(Float16Test, MatchesLibTorchOnASweep) {
  std::mt19937 gen(7);
  std::vector<float> values;
  for (int i = 0; i < 200000; ++i) {
    uint32_t bits = gen();
    if ((bits & 0x7f800000u) == 0x7f800000u) continue;  // inf/NaN below.
    values.push_back(FromBits(bits));
  }
  for (uint32_t h = 0; h < 0x7c00; h += 3) {
    // fp16 values and the midpoints just above them.
    const float f = Fp16BitsToFloat(static_cast<uint16_t>(h));
    values.push_back(f);
    values.push_back(std::nextafter(f, 1e9f));
    values.push_back((f + Fp16BitsToFloat(static_cast<uint16_t>(h + 1))) *
                     0.5f);
  }
  values.push_back(std::numeric_limits<float>::infinity());
  values.push_back(-std::numeric_limits<float>::infinity());
  for (float v : values) {
    ASSERT_EQ(FloatToFp16Bits(v), c10::Half(v).x) << v;
    ASSERT_EQ(FloatToBf16Bits(v), c10::BFloat16(v).x) << v;
    ASSERT_EQ(Fp16BitsToFloat(FloatToFp16Bits(v)),
              static_cast<float>(c10::Half(v)))
        << v;
  }
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

TEST(Float16SumTest, AddRoundsEachSumOnceToNearestEven) {
  std::vector<uint16_t> a = Fp16({1, 1, 2048, 65504, 65504, -1, 0x1p-24f});
  const std::vector<uint16_t> b =
      Fp16({0x1p-11f, 3 * 0x1p-11f, 3, 16, 15, 1, 0x1p-24f});
  AddFloat16(Float16Format::kFp16, a.data(), a.data(), b.data(), a.size());
  EXPECT_EQ(a, (std::vector<uint16_t>{0x3c00, 0x3c02, 0x6802, 0x7c00, 0x7bff,
                                      0x0000, 0x0002}));
  std::vector<uint16_t> c = Bf16({256, 256, 1, FromBits(0x7f7f0000), -2});
  const std::vector<uint16_t> d =
      Bf16({1, 3, 0x1p-8f, FromBits(0x7f7f0000), 2});
  std::vector<uint16_t> out(c.size());
  AddFloat16(Float16Format::kBf16, out.data(), c.data(), d.data(), c.size());
  EXPECT_EQ(out, (std::vector<uint16_t>{0x4380, 0x4382, 0x3f80, 0x7f80, 0}));
}

// Summing in float32 and rounding once keeps what a chain of 16-bit
// additions loses: 256 + 1 + 1 + ... stalls at 256 in bf16 one add at a
// time, and 1 + 2^-11 + 2^-11 + ... at 1 in fp16.
TEST(Float16SumTest, RoundOnceAgainstRoundingEveryAddition) {
  constexpr int kRanks = 8;
  constexpr size_t kN = 1000;  // Across the loop's 512-element blocks.
  std::vector<std::vector<uint16_t>> bf(kRanks), fp(kRanks);
  for (int r = 0; r < kRanks; ++r) {
    bf[r].assign(kN, FloatToBf16Bits(r == 0 ? 256.0f : 1.0f));
    fp[r].assign(kN, FloatToFp16Bits(r == 0 ? 1.0f : 0x1p-11f));
  }
  std::vector<const uint16_t*> bf_in, fp_in;
  for (int r = 0; r < kRanks; ++r) {
    bf_in.push_back(bf[r].data());
    fp_in.push_back(fp[r].data());
  }
  std::vector<uint16_t> once(kN), chain = bf[0];
  SumFloat16RoundOnce(Float16Format::kBf16, once.data(), bf_in.data(), kRanks,
                      kN);
  for (int r = 1; r < kRanks; ++r) {
    AddFloat16(Float16Format::kBf16, chain.data(), chain.data(), bf[r].data(),
               kN);
  }
  // 263 ties to the even 264; the chain never leaves 256.
  EXPECT_EQ(once, std::vector<uint16_t>(kN, 0x4384));
  EXPECT_EQ(chain, std::vector<uint16_t>(kN, 0x4380));

  SumFloat16RoundOnce(Float16Format::kFp16, once.data(), fp_in.data(), kRanks,
                      kN);
  chain = fp[0];
  for (int r = 1; r < kRanks; ++r) {
    AddFloat16(Float16Format::kFp16, chain.data(), chain.data(), fp[r].data(),
               kN);
  }
  // 1 + 7 x 2^-11 rounds to 1 + 2^-8 (ties to even: 1 + 4 x 2^-10).
  EXPECT_EQ(once, std::vector<uint16_t>(kN, 0x3c04));
  EXPECT_EQ(chain, std::vector<uint16_t>(kN, 0x3c00));
}

// The output may be one of the inputs (the shared-memory reducer sums into
// its own slot); large sums overflow fp16 as its arithmetic does.
TEST(Float16SumTest, RoundOnceInPlaceAndOverflow) {
  std::vector<std::vector<uint16_t>> in = {Fp16({8188, 8192, 1}),
                                           Fp16({8188, 8192, 2})};
  for (int r = 0; r < 6; ++r) in.push_back(in[0]);
  std::vector<const uint16_t*> ptrs;
  for (const auto& v : in) ptrs.push_back(v.data());
  SumFloat16RoundOnce(Float16Format::kFp16, in[1].data(), ptrs.data(),
                      static_cast<int>(in.size()), 3);
  EXPECT_EQ(in[1], (std::vector<uint16_t>{0x7bff, 0x7c00, FloatToFp16Bits(9)}));
}

// The loops (vectorized, or the CPU's F16C conversions for fp16) give what
// the scalar conversions give, element by element, at every length around
// the vector width, for random non-NaN values including infinities,
// subnormals and sums that overflow; either path.
void ExpectLoopsMatchTheScalarConversions() {
  std::mt19937 gen(11);
  for (Float16Format f : {Float16Format::kFp16, Float16Format::kBf16}) {
    const bool fp16 = f == Float16Format::kFp16;
    auto widen = fp16 ? Fp16BitsToFloat : Bf16BitsToFloat;
    auto round = fp16 ? FloatToFp16Bits : FloatToBf16Bits;
    auto random_value = [&] {
      uint16_t v;
      do {
        v = static_cast<uint16_t>(gen());
      } while (std::isnan(widen(v)));
      return v;
    };
    for (size_t n : {0, 1, 7, 8, 9, 15, 16, 17, 31, 513, 1000}) {
      std::vector<std::vector<uint16_t>> in(3, std::vector<uint16_t>(n));
      for (auto& v : in) {
        for (auto& x : v) x = random_value();
      }
      std::vector<uint16_t> add(n), once(n);
      AddFloat16(f, add.data(), in[0].data(), in[1].data(), n);
      const uint16_t* ptrs[] = {in[0].data(), in[1].data(), in[2].data()};
      SumFloat16RoundOnce(f, once.data(), ptrs, 3, n);
      for (size_t i = 0; i < n; ++i) {
        const float a = widen(in[0][i]), b = widen(in[1][i]);
        const float sum3 = a + b + widen(in[2][i]);
        if (!std::isnan(a + b))
          ASSERT_EQ(add[i], round(a + b)) << n << " " << i;
        if (!std::isnan(sum3)) ASSERT_EQ(once[i], round(sum3)) << n << " " << i;
      }
    }
  }
}

TEST(Float16SumTest, LoopsMatchTheScalarConversions) {
  ExpectLoopsMatchTheScalarConversions();
}

TEST(Float16SumTest, PortableLoopsMatchTheScalarConversions) {
  UsePortableFloat16LoopsForTesting(true);
  ExpectLoopsMatchTheScalarConversions();
  UsePortableFloat16LoopsForTesting(false);
}

}  // namespace
}  // namespace ringleader
