#include "worker/device/device.h"

#include "gtest/gtest.h"

namespace ringleader {
namespace {

TEST(ParseDeviceTest, CpuAndCudaOrdinals) {
  absl::StatusOr<Device> cpu = ParseDevice("cpu");
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_FALSE(cpu->cuda);
  absl::StatusOr<Device> gpu = ParseDevice("cuda:3");
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  EXPECT_TRUE(gpu->cuda);
  EXPECT_EQ(gpu->index, 3);
}

TEST(ParseDeviceTest, RejectsEverythingElseNamingTheForms) {
  for (const char* bad : {"", "gpu", "cuda", "cuda:", "cuda:-1", "cuda:x",
                          "cuda:1x", "cuda:99999", "CPU", " cpu"}) {
    absl::StatusOr<Device> d = ParseDevice(bad);
    ASSERT_FALSE(d.ok()) << bad;
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(d.status().message().find("cpu nor cuda:N"), std::string::npos)
        << d.status();
  }
}

}  // namespace
}  // namespace ringleader
