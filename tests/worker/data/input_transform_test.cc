#include "worker/data/input_transform.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/worker/data/npy_test_files.h"
#include "worker/data/npy_header.h"

namespace ringleader {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using testing_files::RawBytes;

constexpr float kTol = 1e-6f;

std::vector<float> Apply(const InputTransformSpec& spec, NpyDtype dtype,
                         const std::vector<int64_t>& dims,
                         const std::string& bytes) {
  absl::StatusOr<SampleTransform> t =
      SampleTransform::Create(spec, dtype, dims, "input 0 (/x.npy)");
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return {};
  std::vector<float> out(bytes.size() / NpyDtypeSize(dtype), -99.0f);
  t->Apply(reinterpret_cast<const uint8_t*>(bytes.data()), out.data());
  return out;
}

absl::Status CreateError(const InputTransformSpec& spec,
                         const std::vector<int64_t>& dims) {
  return SampleTransform::Create(spec, NpyDtype::kUint8, dims,
                                 "input 1 (/data/img.npy)")
      .status();
}

TEST(InputTransformTest, ActiveWhenAnythingIsSet) {
  EXPECT_FALSE(InputTransformSpec{}.active());
  EXPECT_TRUE((InputTransformSpec{1.0 / 255, {}, {}}.active()));
  EXPECT_TRUE((InputTransformSpec{0, {0.5}, {0.5}}.active()));
}

// ToTensor + Normalize on 8-bit pixels, through the lookup table:
// (x / 255 - mean[c]) / std[c], per channel.
TEST(InputTransformTest, Uint8PixelsPerChannel) {
  const InputTransformSpec spec{1.0 / 255, {0.5, 0.25}, {0.5, 0.25}};
  // Two channels of two pixels: 0, 255 | 51, 102.
  EXPECT_THAT(Apply(spec, NpyDtype::kUint8, {2, 2},
                    RawBytes<uint8_t>({0, 255, 51, 102})),
              ElementsAre(FloatNear(-1.0f, kTol), FloatNear(1.0f, kTol),
                          FloatNear(-0.2f, kTol), FloatNear(0.6f, kTol)));
}

TEST(InputTransformTest, Int8UsesSignedValues) {
  const InputTransformSpec spec{0.5, {}, {}};
  EXPECT_THAT(
      Apply(spec, NpyDtype::kInt8, {4}, RawBytes<int8_t>({-128, -1, 0, 127})),
      ElementsAre(-64.0f, -0.5f, 0.0f, 63.5f));
}

TEST(InputTransformTest, Int32ChannelsOfOneElement) {
  // (x * 2 - mean[c]) / std[c].
  const InputTransformSpec spec{2, {1, 2, 3}, {2, 4, 8}};
  EXPECT_THAT(
      Apply(spec, NpyDtype::kInt32, {3}, RawBytes<int32_t>({10, -4, 7})),
      ElementsAre(FloatNear(9.5f, kTol), FloatNear(-2.5f, kTol),
                  FloatNear(1.375f, kTol)));
}

TEST(InputTransformTest, Uint16ChannelsOfSeveralElements) {
  const InputTransformSpec spec{0.001, {1, 3}, {1, 2}};
  EXPECT_THAT(Apply(spec, NpyDtype::kUint16, {2, 1, 2},
                    RawBytes<uint16_t>({1000, 2000, 3000, 4000})),
              ElementsAre(FloatNear(0.0f, kTol), FloatNear(1.0f, kTol),
                          FloatNear(0.0f, kTol), FloatNear(0.5f, kTol)));
}

TEST(InputTransformTest, FloatInputsScaleZeroMeansOne) {
  const InputTransformSpec spec{0, {0.5}, {0.25}};
  EXPECT_THAT(Apply(spec, NpyDtype::kFloat32, {1, 3},
                    RawBytes<float>({0.5f, 1.5f, -0.25f})),
              ElementsAre(FloatNear(0.0f, kTol), FloatNear(4.0f, kTol),
                          FloatNear(-3.0f, kTol)));
  EXPECT_THAT(Apply(InputTransformSpec{10, {}, {}}, NpyDtype::kFloat16, {2},
                    RawBytes<uint16_t>({0x3c00, 0x3800})),
              ElementsAre(10.0f, 5.0f));
  EXPECT_THAT(Apply(InputTransformSpec{-1, {}, {}}, NpyDtype::kFloat64, {2},
                    RawBytes<double>({2.5, -1})),
              ElementsAre(-2.5f, 1.0f));
}

TEST(InputTransformTest, AnEmptySampleIsFine) {
  const InputTransformSpec spec{1, {0, 0}, {1, 1}};
  EXPECT_TRUE(Apply(spec, NpyDtype::kUint8, {2, 0}, "").empty());
}

TEST(InputTransformTest, MeanMustMatchTheChannelsNamingTheInput) {
  const absl::Status s = CreateError({0, {0.1, 0.2, 0.3}, {1, 1, 1}}, {2, 5});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("3 values"));
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("input 1 (/data/img.npy) has 2 channels"));
  const absl::Status scalar = CreateError({0, {0.1}, {1}}, {});
  EXPECT_EQ(scalar.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(scalar.message()), HasSubstr("scalar samples"));
  // Scale alone needs no channels.
  EXPECT_TRUE(CreateError({0.5, {}, {}}, {}).ok());
}

TEST(InputTransformTest, BadValuesNameTheField) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const struct {
    InputTransformSpec spec;
    const char* message;
  } cases[] = {
      {{0, {0.5, 0.5}, {0.5, 0}}, "transform.std[1] must be finite and > 0"},
      {{0, {0.5}, {-1}}, "transform.std[0] must be finite and > 0"},
      {{0, {0.5}, {inf}}, "transform.std[0]"},
      {{0, {nan}, {1}}, "transform.mean[0] must be finite"},
      {{inf, {}, {}}, "transform.scale must be finite"},
      {{0, {0.5, 0.5}, {1}}, "transform.mean has 2 values but transform.std"},
      {{0, {}, {1}}, "transform.mean has 0 values but transform.std has 1"},
  };
  for (const auto& c : cases) {
    const absl::Status s = CreateError(c.spec, {2, 3});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.message));
  }
}

}  // namespace
}  // namespace ringleader
