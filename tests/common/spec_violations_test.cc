#include "common/spec_violations.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> Lines(const absl::Status& s) {
  return absl::StrSplit(s.message(), '\n');
}

TEST(InvalidTest, NamesFieldRuleAndValue) {
  const absl::Status s = Invalid("epochs", "must be in [1, 9]", "-3");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "invalid job spec: epochs must be in [1, 9] (got -3)");
}

TEST(SpecViolationsTest, NothingRecordedIsOk) {
  SpecViolations v;
  EXPECT_TRUE(v.Check(absl::OkStatus()));
  EXPECT_TRUE(v.empty());
  EXPECT_TRUE(v.ToStatus().ok());
}

TEST(SpecViolationsTest, OneLinePerViolationInOrder) {
  SpecViolations v;
  EXPECT_FALSE(v.Check(Invalid("name", "must be set", "\"\"")));
  EXPECT_TRUE(v.Check(absl::OkStatus()));
  EXPECT_FALSE(v.Check(Invalid("epochs", "must be > 0", "-3")));
  const absl::Status s = v.ToStatus();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Lines(s),
              ElementsAre("invalid job spec: name must be set (got \"\")",
                          "invalid job spec: epochs must be > 0 (got -3)"));
}

TEST(SpecViolationsTest, LinesPastTheLineLimitAreCounted) {
  SpecViolations v;
  for (int i = 0; i < 100; ++i) {
    v.Check(Invalid(absl::StrCat("f", i), "is bad", "x"));
  }
  const std::vector<std::string> lines = Lines(v.ToStatus());
  ASSERT_EQ(lines.size(), SpecViolations::kMaxLines + 1);
  EXPECT_EQ(lines[SpecViolations::kMaxLines - 1],
            "invalid job spec: f23 is bad (got x)");
  EXPECT_EQ(lines.back(), "invalid job spec: ... and 76 more");
}

TEST(SpecViolationsTest, LinesPastTheByteBudgetAreCounted) {
  SpecViolations v;
  const std::string rule(1000, 'r');
  for (int i = 0; i < 10; ++i) v.Check(Invalid("f", rule, "x"));
  const absl::Status s = v.ToStatus();
  const std::vector<std::string> lines = Lines(s);
  // Lines of 1028 bytes: a fourth would pass 4096, so three are listed.
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines.back(), "invalid job spec: ... and 7 more");
  EXPECT_LE(s.message().size(), SpecViolations::kMaxBytes + 40);
}

}  // namespace
}  // namespace ringleader
