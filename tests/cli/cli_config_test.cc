#include "cli/cli_config.h"

#include "gtest/gtest.h"

namespace ringleader::cli {
namespace {

TEST(DefaultCoordinatorTest, EnvironmentElseBuiltIn) {
  EXPECT_EQ(DefaultCoordinator(nullptr), "127.0.0.1:7070");
  EXPECT_EQ(DefaultCoordinator(""), "127.0.0.1:7070");
  EXPECT_EQ(DefaultCoordinator("coord:9000"), "coord:9000");
}

TEST(ParseOutputFormatTest, TextOrJson) {
  EXPECT_EQ(*ParseOutputFormat("text"), OutputFormat::kText);
  EXPECT_EQ(*ParseOutputFormat("json"), OutputFormat::kJson);
  EXPECT_FALSE(ParseOutputFormat("yaml").ok());
}

TEST(ParseTimeoutTest, DurationsAndSeconds) {
  EXPECT_EQ(*ParseTimeout("10s"), absl::Seconds(10));
  EXPECT_EQ(*ParseTimeout("500ms"), absl::Milliseconds(500));
  EXPECT_EQ(*ParseTimeout("1m30s"), absl::Seconds(90));
  EXPECT_EQ(*ParseTimeout("2.5"), absl::Milliseconds(2500));
}

TEST(ParseTimeoutTest, RejectsNonPositiveAndJunk) {
  for (const char* bad : {"0", "0s", "-1s", "soon", "", "inf", "nan"}) {
    absl::StatusOr<absl::Duration> d = ParseTimeout(bad);
    EXPECT_FALSE(d.ok()) << bad;
    if (!d.ok()) {
      EXPECT_NE(d.status().message().find("--timeout"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace ringleader::cli
