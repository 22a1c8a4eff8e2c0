#include "common/shard_pattern.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ShardPatternTest, ZeroPaddedRange) {
  auto names = ExpandShardPattern("/d/train-{000008..000011}.tar");
  ASSERT_TRUE(names.ok());
  EXPECT_THAT(*names,
              ElementsAre("/d/train-000008.tar", "/d/train-000009.tar",
                          "/d/train-000010.tar", "/d/train-000011.tar"));
}

TEST(ShardPatternTest, AlternativesAndProducts) {
  auto names = ExpandShardPattern("/{a,b}/s{1..2}.tar");
  ASSERT_TRUE(names.ok());
  EXPECT_THAT(*names,
              ElementsAre("/a/s1.tar", "/a/s2.tar", "/b/s1.tar", "/b/s2.tar"));
  EXPECT_THAT(*ExpandShardPattern("/plain.tar"), ElementsAre("/plain.tar"));
}

TEST(ShardPatternTest, BadPatternsAreInvalid) {
  for (const char* bad : {"/x{1..", "/x}1{", "/x{{1..2}}", "/x{5..1}",
                          "/x{a..b}", "/x{0..100000}"}) {
    auto names = ExpandShardPattern(bad);
    EXPECT_EQ(names.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_THAT(ExpandShardPattern("/{0..999}{0..999}").status().message(),
              HasSubstr("more than 100000"));
}

}  // namespace
}  // namespace ringleader
