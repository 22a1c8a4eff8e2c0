#include "common/port_file.h"

#include <cstdlib>
#include <filesystem>
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
  const std::string dir = TempDir() + "/port_dir";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/port";
  ASSERT_TRUE(WritePortFile(path, 40123).ok());
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  EXPECT_EQ(text.str(), "40123\n");
  // The port file alone: no temporary file of any name is left.
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(e.path().filename(), "port");
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

TEST(PortFileTest, NoPathWritesNothingAndABadOneIsNamed) {
  EXPECT_TRUE(WritePortFile("", 1).ok());
  const absl::Status s = WritePortFile(TempDir() + "/missing/dir/port", 1);
  EXPECT_TRUE(absl::IsInternal(s)) << s;
  EXPECT_NE(s.message().find("missing/dir/port"), std::string::npos) << s;
}

}  // namespace
}  // namespace ringleader
