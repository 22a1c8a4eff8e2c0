#include "common/port_file.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace ringleader {
namespace {

std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

TEST(PortFileTest, WritesThePortAndLeavesNoTemporary) {
  const std::string path = TempDir() + "/port";
  ASSERT_TRUE(WritePortFile(path, 40123).ok());
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  EXPECT_EQ(text.str(), "40123\n");
  EXPECT_FALSE(std::ifstream(path + ".tmp").good());
}

TEST(PortFileTest, NoPathWritesNothingAndABadOneIsNamed) {
  EXPECT_TRUE(WritePortFile("", 1).ok());
  const absl::Status s = WritePortFile(TempDir() + "/missing/dir/port", 1);
  EXPECT_TRUE(absl::IsInternal(s)) << s;
  EXPECT_NE(s.message().find("missing/dir/port"), std::string::npos) << s;
}

}  // namespace
}  // namespace ringleader
