#include "worker/data/npy_convert.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/worker/data/npy_test_files.h"
#include "worker/data/npy_header.h"

namespace ringleader {
namespace {

using ::testing::ElementsAre;
using testing_files::RawBytes;

// The bytes at an odd address, as rows of a mapped file may be.
class Unaligned {
 public:
  explicit Unaligned(const std::string& bytes) : buf_(" " + bytes) {}
  const uint8_t* data() const {
    return reinterpret_cast<const uint8_t*>(buf_.data()) + 1;
  }

 private:
  std::string buf_;
};

template <typename T>
std::vector<float> ToFloat(NpyDtype dtype, const std::vector<T>& values) {
  Unaligned src(RawBytes(values));
  std::vector<float> out(values.size(), -1.0f);
  ConvertToFloat32(dtype, src.data(), values.size(), out.data());
  return out;
}

template <typename T>
std::vector<int64_t> ToInt64(NpyDtype dtype, const std::vector<T>& values) {
  Unaligned src(RawBytes(values));
  std::vector<int64_t> out(values.size(), -1);
  EXPECT_TRUE(ConvertToInt64(dtype, src.data(), values.size(), out.data()));
  return out;
}

TEST(NpyConvertTest, IntegersToInt64Exactly) {
  EXPECT_THAT(ToInt64<uint8_t>(NpyDtype::kUint8, {0, 7, 255}),
              ElementsAre(0, 7, 255));
  EXPECT_THAT(ToInt64<int8_t>(NpyDtype::kInt8, {-128, -1, 127}),
              ElementsAre(-128, -1, 127));
  EXPECT_THAT(ToInt64<uint16_t>(NpyDtype::kUint16, {0, 65535}),
              ElementsAre(0, 65535));
  EXPECT_THAT(ToInt64<int16_t>(NpyDtype::kInt16, {-32768, 32767}),
              ElementsAre(-32768, 32767));
  EXPECT_THAT(ToInt64<uint32_t>(NpyDtype::kUint32, {0, 4294967295u}),
              ElementsAre(0, 4294967295LL));
  EXPECT_THAT(ToInt64<int32_t>(NpyDtype::kInt32, {-2147483647 - 1, -100, 5}),
              ElementsAre(-2147483648LL, -100, 5));
  const int64_t big = std::numeric_limits<int64_t>::max();
  EXPECT_THAT(ToInt64<int64_t>(NpyDtype::kInt64, {big, -big - 1, 3}),
              ElementsAre(big, -big - 1, 3));
}

TEST(NpyConvertTest, FloatsAreNotIds) {
  const std::string bytes = RawBytes<float>({1.5f});
  int64_t out = 42;
  EXPECT_FALSE(ConvertToInt64(NpyDtype::kFloat32,
                              reinterpret_cast<const uint8_t*>(bytes.data()), 1,
                              &out));
  EXPECT_EQ(out, 42);
}

TEST(NpyConvertTest, EverythingToFloat32) {
  EXPECT_THAT(ToFloat<uint8_t>(NpyDtype::kUint8, {0, 255}),
              ElementsAre(0.0f, 255.0f));
  EXPECT_THAT(ToFloat<int8_t>(NpyDtype::kInt8, {-128, 3}),
              ElementsAre(-128.0f, 3.0f));
  EXPECT_THAT(ToFloat<uint16_t>(NpyDtype::kUint16, {65535}),
              ElementsAre(65535.0f));
  EXPECT_THAT(ToFloat<int16_t>(NpyDtype::kInt16, {-300}), ElementsAre(-300.0f));
  EXPECT_THAT(ToFloat<uint32_t>(NpyDtype::kUint32, {16777217u}),
              ElementsAre(16777216.0f));  // Nearest float.
  EXPECT_THAT(ToFloat<int32_t>(NpyDtype::kInt32, {-7}), ElementsAre(-7.0f));
  EXPECT_THAT(ToFloat<int64_t>(NpyDtype::kInt64, {int64_t{1} << 40}),
              ElementsAre(1099511627776.0f));
  // float16: 1, -2, 65504, 2^-24, +inf.
  EXPECT_THAT(ToFloat<uint16_t>(NpyDtype::kFloat16,
                                {0x3c00, 0xc000, 0x7bff, 0x0001, 0x7c00}),
              ElementsAre(1.0f, -2.0f, 65504.0f, std::ldexp(1.0f, -24),
                          std::numeric_limits<float>::infinity()));
  EXPECT_THAT(ToFloat<float>(NpyDtype::kFloat32, {1.25f, -0.0f, 3e38f}),
              ElementsAre(1.25f, -0.0f, 3e38f));
  EXPECT_THAT(ToFloat<double>(NpyDtype::kFloat64, {0.1, -2.5}),
              ElementsAre(0.1f, -2.5f));
  const std::vector<float> nan =
      ToFloat<uint16_t>(NpyDtype::kFloat16, {0x7e00});
  EXPECT_TRUE(std::isnan(nan[0]));
}

TEST(NpyConvertTest, NothingIsWrittenForZeroElements) {
  float f = 9.0f;
  int64_t i = 9;
  ConvertToFloat32(NpyDtype::kFloat32, nullptr, 0, &f);
  EXPECT_TRUE(ConvertToInt64(NpyDtype::kInt64, nullptr, 0, &i));
  EXPECT_EQ(f, 9.0f);
  EXPECT_EQ(i, 9);
}

TEST(NpyConvertTest, IntegerRange) {
  const auto range = [](NpyDtype dtype, const std::string& bytes, size_t n) {
    Unaligned src(bytes);
    const IntRange r = IntegerRange(dtype, src.data(), n);
    return std::vector<int64_t>{r.min, r.max};
  };
  EXPECT_THAT(range(NpyDtype::kUint8, RawBytes<uint8_t>({3, 9, 0, 4}), 4),
              ElementsAre(0, 9));
  EXPECT_THAT(range(NpyDtype::kInt64, RawBytes<int64_t>({-100, 5, 2, -100}), 4),
              ElementsAre(-100, 5));
  EXPECT_THAT(range(NpyDtype::kInt32, RawBytes<int32_t>({7}), 1),
              ElementsAre(7, 7));
  EXPECT_THAT(range(NpyDtype::kUint32, RawBytes<uint32_t>({4294967295u}), 1),
              ElementsAre(4294967295LL, 4294967295LL));
  EXPECT_THAT(range(NpyDtype::kFloat32, RawBytes<float>({2.0f}), 1),
              ElementsAre(0, 0));
  EXPECT_THAT(range(NpyDtype::kInt8, "", 0), ElementsAre(0, 0));
}

}  // namespace
}  // namespace ringleader
