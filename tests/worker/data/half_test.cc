#include "worker/data/half.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "gtest/gtest.h"

namespace ringleader {
namespace {

uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof(b));
  return b;
}

// Pairs of float16 bits and the float32 bits numpy 1.24 gives for them:
// np.array([h], np.uint16).view(np.float16).astype(np.float32)
//   .view(np.uint32).
TEST(HalfTest, MatchesNumpyOnTheEdgeCases) {
  const struct {
    uint16_t half;
    uint32_t single;
    const char* what;
  } cases[] = {
      {0x0000, 0x00000000, "+0"},
      {0x8000, 0x80000000, "-0"},
      {0x0001, 0x33800000, "smallest subnormal, 2^-24"},
      {0x8001, 0xb3800000, "negative smallest subnormal"},
      {0x03ff, 0x387fc000, "largest subnormal"},
      {0x0400, 0x38800000, "smallest normal, 2^-14"},
      {0x3c00, 0x3f800000, "1"},
      {0x3555, 0x3eaaa000, "0.33325195"},
      {0x7bff, 0x477fe000, "largest finite, 65504"},
      {0x7c00, 0x7f800000, "+inf"},
      {0xfc00, 0xff800000, "-inf"},
      {0x7e00, 0x7fc00000, "quiet NaN"},
      {0x7c01, 0x7f802000, "signalling NaN, payload kept"},
      {0xfc01, 0xff802000, "negative signalling NaN"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(Bits(HalfToFloat(c.half)), c.single) << c.what;
  }
}

// Every one of the 65536 values against the definition of binary16.
TEST(HalfTest, EveryValueIsExact) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const int sign = (h >> 15) ? -1 : 1;
    const int exponent = (h >> 10) & 0x1f;
    const int mantissa = h & 0x3ff;
    const float f = HalfToFloat(static_cast<uint16_t>(h));
    if (exponent == 0x1f) {
      if (mantissa == 0) {
        EXPECT_TRUE(std::isinf(f)) << h;
      } else {
        EXPECT_TRUE(std::isnan(f)) << h;
      }
      EXPECT_EQ(std::signbit(f), sign < 0) << h;
      continue;
    }
    const double magnitude = exponent == 0
                                 ? std::ldexp(mantissa, -24)
                                 : std::ldexp(1024 + mantissa, exponent - 25);
    EXPECT_EQ(f, static_cast<float>(sign * magnitude)) << h;
    EXPECT_EQ(std::signbit(f), sign < 0) << h;
  }
}

}  // namespace
}  // namespace ringleader
