#include "bench/crosshost/netdelay/netdelay_options.h"

#include <chrono>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

using ::testing::HasSubstr;

const std::vector<std::string> kNoArgs = {"netdelay"};

TEST(NetdelayOptionsTest, AcceptsValidFlags) {
  auto o = MakeNetdelayOptions(3, 2.5, 500, "/tmp/ready", kNoArgs);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->queue, 3);
  EXPECT_EQ(o->delay, std::chrono::microseconds(2500));
  EXPECT_EQ(o->max_packets, 500u);
  EXPECT_EQ(o->ready_file, "/tmp/ready");
}

TEST(NetdelayOptionsTest, AcceptsTheBoundsOfEachRange) {
  EXPECT_TRUE(MakeNetdelayOptions(0, 0, 1, "", kNoArgs).ok());
  EXPECT_TRUE(
      MakeNetdelayOptions(65535, kMaxDelayMs, kMaxHeldPackets, "", kNoArgs)
          .ok());
}

TEST(NetdelayOptionsTest, RefusesAQueueOutOfRange) {
  for (int64_t q : {int64_t{-1}, int64_t{65536}, int64_t{1} << 40}) {
    auto o = MakeNetdelayOptions(q, 1, 10, "", kNoArgs);
    ASSERT_FALSE(o.ok()) << q;
    EXPECT_THAT(std::string(o.status().message()), HasSubstr("--queue"));
  }
}

TEST(NetdelayOptionsTest, RefusesNegativeHugeAndNonFiniteDelays) {
  for (double d :
       {-1.0, kMaxDelayMs + 1, std::numeric_limits<double>::infinity(),
        std::numeric_limits<double>::quiet_NaN()}) {
    auto o = MakeNetdelayOptions(0, d, 10, "", kNoArgs);
    ASSERT_FALSE(o.ok()) << d;
    EXPECT_THAT(std::string(o.status().message()), HasSubstr("--delay_ms"));
  }
}

TEST(NetdelayOptionsTest, RefusesAnEmptyOrHugeLine) {
  for (int64_t n : {int64_t{0}, int64_t{-5}, kMaxHeldPackets + 1}) {
    auto o = MakeNetdelayOptions(0, 1, n, "", kNoArgs);
    ASSERT_FALSE(o.ok()) << n;
    EXPECT_THAT(std::string(o.status().message()), HasSubstr("--max_packets"));
  }
}

TEST(NetdelayOptionsTest, RefusesPositionalArguments) {
  auto o = MakeNetdelayOptions(0, 1, 10, "", {"netdelay", "20"});
  ASSERT_FALSE(o.ok());
  EXPECT_THAT(std::string(o.status().message()), HasSubstr("'20'"));
}

}  // namespace
}  // namespace ringleader
